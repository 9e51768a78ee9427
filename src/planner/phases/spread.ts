// Phase 3 (spread): greedy best-improvement on the weighted imbalance. Each round looks only
// at indexed candidates: the hottest hosts as sources and, per availability zone, the coolest
// hosts as destinations; every candidate move is scored in O(dimensions) from running sums.
// Aggregates share the budget: each round the aggregate with the best move gets it.
import type { PlanContext } from '../context.js';
import { firstRejection } from '../constraints/index.js';
import { hostUtil } from '../describe.js';
import { softGroupPenaltyDelta } from '../objectives/move-score.js';

const HOT_SOURCES = 6;
const COOL_DESTINATIONS = 8;
const COOL_PER_DIMENSION = 3;
/** When the narrow candidate lists yield no move, they widen by doubling up to this factor. */
const MAX_WIDEN = 16;
/**
 * Per server, destinations are tried coolest first and the search stops after this many that
 * have Placement room: a hotter destination can beat a cooler one only through another
 * dimension, which the per-dimension coolest lists already cover.
 */
const DESTS_PER_SERVER = 6;

interface Candidate {
  server: number;
  to: number;
  net: number;
}

export function spread(ctx: PlanContext): void {
  const { state } = ctx;
  const best: (Candidate | null | undefined)[] = state.aggregates.map(() => undefined);
  const done = state.aggregates.map((a) => a.counted.length < 2);
  // Computed once: servers only leave the movable set, so these minima stay safe lower bounds.
  const rooms = state.aggregates.map((a) => smallestMovable(ctx, a.index));
  while (ctx.budgetLeft > 0) {
    let pick = -1;
    for (let a = 0; a < best.length; a++) {
      if (done[a]) continue;
      if (best[a] === undefined) best[a] = widening(ctx, a, rooms[a]!);
      const c = best[a];
      if (c === null || c === undefined) {
        done[a] = true;
        continue;
      }
      if (pick < 0 || c.net > best[pick]!.net) pick = a;
    }
    if (pick < 0) return;
    const c = best[pick]!;
    const from = state.at[c.server]!;
    const before = state.imbalance(pick);
    const reason = `${state.hosts[from]!.name} runs hot (${hostUtil(state, from)}), ${state.hosts[c.to]!.name} has room (${hostUtil(state, c.to)})`;
    const move = ctx.record(c.server, c.to, 'spread', '');
    move.reason = `${reason}; imbalance ${before.toFixed(4)} -> ${state.imbalance(pick).toFixed(4)}`;
    best[pick] = undefined;
  }
}

/** The smallest VCPU and MEMORY_MB a movable server of the aggregate asks for: a host with less can take none. */
function smallestMovable(ctx: PlanContext, agg: number): [number, number] {
  const { state } = ctx;
  let v = Number.POSITIVE_INFINITY;
  let m = Number.POSITIVE_INFINITY;
  for (const h of state.aggregates[agg]!.hosts) {
    for (const s of state.on[h]!) {
      if (!ctx.movable(s)) continue;
      v = Math.min(v, state.servers[s]!.alloc[0]!);
      m = Math.min(m, state.servers[s]!.alloc[1]!);
    }
  }
  return [v, m];
}

// Placement fragmentation often blocks the few hottest-to-coolest pairs while a slightly
// wider look still finds a paying move; "no move pays" is declared only after the widest look.
function widening(ctx: PlanContext, agg: number, room: [number, number]): Candidate | null {
  const n = ctx.state.aggregates[agg]!.counted.length;
  for (let f = 1; f <= MAX_WIDEN; f *= 2) {
    const c = bestMove(ctx, agg, f, room);
    if (c !== null || (HOT_SOURCES * f >= n && COOL_DESTINATIONS * f >= n)) return c;
  }
  return null;
}

