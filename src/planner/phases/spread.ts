// Phase 3 (spread): greedy best-improvement on the weighted imbalance. Each round looks only
// at indexed candidates: the hottest hosts as sources and, per availability zone, the coolest
// hosts as destinations; every candidate move is scored in O(dimensions) from running sums.
// Aggregates share the budget: each round the aggregate with the best move gets it.

import { MaxHeap } from '../../util/heap.js';
import { getOrCreate } from '../../util/maps.js';
import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import { hostUtil } from '../describe.js';
import { scoreMove, softGroupPenaltyDelta } from '../objectives/move-score.js';

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
  /** The aggregate's move count when `net` was computed: any later move makes it stale. */
  version: number;
}

/**
 * Lazy greedy: candidates are collected in one sweep into a max-heap by net gain; a popped
 * candidate whose gain is stale is re-scored in O(dimensions) and pushed back, so a round
 * costs a few re-scorings instead of a sweep. Gains barely drift between moves, so the
 * candidate that stays on top after re-scoring is the round's best move or very near it.
 * The heap is rebuilt every REBUILD_EVERY moves, since hot and cool hosts change.
 */
const REBUILD_EVERY = 16;

interface AggregateQueue {
  heap: MaxHeap<Candidate>;
  version: number;
  builtAt: number;
  done: boolean;
}

export function spread(ctx: PlanContext): void {
  const { state } = ctx;
  // Computed once: servers only leave the movable set, so these minima stay safe lower bounds.
  const rooms = state.aggregates.map((a) => smallestMovable(ctx, a.index));
  const queues: AggregateQueue[] = state.aggregates.map((a) => ({
    heap: new MaxHeap<Candidate>((c) => c.net),
    version: 0,
    builtAt: -1,
    done: a.counted.length < 2,
  }));
  while (ctx.budgetLeft > 0) {
    let pick = -1;
    const tops: (Candidate | null)[] = queues.map((q, a) => (q.done ? null : nextBest(ctx, a, q, rooms[a]!)));
    tops.forEach((c, a) => {
      if (c === null) queues[a]!.done = true;
      else if (pick < 0 || c.net > tops[pick]!.net) pick = a;
    });
    tops.forEach((c, a) => {
      if (c !== null && a !== pick) queues[a]!.heap.push(c);
    });
    if (pick < 0) return;
    const c = tops[pick]!;
    const from = state.at[c.server]!;
    const before = state.imbalance(pick);
    const reason = `${state.hosts[from]!.name} runs hot (${hostUtil(state, from)}), ${state.hosts[c.to]!.name} has room (${hostUtil(state, c.to)})`;
    const soft = softGroupPenaltyDelta(state, ctx.policy, c.server, c.to);
    const group = state.servers[c.server]!.group;
    const softNote =
      soft < 0
        ? `; fewer violations of ${state.groups[group]!.policy} group ${state.groups[group]!.name}`
        : '';
    const move = ctx.record(c.server, c.to, 'spread', '');
    move.reason = `${reason}; imbalance ${before.toFixed(4)} -> ${state.imbalance(pick).toFixed(4)}${softNote}`;
    queues[pick]!.version++;
  }
}

/** The aggregate's best legal move now, popped from its queue, or null when no move pays. */
function nextBest(
  ctx: PlanContext,
  agg: number,
  q: AggregateQueue,
  room: [number, number],
): Candidate | null {
  const { state, policy } = ctx;
  if (state.imbalance(agg) <= policy.spread.targetImbalance) return null;
  let widen = 1;
  if (q.builtAt < 0 || q.version - q.builtAt >= REBUILD_EVERY) rebuild(ctx, agg, q, widen, room);
  for (;;) {
    const c = q.heap.pop();
    if (c === undefined) {
      // Placement fragmentation often blocks the few hottest-to-coolest pairs while a wider
      // look still finds a paying move; "no move pays" is declared only after the widest look.
      const n = state.aggregates[agg]!.counted.length;
      if (widen >= MAX_WIDEN || (HOT_SOURCES * widen >= n && COOL_DESTINATIONS * widen >= n)) return null;
      widen *= 2;
      rebuild(ctx, agg, q, widen, room);
      continue;
    }
    if (c.version === q.version) {
      if (firstRejection(state, c.server, c.to) === null) return c;
      continue;
    }
    if (!ctx.movable(c.server) || !hasRoom(ctx, c.server, c.to)) continue;
    c.net = scoreMove(state, policy, c.server, c.to, state.imbalance(agg)).net;
    c.version = q.version;
    if (c.net >= policy.minGain) q.heap.push(c);
  }
}

