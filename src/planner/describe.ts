// Human words for reasons and unresolved items. Kept apart so phases read as logic.
import type { ClusterState } from './state.js';

export function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

export function hostUtil(state: ClusterState, host: number): string {
  return state.dims.map((dim, d) => `${dim.name} ${pct(state.util(host, d))}`).join(', ');
}

export function serverLabel(state: ClusterState, server: number): string {
  const s = state.servers[server]!;
  return s.name && s.name !== s.id ? `${s.name} (${s.id})` : s.id;
}

export function summarizeRejections(counts: Map<string, number>): string {
  if (counts.size === 0) return 'no other host in the aggregate';
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([c, n]) => `${n} ruled out by ${c}`)
    .join(', ');
}

const IMBALANCE_STEP = /imbalance \d+\.\d{4} -> \d+\.\d{4}/;

/**
 * Rewrites the "imbalance X -> Y" of each reason to follow step order. Phases quote the imbalance
 * in the order they chose moves; waves reorder them, so the quoted numbers would jump between
 * lines. `fresh` is a state of the same snapshot with no move applied; moves are applied to it
 * in step order, each aggregate on its own (their imbalances are independent).
 */
export function restateImbalanceInStepOrder(
  fresh: ClusterState,
  aggregates: readonly { name: string; moves: { server: string; to: string; reason: string }[] }[],
): void {
  for (const agg of aggregates) {
    const index = fresh.aggregates.findIndex((a) => a.name === agg.name);
    for (const move of agg.moves) {
      const server = fresh.serverById.get(move.server);
      const to = fresh.hostByName.get(move.to);
      if (server === undefined || to === undefined || index < 0) continue;
      const before = fresh.imbalance(index);
      fresh.apply(server, to);
      if (IMBALANCE_STEP.test(move.reason)) {
        move.reason = move.reason.replace(
          IMBALANCE_STEP,
          `imbalance ${before.toFixed(4)} -> ${fresh.imbalance(index).toFixed(4)}`,
        );
      }
    }
  }
}