function bestMove(ctx: PlanContext, agg: number, widen: number, room: [number, number]): Candidate | null {
  const { state, policy } = ctx;
  const current = state.imbalance(agg);
  if (current <= policy.spread.targetImbalance) return null;
  const hosts = state.aggregates[agg]!.counted;
  const D = state.D;
  const n = hosts.length;

  // Normalised heat per host: sum over dimensions of weight * z-score of its utilization.
  const mean = new Float64Array(D);
  const sd = new Float64Array(D);
  for (let d = 0; d < D; d++) {
    const s1 = state.s1[agg * D + d]!;
    const s2 = state.s2[agg * D + d]!;
    mean[d] = s1 / n;
    sd[d] = Math.sqrt(Math.max(0, s2 / n - mean[d]! * mean[d]!)) || 1;
  }
  const heat = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let h = 0;
    for (let d = 0; d < D; d++) h += (state.dims[d]!.weight * (state.util(hosts[i]!, d) - mean[d]!)) / sd[d]!;
    heat[i] = h;
  }
  const order = Array.from({ length: n }, (_, i) => i);
  const sources = topK(order, (i) => heat[i]!, HOT_SOURCES * widen).map((i) => hosts[i]!);
  const destsByZone = new Map<string, Set<number>>();
  const heatOf = new Map<number, number>();
  const addDest = (i: number): void => {
    const h = hosts[i]!;
    const az = state.hosts[h]!.az;
    let set = destsByZone.get(az);
    if (!set) destsByZone.set(az, (set = new Set()));
    set.add(h);
    heatOf.set(h, heat[i]!);
  };
  const zones = new Set(hosts.map((h) => state.hosts[h]!.az));
  for (const az of zones) {
    const inZone = order.filter((i) => {
      const h = hosts[i]!;
      return state.hosts[h]!.az === az && state.free(h, 0) >= room[0]! && state.free(h, 1) >= room[1]!;
    });
    for (const i of topK(inZone, (i) => -heat[i]!, COOL_DESTINATIONS * Math.min(widen, 2))) addDest(i);
    for (let d = 0; d < D; d++) {
      for (const i of topK(inZone, (i) => -state.util(hosts[i]!, d), COOL_PER_DIMENSION * Math.min(widen, 2))) addDest(i);
    }
  }

  let best: Candidate | null = null;
  const sums = new Float64Array(2 * D);
  for (const from of sources) {
    const dests = [...(destsByZone.get(state.hosts[from]!.az) ?? [])].sort(
      (a, b) => heatOf.get(a)! - heatOf.get(b)! || a - b,
    );
    const servers = [...state.on[from]!].sort((a, b) => a - b);
    for (const s of servers) {
      if (!ctx.movable(s)) continue;
      const sv = state.servers[s]!;
      const alloc = sv.alloc;
      const cost = policy.migrationCostPerSecond * sv.estSeconds;
      const soft = sv.group >= 0 && state.groups[sv.group]!.policy.startsWith('soft-');
      state.sumsWithoutServer(s, sums);
      let tried = 0;
      for (const to of dests) {
        if (to === from || alloc[0]! > state.free(to, 0) || alloc[1]! > state.free(to, 1)) continue;
        if (++tried > DESTS_PER_SERVER) break;
        let net = current - state.imbalanceWithArrival(sums, s, to) - cost;
        if (soft) net -= softGroupPenaltyDelta(state, policy, s, to);
        if (net < policy.minGain || (best !== null && net <= best.net)) continue;
        if (firstRejection(state, s, to) !== null) continue;
        best = { server: s, to, net };
      }
    }
  }
  return best;
}

/** The k items with the largest key, in descending key order (ties: smaller index first). */
function topK(items: number[], key: (i: number) => number, k: number): number[] {
  if (items.length <= k) return [...items];
  const keys = new Float64Array(items.length);
  items.forEach((i, x) => (keys[x] = key(i)));
  const idx = Array.from({ length: items.length }, (_, x) => x);
  idx.sort((a, b) => keys[b]! - keys[a]! || items[a]! - items[b]!);
  return idx.slice(0, k).map((x) => items[x]!);
}
