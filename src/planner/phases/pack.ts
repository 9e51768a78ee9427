// Phase 3 (pack): free whole hosts. A host is drained only when every one of its servers can
// leave (planned as a unit: all its moves or none), emptiest hosts first, each server to the
// fullest host that still fits (best fit) below pack.maxFill. Empty hosts are never filled:
// they are the spares.

import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import type { ClusterState } from '../state.js';
import { tightness } from './destination-search.js';

export function pack(ctx: PlanContext): void {
  const { state } = ctx;
  for (const agg of state.aggregates) {
    const drained = new Set<number>();
    const candidates = agg.hosts
      .filter((h) => state.hosts[h]!.usable && state.on[h]!.size > 0)
      .filter((h) => [...state.on[h]!].every((s) => ctx.movable(s)))
      .sort((a, b) => fill(state, a) - fill(state, b) || a - b);
    for (const host of candidates) {
      if (ctx.budgetLeft <= 0) return;
      const servers = [...state.on[host]!];
      if (servers.length > ctx.budgetLeft || !servers.every((s) => ctx.movable(s))) continue;
      servers.sort((a, b) => bulk(state, b) - bulk(state, a) || a - b);
      const reason = `freeing ${state.hosts[host]!.name} (${servers.length} servers, ${Math.round(fill(state, host) * 100)}% allocated before)`;
      drained.add(host);
      let done = 0;
      for (const s of servers) {
        const to = bestFit(ctx, s, agg.hosts, drained);
        if (to < 0) break;
        ctx.record(s, to, 'pack', reason);
        done++;
      }
      if (done < servers.length) {
        ctx.unrecord(agg.index, done);
        drained.delete(host);
      }
    }
  }
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
