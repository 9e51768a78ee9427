// The gap's lower bound: never above what a plan of as many moves reaches, and it tightens as
// the number of moves falls.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planSnapshot } from '../../src/planner/index.js';
import { imbalanceLowerBounds } from '../../src/planner/objectives/lower-bound.js';
import { ClusterState } from '../../src/planner/state.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { build, shape } from '../fixtures/random-cluster.js';
import { policyWith } from '../fixtures/state.js';

describe('imbalance lower bound', () => {
  it('is never above the imbalance the plan reaches with the same number of moves', () => {
    fc.assert(
      fc.property(shape, fc.integer({ min: 0, max: 30 }), (s, budget) => {
        const snap = build(s, true);
        const policy = policyWith({ minGain: 0, migrationCostPerSecond: 0, budget: { maxMoves: budget } });
        const plan = planSnapshot(snap, policy);
        for (const agg of plan.aggregates) {
          const bound = plan.stats[`imbalanceLowerBound:${agg.name}`];
          expect(bound).toBeDefined();
          expect(bound!).toBeLessThanOrEqual(agg.after.imbalance + 1e-9);
          if (agg.moves.length === 0) expect(bound!).toBeCloseTo(agg.before.imbalance, 5);
        }
      }),
      { numRuns: 200, seed: 3 },
    );
  });

  it('falls as moves are allowed, and says something for few moves on a real-sized cluster', () => {
    const snap = synthesizeSnapshot({ hosts: 60, servers: 1500, groups: 0, seed: 2 });
    const state = new ClusterState(snap, policyWith());
    const bound = imbalanceLowerBounds(state);
    const start = state.imbalance(0);
    const values = [0, 1, 5, 20, 100].map((k) => bound(0, k));
    expect(values[0]).toBeCloseTo(start, 6);
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeLessThanOrEqual(values[i - 1]! + 1e-12);
    expect(values[2]!).toBeGreaterThan(start / 2);
  });
});
