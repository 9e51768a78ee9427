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
