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
 * What a balancing move does, in words true of the state it starts from: the source above the
 * aggregate's mean and the destination below it in some dimension the server loads ("runs hot",
 * "has room"), else a plain "rebalancing from … to …" (the exact best move is not always from
 * the hottest host).
 */
export function spreadWords(state: ClusterState, server: number, from: number, to: number): string {
  const D = state.D;
  const agg = state.hosts[from]!.aggregate;
  const n = state.aggregates[agg]!.counted.length;
  let hotCool = false;
  for (let d = 0; d < D; d++) {
    const mean = state.s1[agg * D + d]! / n;
    if (state.servers[server]!.load[d]! > 0 && state.util(from, d) > mean && state.util(to, d) < mean)
      hotCool = true;
  }
  const f = state.hosts[from]!.name;
  const t = state.hosts[to]!.name;
  return hotCool
    ? `${f} runs hot (${hostUtil(state, from)}), ${t} has room (${hostUtil(state, to)})`
    : `rebalancing from ${f} (${hostUtil(state, from)}) to ${t} (${hostUtil(state, to)})`;
}

function escaped(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Rewrites what each reason quotes of the cluster to follow step order: the "imbalance X -> Y",
 * the utilization of the source and destination, and whether the move goes from a hot host to
 * one with room. Phases quote the state in the order they chose moves, the improvement stage
 * changes earlier moves, and waves reorder them, so the quotes would describe a state the
 * operator never sees. `fresh` is a state of the same snapshot with no move applied; moves are
 * applied to it in step order, each aggregate on its own (their imbalances are independent).
 */
export function restateInStepOrder(
  fresh: ClusterState,
  aggregates: readonly { name: string; moves: { server: string; to: string; reason: string }[] }[],
): void {
  for (const agg of aggregates) {
    const index = fresh.aggregates.findIndex((a) => a.name === agg.name);
    for (const move of agg.moves) {
      const server = fresh.serverById.get(move.server);
      const to = fresh.hostByName.get(move.to);
      if (server === undefined || to === undefined || index < 0) continue;
      const from = fresh.at[server]!;
      const f = escaped(fresh.hosts[from]!.name);
      const t = escaped(move.to);
      const balancing = new RegExp(
        `${f} runs hot \\([^)]*\\), ${t} has room \\([^)]*\\)|rebalancing from ${f} \\([^)]*\\) to ${t} \\([^)]*\\)`,
      );
      const soft = new RegExp(`moving from ${f} \\([^)]*\\) to ${t} \\([^)]*\\)`);
      if (balancing.test(move.reason))
        move.reason = move.reason.replace(balancing, spreadWords(fresh, server, from, to));
      else if (soft.test(move.reason))
        move.reason = move.reason.replace(
          soft,
          `moving from ${fresh.hosts[from]!.name} (${hostUtil(fresh, from)}) to ${move.to} (${hostUtil(fresh, to)})`,
        );
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
