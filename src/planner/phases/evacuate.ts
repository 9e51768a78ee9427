// Phase 1: servers off hosts that are disabled but up. Balance may get worse: maintenance
// comes first, so the best legal destination is taken even when no move "pays".
import type { PlanContext } from '../context.js';
import { serverLabel, summarizeRejections } from '../describe.js';
import { searchDestination } from './destination-search.js';

/** `only`: the draining hosts to empty (all of them when absent). */
export function evacuate(ctx: PlanContext, only: (host: number) => boolean = () => true): void {
  const { state } = ctx;
  for (const agg of state.aggregates) {
    for (const host of agg.hosts) {
      const h = state.hosts[host]!;
      if (!h.draining || state.on[host]!.size === 0 || !only(host)) continue;
      const why = h.disabledReason ? ` (${h.disabledReason})` : '';
      // Largest first: they are the hardest to place while the others still leave room.
      const servers = [...state.on[host]!].sort((a, b) => size(ctx, b) - size(ctx, a) || a - b);
      for (const s of servers) {
        const sv = state.servers[s]!;
        if (sv.immovable !== null) {
          ctx.note(agg.index, `${h.name} cannot be drained: ${serverLabel(state, s)} stays, ${sv.immovable}`);
          continue;
        }
        if (ctx.budgetLeft <= 0) {
          continue;
        }
        const { best, rejections } = searchDestination(
          ctx,
          s,
          ctx.policy.mode === 'pack' ? 'tight-fit' : 'balance',
        );
        if (best === null) {
          ctx.note(
            agg.index,
            `${h.name} cannot be drained: no host can take ${serverLabel(state, s)} (${summarizeRejections(rejections)})`,
          );
          continue;
        }
        ctx.record(s, best.to, 'evacuate', `${h.name} is disabled${why}: moving ${sv.name || sv.id} off it`);
      }
      const unplanned = servers.filter(
        (s) => state.at[s] === host && state.servers[s]!.immovable === null,
      ).length;
      if (unplanned > 0 && ctx.budgetLeft <= 0) {
        ctx.note(agg.index, `${h.name}: move budget spent with ${unplanned} servers still to evacuate`);
      }
    }
  }
}

function size(ctx: PlanContext, server: number): number {
  const s = ctx.state.servers[server]!;
  return s.alloc[1]! + s.alloc[0]! * 4096;
}
