// The annealing of a whole move set (phases/anneal.ts): from the exact greedy's k moves it finds
// a set of at most k moves with a lower objective, legal step by step, and the same one every time.
import { describe, expect, it } from 'vitest';
import { firstRejection } from '../../src/planner/constraints/index.js';
import { PlanContext } from '../../src/planner/context.js';
import { annealAggregate } from '../../src/planner/phases/anneal.js';
import { BestMoveSearch } from '../../src/planner/phases/best-move.js';
import { planReplay, type SpreadStep } from '../../src/planner/phases/improve.js';
import { spreadFloor } from '../../src/planner/phases/spread.js';
import { ClusterState } from '../../src/planner/state.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { policyWith } from '../fixtures/state.js';

const policy = policyWith({
  minGain: 0,
  migrationCostPerSecond: 0,
  spread: { targetImbalance: 0 },
  budget: { maxMoves: 40 },
});

/** The greedy's k moves on a synthetic cluster with no server groups, applied to the state. */
function greedyPlan(k: number): { ctx: PlanContext; seq: SpreadStep[] } {
  const snap = synthesizeSnapshot({ hosts: 30, servers: 1500, groups: 0, seed: 3 });
  const state = new ClusterState(snap, policy);
  const ctx = new PlanContext(state, policy);
  const search = new BestMoveSearch(ctx, 0);
  const seq: SpreadStep[] = [];
  for (let i = 0; i < k; i++) {
    const m = search.best(spreadFloor(0));
    if (m === null) break;
    search.touched(state.at[m.server]!, m.to);
    state.apply(m.server, m.to);
    seq.push({ server: m.server, to: m.to });
  }
  return { ctx, seq };
}

function run(k: number): {
  before: number;
  after: number;
  seq: SpreadStep[];
  changed: boolean;
  ctx: PlanContext;
} {
  const { ctx, seq } = greedyPlan(k);
  const { state } = ctx;
  const n = state.aggregates[0]!.counted.length;
  const objective = (agg: number): number => state.imbalance(agg) * n;
  const replay = planReplay(state, seq, 0, { evaluations: 0 });
  const before = state.imbalance(0);
  const changed = annealAggregate(ctx, 0, seq, { evaluations: 0 }, 100_000, objective, replay);
  return { before, after: state.imbalance(0), seq, changed, ctx };
}

describe('annealing of the move set', () => {
  it('finds k moves that balance better than the greedy k, each step legal, each server once', () => {
    const r = run(40);
    expect(r.changed).toBe(true);
    expect(r.after).toBeLessThan(r.before - 1e-6);
    expect(r.seq.length).toBeLessThanOrEqual(40);
    expect(new Set(r.seq.map((m) => m.server)).size).toBe(r.seq.length);
    // The state is the plan replayed from the snapshot: check every step again from scratch.
    const { state } = r.ctx;
    state.undo(state.applied.length);
    for (const m of r.seq) {
      expect(firstRejection(state, m.server, m.to)).toBeNull();
      state.apply(m.server, m.to);
    }
    expect(state.imbalance(0)).toBeCloseTo(r.after, 12);
  });

  it('gives the same moves every time (a seeded generator)', () => {
    expect(run(25).seq).toEqual(run(25).seq);
  });
});
