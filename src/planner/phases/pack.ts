// Phase 3 (pack): free whole hosts. A host is drained only when every one of its servers can
// leave (planned as a unit: all its moves or none), each server to the fullest host that still
// fits (best fit) below pack.maxFill. Two drain orders are tried per aggregate (emptiest hosts
// first; fewest servers first, which frees more hosts per migration when the budget binds) and
// the one that frees more hosts, then with fewer moves, is kept. Empty hosts are never filled:
// they are the spares.

import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import type { ClusterState } from '../state.js';
import { tightness } from './destination-search.js';

/** Drain orders tried per aggregate; the one that frees more hosts (then with fewer moves) is kept. */
const ORDERS: ReadonlyArray<(state: ClusterState, a: number, b: number) => number> = [
  // Emptiest first: frees the most hosts when the budget is not what stops it.
  (state, a, b) => fill(state, a) - fill(state, b),
  // Fewest servers first: the most hosts freed per migration when the budget binds.
  (state, a, b) => state.on[a]!.size - state.on[b]!.size || fill(state, a) - fill(state, b),
];

export function pack(ctx: PlanContext): void {
  const { state } = ctx;
  for (const agg of state.aggregates) {
    const start = ctx.moves[agg.index]!.length;
    let best = -1;
    let bestFreed = -1;
    let bestMoves = 0;
    ORDERS.forEach((order, i) => {
      const freed = drainHosts(ctx, agg.index, order);
      const moves = ctx.moves[agg.index]!.length - start;
      if (freed > bestFreed || (freed === bestFreed && moves < bestMoves)) {
        best = i;
        bestFreed = freed;
        bestMoves = moves;
      }
      ctx.unrecord(agg.index, moves);
    });
    if (best >= 0) drainHosts(ctx, agg.index, ORDERS[best]!);
  }
}

/** Drains whole hosts of one aggregate in the given order; returns how many it freed. */
function drainHosts(
  ctx: PlanContext,
  agg: number,
  order: (state: ClusterState, a: number, b: number) => number,
): number {
  const { state } = ctx;
  const hosts = state.aggregates[agg]!.hosts;
  const drained = new Set<number>();
  const candidates = hosts
    .filter((h) => state.hosts[h]!.usable && state.on[h]!.size > 0)
    .filter((h) => [...state.on[h]!].every((s) => ctx.movable(s)))
    .sort((a, b) => order(state, a, b) || a - b);
  for (const host of candidates) {
    if (ctx.budgetLeft <= 0) break;
    const servers = [...state.on[host]!];
    if (servers.length > ctx.budgetLeft || !servers.every((s) => ctx.movable(s))) continue;
    servers.sort((a, b) => bulk(state, b) - bulk(state, a) || a - b);
    const reason = `freeing ${state.hosts[host]!.name} (${servers.length} servers, ${Math.round(fill(state, host) * 100)}% allocated before)`;
    drained.add(host);
    let done = 0;
    for (const s of servers) {
      const to = bestFit(ctx, s, hosts, drained);
      if (to < 0) break;
      ctx.record(s, to, 'pack', reason);
      done++;
    }
    if (done < servers.length) {
      ctx.unrecord(agg, done);
      drained.delete(host);
    }
  }
  return drained.size;
}

function bestFit(ctx: PlanContext, server: number, hosts: number[], drained: Set<number>): number {
  const { state, policy } = ctx;
  const s = state.servers[server]!;
  let best = -1;
  let bestKey = Number.NEGATIVE_INFINITY;
  for (const to of hosts) {
    if (drained.has(to) || state.on[to]!.size === 0 || !state.hosts[to]!.usable) continue;
    const key = tightness(ctx, server, to);
    if (key > policy.pack.maxFill + 1e-9 || key <= bestKey) continue;
    let fits = true;
    for (let r = 0; r < 2; r++) {
      const cap = state.hosts[to]!.cap[r]!;
      if (state.used[to * 3 + r]! + s.alloc[r]! > cap * policy.pack.maxFill + 1e-9) fits = false;
    }
    if (!fits || firstRejection(state, server, to) !== null) continue;
    best = to;
    bestKey = key;
  }
  return best;
}

/** Largest share of VCPU or MEMORY_MB capacity in use. */
export function fill(state: ClusterState, host: number): number {
  let share = 0;
  for (let r = 0; r < 2; r++) {
    const cap = state.hosts[host]!.cap[r]!;
    if (Number.isFinite(cap) && cap > 0) share = Math.max(share, state.used[host * 3 + r]! / cap);
  }
  return share;
}

function bulk(state: ClusterState, server: number): number {
  const s = state.servers[server]!;
  return s.alloc[1]! + s.alloc[0]! * 4096;
}