function rebuild(
  ctx: PlanContext,
  agg: number,
  q: AggregateQueue,
  widen: number,
  room: [number, number],
): void {
  q.heap.clear();
  collect(ctx, agg, widen, room, (server, to, net) => q.heap.push({ server, to, net, version: q.version }));
  q.builtAt = q.version;
}

function hasRoom(ctx: PlanContext, server: number, to: number): boolean {
  const a = ctx.state.servers[server]!.alloc;
  return a[0]! <= ctx.state.free(to, 0) && a[1]! <= ctx.state.free(to, 1);
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

/** One sweep over the indexed candidates: every move that pays goes to `sink`. */
function collect(
  ctx: PlanContext,
  agg: number,
  widen: number,
  room: [number, number],
  sink: (server: number, to: number, net: number) => void,
): void {
  const { state, policy } = ctx;
  const current = state.imbalance(agg);
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
    getOrCreate(destsByZone, az, () => new Set<number>()).add(h);
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
      for (const i of topK(inZone, (i) => -state.util(hosts[i]!, d), COOL_PER_DIMENSION * Math.min(widen, 2)))
        addDest(i);
    }
  }

  // Flat per-destination tables so the inner loop is arithmetic on typed arrays: this loop is
  // where a planning round spends its time.
  const weights = Float64Array.from(state.dims, (dim) => dim.weight);
  const tables = new Map<string, DestTable>();
  for (const [az, set] of destsByZone) {
    const list = [...set].sort((a, b) => heatOf.get(a)! - heatOf.get(b)! || a - b);
    tables.set(az, destTable(ctx, list));
  }

  const sums = new Float64Array(2 * D);
  for (const from of sources) {
    const t = tables.get(state.hosts[from]!.az);
    if (!t) continue;
    const servers = [...state.on[from]!].sort((a, b) => a - b);
    for (const s of servers) {
      if (!ctx.movable(s)) continue;
      const sv = state.servers[s]!;
      const alloc = sv.alloc;
      const load = sv.load;
      const cost = policy.migrationCostPerSecond * sv.estSeconds;
      const soft = sv.group >= 0 && state.groups[sv.group]!.policy.startsWith('soft-');
      state.sumsWithoutServer(s, sums);
      let tried = 0;
      for (let k = 0; k < t.hosts.length; k++) {
        const to = t.hosts[k]!;
        if (to === from || alloc[0]! > t.freeVcpu[k]! || alloc[1]! > t.freeRam[k]!) continue;
        if (++tried > DESTS_PER_SERVER) break;
        let after = 0;
        for (let d = 0; d < D; d++) {
          const u = t.util[k * D + d]!;
          const nu = u + load[d]! * t.invPhys[k * D + d]!;
          const s1 = sums[d]! + nu - u;
          const s2 = sums[D + d]! + nu * nu - u * u;
          const mean = s1 / n;
          after += weights[d]! * Math.sqrt(Math.max(0, s2 / n - mean * mean));
        }
        let net = (current - after) * n - cost;
        if (soft) net -= softGroupPenaltyDelta(state, policy, s, to);
        if (net >= policy.minGain) sink(s, to, net);
      }
    }
  }
}

interface DestTable {
  hosts: number[];
  util: Float64Array;
  invPhys: Float64Array;
  freeVcpu: Float64Array;
  freeRam: Float64Array;
}

function destTable(ctx: PlanContext, hosts: number[]): DestTable {
  const { state } = ctx;
  const D = state.D;
  const t: DestTable = {
    hosts,
    util: new Float64Array(hosts.length * D),
    invPhys: new Float64Array(hosts.length * D),
    freeVcpu: new Float64Array(hosts.length),
    freeRam: new Float64Array(hosts.length),
  };
  hosts.forEach((h, k) => {
    for (let d = 0; d < D; d++) {
      const p = state.hosts[h]!.phys[d]!;
      t.util[k * D + d] = state.util(h, d);
      t.invPhys[k * D + d] = p > 0 ? 1 / p : 0;
    }
    t.freeVcpu[k] = state.free(h, 0);
    t.freeRam[k] = state.free(h, 1);
  });
  return t;
}

/** The k items with the largest key, in descending key order (ties: smaller index first). */
function topK(items: number[], key: (i: number) => number, k: number): number[] {
  if (items.length <= k) return [...items];
  const keys = new Float64Array(items.length);
  items.forEach((i, x) => {
    keys[x] = key(i);
  });
  const idx = Array.from({ length: items.length }, (_, x) => x);
  idx.sort((a, b) => keys[b]! - keys[a]! || items[a]! - items[b]!);
  return idx.slice(0, k).map((x) => items[x]!);
}
