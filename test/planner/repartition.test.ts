// The improvement stage's re-partition: the servers a plan sends to two hosts, shared out again
// between them, each still moved once; only a split that fits both hosts and replays is kept.
import { describe, expect, it } from 'vitest';
import { firstRejection } from '../../src/planner/constraints/index.js';
import { PlanContext } from '../../src/planner/context.js';
import { planReplay, type SpreadStep } from '../../src/planner/phases/improve.js';
import { repartitionDestinations } from '../../src/planner/phases/repartition.js';
import { ClusterState } from '../../src/planner/state.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { policyWith } from '../fixtures/state.js';

/** Host a runs hot with p (6 cores) and q (2); x is at 4, y idle. */
function world(yVcpus: number) {
  const snap = cluster(
    [
      host('a', { vcpus: 16, cpuLoad: 14, memLoad: 0 }),
      host('x', { vcpus: 16, cpuLoad: 4, memLoad: 0 }),
      host('y', { vcpus: yVcpus, cpuLoad: 0, memLoad: 0 }),
    ],
    [server('p', 'a', { vcpus: 4, cpu: 6, memMB: 0 }), server('q', 'a', { vcpus: 2, cpu: 2, memMB: 0 })],
  );
  // Balance on CPU alone keeps the numbers readable.
  const policy = policyWith({
    dimensions: policyWith().dimensions.map((d) => ({ ...d, weight: d.name === 'cpu' ? 1 : 0 })),
  });
  const state = new ClusterState(snap, policy);
  const ctx = new PlanContext(state, policy);
  const id = (name: string) => state.serverById.get(name)!;
  const at = (name: string) => state.hostByName.get(name)!;
  // The plan to improve: p to x, q to y (a at 6, x at 10, y at 2).
  const seq: SpreadStep[] = [
    { server: id('p'), to: at('x') },
    { server: id('q'), to: at('y') },
  ];
  const replay = planReplay(state, seq, 0, { evaluations: 0 });
  const objective = (agg: number) => state.imbalance(agg) * state.aggregates[agg]!.counted.length;
  expect(replay(-1)).toBe(true);
  return { state, ctx, seq, replay, objective, id, at };
}

describe('re-partition of two destinations', () => {
  it('sends p to y and q to x: every host at 6 cores, still two moves', () => {
    const w = world(16);
    const before = w.state.imbalance(0);
    const meter = { evaluations: 0 };
    expect(repartitionDestinations(w.ctx, w.seq, meter, 1e6, w.objective, w.replay)).toBe(true);
    expect(w.seq).toEqual([
      { server: w.id('p'), to: w.at('y') },
      { server: w.id('q'), to: w.at('x') },
    ]);
    expect(w.state.applied).toHaveLength(2);
    expect(before).toBeGreaterThan(0.1);
    expect(w.state.imbalance(0)).toBeCloseTo(0, 9);
    expect(meter.evaluations).toBeGreaterThan(0);
  });

  it('keeps the plan when the better split does not fit Placement', () => {
    // y has 2 vCPUs: q fits there, p (4) does not.
    const w = world(2);
    const plan = w.seq.map((m) => ({ ...m }));
    const before = w.state.imbalance(0);
    expect(repartitionDestinations(w.ctx, w.seq, { evaluations: 0 }, 1e6, w.objective, w.replay)).toBe(false);
    expect(w.seq).toEqual(plan);
    expect(w.state.imbalance(0)).toBe(before);
  });

  it('does nothing once the work budget is spent', () => {
    const w = world(16);
    const plan = w.seq.map((m) => ({ ...m }));
    expect(repartitionDestinations(w.ctx, w.seq, { evaluations: 10 }, 10, w.objective, w.replay)).toBe(false);
    expect(w.seq).toEqual(plan);
  });

  it('never sends a server back to its own host, which would be no move at all', () => {
    // r came from y: the best split would send it home, which a plan cannot call a move; among
    // the splits that keep it away, p to y and q to x is best.
    const snap = cluster(
      [
        host('a', { vcpus: 16, cpuLoad: 11, memLoad: 0 }),
        host('x', { vcpus: 16, cpuLoad: 0, memLoad: 0 }),
        host('y', { vcpus: 16, cpuLoad: 6, memLoad: 0 }),
      ],
      [
        server('p', 'a', { vcpus: 4, cpu: 6, memMB: 0 }),
        server('q', 'a', { vcpus: 1, cpu: 1, memMB: 0 }),
        server('r', 'y', { vcpus: 2, cpu: 4, memMB: 0 }),
      ],
    );
    const policy = policyWith({
      dimensions: policyWith().dimensions.map((d) => ({ ...d, weight: d.name === 'cpu' ? 1 : 0 })),
    });
    const state = new ClusterState(snap, policy);
    const id = (name: string) => state.serverById.get(name)!;
    const at = (name: string) => state.hostByName.get(name)!;
    const seq: SpreadStep[] = [
      { server: id('p'), to: at('x') },
      { server: id('r'), to: at('x') },
      { server: id('q'), to: at('y') },
    ];
    const replay = (skip: number): boolean => {
      state.undo(state.applied.length);
      for (let j = 0; j < seq.length; j++) {
        if (j === skip) continue;
        if (firstRejection(state, seq[j]!.server, seq[j]!.to) !== null) return false;
        state.apply(seq[j]!.server, seq[j]!.to);
      }
      return true;
    };
    expect(replay(-1)).toBe(true);
    const objective = (agg: number) => state.imbalance(agg) * 3;
    const ctx = new PlanContext(state, policy);
    expect(repartitionDestinations(ctx, seq, { evaluations: 0 }, 1e6, objective, replay)).toBe(true);
    expect(seq).toEqual([
      { server: id('p'), to: at('y') },
      { server: id('r'), to: at('x') },
      { server: id('q'), to: at('x') },
    ]);
  });
});
