// A neighbourhood of the improvement stage: the servers a plan sends to two hosts of one zone,
// shared out again between those two. The moves stay moves (each server still leaves its origin
// once), only where each lands changes, so the count is unchanged. An exact search over small
// sub-problems (bench/lns-exact.mjs) kept such re-partitions of 2 to 6 servers between two
// destinations again and again where reassigning one server at a time found nothing.
//
// Each pair is solved exactly: every split of its incoming servers, walked in Gray-code order so
// a step changes one server's side and costs O(dimensions) on the two hosts' running sums. The
// best split that fits both hosts' Placement capacity is replayed in plan order and kept only
// when every step stays legal, the objective falls and the imbalance does not rise.

import type { PlanContext } from '../context.js';
import type { WorkMeter } from './best-move.js';
import type { SpreadStep } from './improve.js';

/** Servers per pair at most: 2^12 splits. */
const MAX_SERVERS = 12;

export function repartitionDestinations(
  ctx: PlanContext,
  seq: SpreadStep[],
  meter: WorkMeter,
  limit: number,
  objective: (agg: number) => number,
  replay: (skip: number) => boolean,
): boolean {
  const { state } = ctx;
  let changed = false;
  for (let improved = true; improved && meter.evaluations < limit; ) {
    improved = false;
    const incoming = new Map<number, number[]>();
    seq.forEach((m, i) => {
      const list = incoming.get(m.to) ?? [];
      list.push(i);
      incoming.set(m.to, list);
    });
    const groups = new Map<string, number[]>();
    for (const h of [...incoming.keys()].sort((a, b) => a - b)) {
      const host = state.hosts[h]!;
      if (!host.usable) continue;
      const key = `${host.aggregate}\u0000${host.az}`;
      groups.set(key, [...(groups.get(key) ?? []), h]);
    }
    for (const hosts of groups.values()) {
      for (let x = 0; x < hosts.length && meter.evaluations < limit; x++) {
        for (let y = x + 1; y < hosts.length && meter.evaluations < limit; y++) {
          const steps = [...incoming.get(hosts[x]!)!, ...incoming.get(hosts[y]!)!];
          if (steps.length < 2 || steps.length > MAX_SERVERS) continue;
          if (tryPair(ctx, seq, steps, hosts[x]!, hosts[y]!, meter, objective, replay)) {
            improved = true;
            changed = true;
            // The plan changed: the incoming lists are rebuilt before the next pair.
            break;
          }
        }
        if (improved) break;
      }
      if (improved) break;
    }
  }
  return changed;
}

function tryPair(
  ctx: PlanContext,
  seq: SpreadStep[],
  steps: number[],
  hx: number,
  hy: number,
  meter: WorkMeter,
  objective: (agg: number) => number,
  replay: (skip: number) => boolean,
): boolean {
  const { state } = ctx;
  const D = state.D;
  const agg = state.hosts[hx]!.aggregate;
  const n = state.aggregates[agg]!.counted.length;
  const m = steps.length;
  const servers = steps.map((i) => seq[i]!.server);
  // Loads and allocations of x and y without the pair's servers; each split adds them back.
  const baseLoad = [hx, hy].map((h) => Float64Array.from({ length: D }, (_, d) => state.load[h * D + d]!));
  const baseUsed = [hx, hy].map((h) => Float64Array.from({ length: 3 }, (_, r) => state.used[h * 3 + r]!));
  const side = new Uint8Array(m);
  servers.forEach((s, k) => {
    const on = state.at[s] === hx ? 0 : 1;
    side[k] = on;
    for (let d = 0; d < D; d++) baseLoad[on]![d]! -= state.servers[s]!.load[d]!;
    for (let r = 0; r < 3; r++) baseUsed[on]![r]! -= state.servers[s]!.alloc[r]!;
  });
  // Sums of the two hosts' loads and allocations for the current split, updated one flip at a time.
  const load = [Float64Array.from(baseLoad[0]!), Float64Array.from(baseLoad[1]!)];
  const used = [Float64Array.from(baseUsed[0]!), Float64Array.from(baseUsed[1]!)];
  const shift = (k: number, to: number, sign: number): void => {
    const sv = state.servers[servers[k]!]!;
    for (let d = 0; d < D; d++) load[to]![d]! += sign * sv.load[d]!;
    for (let r = 0; r < 3; r++) used[to]![r]! += sign * sv.alloc[r]!;
  };
  for (let k = 0; k < m; k++) shift(k, side[k]!, 1);

  const hosts = [hx, hy];
  const imbalanceNow = (): number => {
    let total = 0;
    for (let d = 0; d < D; d++) {
      let s1 = state.s1[agg * D + d]!;
      let s2 = state.s2[agg * D + d]!;
      for (let j = 0; j < 2; j++) {
        const h = hosts[j]!;
        const p = state.hosts[h]!.phys[d]!;
        if (p <= 0) continue;
        const u = state.load[h * D + d]! / p;
        const nu = load[j]![d]! / p;
        s1 += nu - u;
        s2 += nu * nu - u * u;
      }
      const mean = s1 / n;
      total += state.dims[d]!.weight * Math.sqrt(Math.max(0, s2 / n - mean * mean));
    }
    return total;
  };
  const fits = (): boolean => {
    for (let j = 0; j < 2; j++)
      for (let r = 0; r < 3; r++) if (used[j]![r]! > state.hosts[hosts[j]!]!.cap[r]! + 1e-9) return false;
    return true;
  };

  // A server that came from x or y stays on the other side: on its own host it would not move.
  const free = servers.flatMap((s, k) =>
    state.servers[s]!.origin === hx || state.servers[s]!.origin === hy ? [] : [k],
  );
  const current = state.imbalance(agg);
  let best = current - 1e-12;
  let bestSide: Uint8Array | null = null;
  // Gray code: split g differs from split g-1 in the server of g's lowest set bit.
  const splits = 1 << free.length;
  for (let g = 1; g < splits; g++) {
    const k = free[31 - Math.clz32(g & -g)]!;
    shift(k, side[k]!, -1);
    side[k] = side[k]! ^ 1;
    shift(k, side[k]!, 1);
    const value = imbalanceNow();
    if (value < best && fits()) {
      best = value;
      bestSide = Uint8Array.from(side);
    }
  }
  meter.evaluations += splits;
  if (bestSide === null) return false;

  // Replay the plan with the new destinations; keep it only if every step stays legal and the
  // objective (soft groups and all) falls with the imbalance not rising.
  const before = objective(agg);
  const saved = steps.map((i) => seq[i]!.to);
  steps.forEach((i, k) => {
    seq[i] = { server: seq[i]!.server, to: bestSide![k] === 0 ? hx : hy };
  });
  if (replay(-1) && objective(agg) < before - 1e-9 && state.imbalance(agg) <= current + 1e-12) return true;
  steps.forEach((i, k) => {
    seq[i] = { server: seq[i]!.server, to: saved[k]! };
  });
  if (!replay(-1)) throw new Error('repartition: the kept plan no longer replays');
  return false;
}
