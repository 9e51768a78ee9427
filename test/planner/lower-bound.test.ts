// The gap's lower bound: never above what a plan of as many moves reaches, and it tightens as
// the number of moves falls.
import { resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planSnapshot } from '../../src/planner/index.js';
import { imbalanceLowerBounds } from '../../src/planner/objectives/lower-bound.js';
import { ClusterState } from '../../src/planner/state.js';
import { importBitbrains } from '../../src/snapshot/import-bitbrains.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { loadBitbrains } from '../../src/traces/bitbrains.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { build, shape } from '../fixtures/random-cluster.js';
import { policyWith } from '../fixtures/state.js';

/** Every move of a movable server to another counted host of its zone, capacity or not. */
function movesWithinZones(state: ClusterState, agg: number): (readonly [number, number])[] {
  const { hosts, counted } = state.aggregates[agg]!;
  return hosts
    .flatMap((h) => [...state.on[h]!])
    .filter((v) => state.servers[v]!.immovable === null)
    .flatMap((v) =>
      counted
        .filter((h) => h !== state.at[v] && state.hosts[h]!.az === state.hosts[state.at[v]!]!.az)
        .map((h) => [v, h] as const),
    );
}

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

  it('is left out on request (the control loop), and the plan is otherwise the same', () => {
    fc.assert(
      fc.property(shape, fc.integer({ min: 0, max: 30 }), (s, budget) => {
        const snap = build(s, true);
        const policy = policyWith({ minGain: 0, migrationCostPerSecond: 0, budget: { maxMoves: budget } });
        const withBound = planSnapshot(snap, policy);
        const without = planSnapshot(snap, policy, { lowerBound: false });
        expect(Object.keys(without.stats).filter((k) => k.startsWith('imbalanceLowerBound:'))).toEqual([]);
        const { stats: a, ...restA } = withBound;
        const { stats: b, ...restB } = without;
        expect(restB).toEqual(restA);
        const kept = Object.fromEntries(
          Object.entries(a).filter(([k]) => !k.startsWith('imbalanceLowerBound:')),
        );
        expect(b).toEqual(kept);
      }),
      { numRuns: 50, seed: 5 },
    );
  });

  it('is never above the best one or two moves found by trying them all, within the zone, legal or not', () => {
    fc.assert(
      fc.property(shape, (s) => {
        const snap = build({ ...s, servers: s.servers.slice(0, 10) }, true);
        const state = new ClusterState(snap, policyWith());
        const bound = imbalanceLowerBounds(state);
        state.aggregates.forEach((agg) => {
          const moves = movesWithinZones(state, agg.index);
          let best1 = state.imbalance(agg.index);
          let best2 = best1;
          for (const [v, h] of moves) {
            state.apply(v, h);
            best1 = Math.min(best1, state.imbalance(agg.index));
            for (const [w, g] of moves) {
              if (w === v || g === state.at[w]) continue;
              state.apply(w, g);
              best2 = Math.min(best2, state.imbalance(agg.index));
              state.undo(1);
            }
            state.undo(1);
          }
          expect(bound(agg.index, 1)).toBeLessThanOrEqual(best1 + 1e-9);
          expect(bound(agg.index, 2)).toBeLessThanOrEqual(Math.min(best1, best2) + 1e-9);
        });
      }),
      { numRuns: 150, seed: 9 },
    );
  });

  it('says something for 50 moves on 100 hosts (moves per host are counted)', () => {
    const snap = synthesizeSnapshot({ hosts: 100, servers: 3000, groups: 60, seed: 1 });
    const state = new ClusterState(snap, policyWith());
    expect(imbalanceLowerBounds(state)(0, 50)).toBeGreaterThan(0.005);
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

  it('is never above the best three moves found by trying them all, within the zone, idle servers among them', () => {
    fc.assert(
      fc.property(shape, fc.integer({ min: 2, max: 5 }), (s, every) => {
        const snap = build({ ...s, servers: s.servers.slice(0, 6) }, true);
        snap.servers.forEach((v, i) => {
          if (i % every === 1) v.load = { cpu: 0, memoryMB: 0 };
        });
        const state = new ClusterState(snap, policyWith());
        const bound = imbalanceLowerBounds(state);
        state.aggregates.forEach((agg) => {
          const moves = movesWithinZones(state, agg.index);
          const homes = new Map(moves.map(([v]) => [v, state.at[v]!]));
          // best[k]: the least imbalance of k moves or fewer, each server moved at most once.
          const best = [
            state.imbalance(agg.index),
            Number.POSITIVE_INFINITY,
            Number.POSITIVE_INFINITY,
            Infinity,
          ];
          const search = (depth: number, from: number): void => {
            for (let i = from; i < moves.length; i++) {
              const [v, h] = moves[i]!;
              if (state.at[v] !== homes.get(v)) continue;
              state.apply(v, h);
              best[depth] = Math.min(best[depth]!, state.imbalance(agg.index));
              if (depth < 3) search(depth + 1, i + 1);
              state.undo(1);
            }
          };
          search(1, 0);
          for (let k = 1; k <= 3; k++) {
            const reachable = Math.min(...best.slice(0, k + 1));
            expect(bound(agg.index, k)).toBeLessThanOrEqual(reachable + 1e-9);
          }
        });
      }),
      { numRuns: 150, seed: 21 },
    );
  });

  it('stays below the plans on the shipped Bitbrains sample, idle servers and all', async () => {
    // Idle servers cost nothing anywhere; the coupled relaxation's sweep must not let them decide
    // where the loaded servers go. It once did, and claimed 0.0054 where 10 moves reached 0.0047.
    const series = await loadBitbrains(
      resolve(import.meta.dirname, '../../data/bitbrains-sample/hourly-sample.csv.gz'),
    );
    const snap = importBitbrains(series, { seed: 1 });
    for (const budget of [10, 50, 200]) {
      const plan = planSnapshot(
        snap,
        policyWith({
          minGain: 0,
          migrationCostPerSecond: 0,
          spread: { targetImbalance: 0 },
          budget: { maxMoves: budget },
        }),
      );
      for (const agg of plan.aggregates) {
        expect(plan.stats[`imbalanceLowerBound:${agg.name}`]!).toBeLessThanOrEqual(
          agg.after.imbalance + 1e-9,
        );
      }
    }
  });

  it("counts that one move carries all of a server's dimensions at once", () => {
    // Host a is full in CPU and memory; one server there holds half its CPU, another half its
    // memory. One move balances one dimension, never both: 0.25 at best. Each dimension alone
    // could be balanced by one move, which is all the per-dimension relaxations can see.
    const snap = cluster(
      [
        host('a', { vcpus: 16, ramMB: 16384, cpuLoad: 16, memLoad: 16384 }),
        host('b', { vcpus: 16, ramMB: 16384, cpuLoad: 0, memLoad: 0 }),
      ],
      [
        server('cpu-heavy', 'a', { vcpus: 1, ramMB: 1024, cpu: 8, memMB: 0 }),
        server('mem-heavy', 'a', { vcpus: 1, ramMB: 1024, cpu: 0, memMB: 8192 }),
      ],
    );
    const state = new ClusterState(snap, policyWith());
    expect(state.imbalance(0)).toBeCloseTo(0.5, 9);
    const bound = imbalanceLowerBounds(state);
    expect(bound(0, 1)).toBeGreaterThan(0.2499);
    expect(bound(0, 1)).toBeLessThanOrEqual(0.25);
    expect(bound(0, 2)).toBeLessThan(1e-6);
  });

  it('still says something with 200 moves on 100 hosts, where each dimension alone could be evened out', () => {
    const snap = synthesizeSnapshot({ hosts: 100, servers: 3000, groups: 60, seed: 1 });
    const state = new ClusterState(snap, policyWith());
    expect(imbalanceLowerBounds(state)(0, 200)).toBeGreaterThan(0.01);
  });
});
