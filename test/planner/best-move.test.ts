// The exact best move: on random clusters the indexed search finds the same net gain as trying
// every movable server on every legal destination, and a spread plan with minGain 0 stops only
// when no legal move lowers the objective.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/model/snapshot.js';
import { firstRejection } from '../../src/planner/constraints/index.js';
import { PlanContext } from '../../src/planner/context.js';
import { planSnapshot } from '../../src/planner/index.js';
import { scoreMove } from '../../src/planner/objectives/move-score.js';
import { BestMoveSearch } from '../../src/planner/phases/best-move.js';
import { evacuate } from '../../src/planner/phases/evacuate.js';
import { repair } from '../../src/planner/phases/repair.js';
import { spreadFloor } from '../../src/planner/phases/spread.js';
import { ClusterState } from '../../src/planner/state.js';
import { thresholdOfLevel } from '../../src/policy/threshold.js';
import type { Policy } from '../../src/policy/types.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { build, shape } from '../fixtures/random-cluster.js';
import { policyWith } from '../fixtures/state.js';

/** Every movable server × every host of its aggregate, through the constraints and the weigher. */
function bruteBest(ctx: PlanContext, agg: number, floor: number): number | null {
  const { state, policy } = ctx;
  let best: number | null = null;
  const current = state.imbalance(agg);
  for (const from of state.aggregates[agg]!.hosts) {
    for (const s of state.on[from]!) {
      if (!ctx.movable(s)) continue;
      for (const to of state.aggregates[agg]!.hosts) {
        if (firstRejection(state, s, to) !== null) continue;
        const net = scoreMove(state, policy, s, to, current).net;
        if (net >= floor && (best === null || net > best)) best = net;
      }
    }
  }
  return best;
}

/** Compares the search with brute force over a few greedy steps of every aggregate. */
function compareSteps(snap: Snapshot, policy: Policy, steps: number): number {
  const state = new ClusterState(snap, policy);
  const ctx = new PlanContext(state, policy);
  evacuate(ctx);
  repair(ctx);
  const floor = spreadFloor(policy.minGain);
  let compared = 0;
  for (const agg of state.aggregates) {
    const search = new BestMoveSearch(ctx, agg.index);
    for (let i = 0; i < steps; i++) {
      const found = search.best(floor);
      const brute = bruteBest(ctx, agg.index, floor);
      if (brute === null) {
        expect(found).toBeNull();
        break;
      }
      expect(found).not.toBeNull();
      expect(found!.net).toBeCloseTo(brute, 9);
      compared++;
      search.touched(state.at[found!.server]!, found!.to);
      ctx.record(found!.server, found!.to, 'spread', 'test');
    }
  }
  return compared;
}

describe('exact best move', () => {
  it('matches brute force on random clusters (zones, capacity shapes, every group policy)', () => {
    let compared = 0;
    fc.assert(
      fc.property(shape, fc.constantFrom(0, 0.001), (s, costPerSecond) => {
        // Level 5: no threshold beyond minGain and the per-second cost, whose bars are checked here.
        const policy = policyWith({
          minGain: 0,
          migrationCostPerSecond: costPerSecond,
          threshold: thresholdOfLevel(5),
        });
        compared += compareSteps(build(s, true), policy, 6);
      }),
      { numRuns: 200, seed: 11 },
    );
    expect(compared).toBeGreaterThan(40);
  });

  it('matches brute force on a synthetic cluster with groups over several steps', () => {
    const snap = synthesizeSnapshot({ hosts: 30, servers: 500, groups: 20, seed: 3, aggregates: 2 });
    expect(
      compareSteps(snap, policyWith({ minGain: 0, threshold: thresholdOfLevel(5) }), 25),
    ).toBeGreaterThan(30);
  });

  it('with minGain 0, spread stops only when no legal move lowers the objective', () => {
    fc.assert(
      fc.property(shape, (s) => {
        const snap = build(s, false);
        const policy = policyWith({
          minGain: 0,
          migrationCostPerSecond: 0,
          spread: { targetImbalance: 0 },
          budget: { maxMoves: 10_000 },
          threshold: thresholdOfLevel(5),
        });
        const plan = planSnapshot(snap, policy);
        const state = new ClusterState(snap, policy);
        const ctx = new PlanContext(state, policy);
        for (const a of plan.aggregates)
          for (const m of a.moves) state.apply(state.serverById.get(m.server)!, state.hostByName.get(m.to)!);
        // Optional moves go one way: the moves left to find are those the one-way rule allows.
        state.oneWay = true;
        for (const agg of state.aggregates) expect(bruteBest(ctx, agg.index, spreadFloor(0))).toBeNull();
      }),
      { numRuns: 150, seed: 5 },
    );
  });
});
