// Finding the best legal destination for one server among an aggregate's hosts, with the
// rejections counted so an unresolved item can say why no host would do.

import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import { scoreMove } from '../objectives/move-score.js';

export interface DestinationChoice {
  to: number;
  net: number;
}

export interface SearchResult {
  best: DestinationChoice | null;
  rejections: Map<string, number>;
}

export type Preference = 'balance' | 'tight-fit';

/**
 * Every usable host of the server's aggregate is a candidate: this runs once per server that
 * must move (evacuation, repair), never per candidate of an optimization loop.
 */
export function searchDestination(
  ctx: PlanContext,
  server: number,
  preference: Preference,
  accept: (host: number) => boolean = () => true,
): SearchResult {
  const { state, policy } = ctx;
  const from = state.at[server]!;
  const agg = state.hosts[from]!.aggregate;
  const current = state.imbalance(agg);
  const rejections = new Map<string, number>();
  const spares = spareGuard(ctx, agg);
  let best: DestinationChoice | null = null;
  let bestKey = Number.NEGATIVE_INFINITY;
  for (const to of state.aggregates[agg]!.hosts) {
    if (to === from || !state.hosts[to]!.usable || !accept(to)) continue;
    if (!spares(to)) {
      rejections.set('spare-hosts', (rejections.get('spare-hosts') ?? 0) + 1);
      continue;
    }
    const rejection = firstRejection(state, server, to);
    if (rejection) {
      rejections.set(rejection.constraint, (rejections.get(rejection.constraint) ?? 0) + 1);
      continue;
    }
    const score = scoreMove(state, policy, server, to, current);
    const key = preference === 'balance' ? score.net : tightness(ctx, server, to) - score.softPenalty;
    if (key > bestKey) {
      bestKey = key;
      best = { to, net: score.net };
    }
  }
  return { best, rejections };
}

/**
 * In pack mode the aggregate keeps pack.spareHosts empty hosts: an empty host may receive a
 * server (evacuation, repair) only while more than that many are empty.
 */
function spareGuard(ctx: PlanContext, agg: number): (host: number) => boolean {
  const { state, policy } = ctx;
  if (policy.mode !== 'pack') return () => true;
  let empty = 0;
  for (const h of state.aggregates[agg]!.hosts)
    if (state.hosts[h]!.usable && state.on[h]!.size === 0) empty++;
  return (host) => state.on[host]!.size > 0 || empty > policy.pack.spareHosts;
}

/** Fuller destinations first (best fit): the largest share of a resource class in use after the move. */
export function tightness(ctx: PlanContext, server: number, to: number): number {
  const { state } = ctx;
  const s = state.servers[server]!;
  let share = 0;
  for (let r = 0; r < 2; r++) {
    const cap = state.hosts[to]!.cap[r]!;
    if (Number.isFinite(cap) && cap > 0)
      share = Math.max(share, (state.used[to * 3 + r]! + s.alloc[r]!) / cap);
  }
  return share;
}
