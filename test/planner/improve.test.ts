// The improvement stage after the spread greedy: never worse than the greedy alone, finds swaps
// the greedy cannot see, and stays deterministic.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { PlanContext } from '../../src/planner/context.js';
import { planSnapshot } from '../../src/planner/index.js';
import { bestSwap } from '../../src/planner/phases/improve.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { build, shape } from '../fixtures/random-cluster.js';
import { ids, policyWith, stateOf } from '../fixtures/state.js';

const balanceOnly = (timeLimitMs: number, maxMoves = 50) =>
  policyWith({
    minGain: 0,
    migrationCostPerSecond: 0,
    spread: { targetImbalance: 0 },
    budget: { maxMoves },
    planner: { timeLimitMs },
  });

describe('improvement stage', () => {
  it('swaps two servers when no single move helps', () => {
    // a carries 8 cores of load in two 4s, b 6 in two 3s: any single move makes it worse,
    // exchanging a 4 for a 3 balances both at 7.
    const snap = cluster(
      [host('a'), host('b')],
      [
        server('a1', 'a', { vcpus: 1, cpu: 4, memMB: 4096 }),
        server('a2', 'a', { vcpus: 1, cpu: 4, memMB: 4096 }),
        server('b1', 'b', { vcpus: 1, cpu: 3, memMB: 3072 }),
        server('b2', 'b', { vcpus: 1, cpu: 3, memMB: 3072 }),
      ],
    );
    expect(planSnapshot(snap, balanceOnly(0)).aggregates[0]!.moves).toEqual([]);
    const plan = planSnapshot(snap, balanceOnly(2000));
    expect(checkPlan(snap, plan, { dimensions: balanceOnly(0).dimensions }).violations).toEqual([]);
    const agg = plan.aggregates[0]!;
    // A declared exchange: each half names the other, in waves of their own.
    expect(agg.moves.map((m) => [m.exchangeWith, m.reason.slice(0, 20)])).toEqual([
      [2, 'exchange with step 2'],
      [1, 'exchange with step 1'],
    ]);
    expect(agg.moves.map((m) => m.wave)).toEqual([1, 2]);
    expect(agg.after.imbalance).toBeCloseTo(0, 9);
  });

  it('tries exchanges between hosts hot in one dimension and cool in another, which summed heat leaves in the middle', () => {
    // 14 hosts of 16 cores and 64 GiB. Six at 60% cpu and memory, six at 40%, their servers
    // pinned (SR-IOV). x runs at cpu 90% and memory 10%, y the other way round: each sums to no
    // heat, so the six hottest and six coolest by summed heat leave both out. Per dimension x
    // is the hottest in cpu and y the coolest, and trading x's cpu-heavy server for y's
    // memory-heavy one brings both to about 50% in each.
    const pinned = { sriov: true };
    const hosts = [host('x'), host('y')];
    const servers = [
      server('xc', 'x', { cpu: 6.4, memMB: 1024 }),
      server('x-rest', 'x', { ...pinned, cpu: 8, memMB: 5530 }),
      server('yc', 'y', { cpu: 0.2, memMB: 26214 }),
      server('y-rest', 'y', { ...pinned, cpu: 1.4, memMB: 32768 }),
    ];
    for (let i = 1; i <= 6; i++) {
      hosts.push(host(`hot-${i}`), host(`cool-${i}`));
      servers.push(server(`hot-${i}-s`, `hot-${i}`, { ...pinned, cpu: 9.6, memMB: 39322 }));
      servers.push(server(`cool-${i}-s`, `cool-${i}`, { ...pinned, cpu: 6.4, memMB: 26214 }));
    }
    const policy = policyWith();
    const state = stateOf(cluster(hosts, servers), policy);
    const { s } = ids(state);
    const swap = bestSwap(new PlanContext(state, policy), 0, 1e-9, { evaluations: 0 });
    expect(swap).not.toBeNull();
    expect(new Set([swap!.first.server, swap!.second.server])).toEqual(new Set([s('xc'), s('yc')]));
    expect(swap!.net).toBeGreaterThan(0);
  });

  it('never ends above the greedy alone, and every plan passes the checker', () => {
    fc.assert(
      fc.property(shape, fc.integer({ min: 1, max: 12 }), (s, budget) => {
        const snap = build(s, true);
        const greedy = planSnapshot(snap, balanceOnly(0, budget));
        const improved = planSnapshot(snap, balanceOnly(50, budget));
        const check = checkPlan(snap, improved, {
          dimensions: improved.aggregates.length ? balanceOnly(0).dimensions : [],
          maxMoves: budget,
        });
        expect(check.violations).toEqual([]);
        improved.aggregates.forEach((a, i) => {
          expect(a.after.imbalance).toBeLessThanOrEqual(greedy.aggregates[i]!.after.imbalance + 1e-6);
        });
      }),
      { numRuns: 200, seed: 9 },
    );
  });

  it('gives the same plan every time (a work budget, not a clock)', () => {
    fc.assert(
      fc.property(shape, (s) => {
        const snap = build(s, true);
        expect(JSON.stringify(planSnapshot(snap, balanceOnly(20)))).toBe(
          JSON.stringify(planSnapshot(snap, balanceOnly(20))),
        );
      }),
      { numRuns: 50, seed: 4 },
    );
  });
});
