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

/** Where a reason's imbalance change goes, filled in once its move is applied (finalize.ts). */
export const IMBALANCE_MARK = '\u0000imbalance\u0000';

const IMBALANCE_STEP = /imbalance \d+\.\d{4} -> \d+\.\d{4}/;

/**
 * "imbalance B -> A" at four decimals, or six where four would show no change or hide its
 * direction: the quote then agrees with the gain stored on the move at the same rounding.
 */
export function imbalanceChange(before: number, after: number): string {
  const b4 = before.toFixed(4);
  const a4 = after.toFixed(4);
  const digits = b4 === a4 ? 6 : 4;
  return `imbalance ${before.toFixed(digits)} -> ${after.toFixed(digits)}`;
}

/**
 * What a balancing move does, in words true of the state it starts from:
 *   - the source "runs hot" only at or above the hot threshold in some dimension; otherwise it
 *     "is N points above the aggregate's <dim> mean" in the dimension where it is furthest above
 *     (among those the server loads); otherwise the move is "rebalancing from ... to ...";
 *   - the destination "has room" when it is below the mean in some dimension the server loads.
 */
export function balancingWords(
  state: ClusterState,
  server: number,
  from: number,
  to: number,
  hot: number,
): string {
  const D = state.D;
  const agg = state.hosts[from]!.aggregate;
  const n = Math.max(1, state.aggregates[agg]!.counted.length);
  const load = state.servers[server]!.load;
  const f = `${state.hosts[from]!.name} (${hostUtil(state, from)})`;
  const t = `${state.hosts[to]!.name} (${hostUtil(state, to)})`;
  let hotHere = false;
  let above = -1;
  let aboveBy = 0;
  let room = false;
  for (let d = 0; d < D; d++) {
    const mean = state.s1[agg * D + d]! / n;
    if (state.util(from, d) >= hot) hotHere = true;
    if (load[d]! <= 0) continue;
    const by = Math.round((state.util(from, d) - mean) * 100);
    if (by > aboveBy) {
      aboveBy = by;
      above = d;
    }
    if (state.util(to, d) < mean) room = true;
  }
  const name = state.hosts[from]!.name;
  const source = hotHere
    ? `${name} runs hot (${hostUtil(state, from)})`
    : above >= 0
      ? `${name} is ${aboveBy} points above the aggregate's ${state.dims[above]!.name} mean (${hostUtil(state, from)})`
      : null;
  if (source === null) return `rebalancing from ${f} to ${t}`;
  return room
    ? `${source}, ${state.hosts[to]!.name} has room (${hostUtil(state, to)})`
    : `${source}, to ${t}`;
}

/**
 * Rewrites the host utilizations a mandatory or pack move's reason quotes ("moving from X (...)
 * to Y (...)") to the state it starts from in step order; its "imbalance X -> Y" is marked to be
 * filled in once the move is applied (finalize.ts).
 */
export function restateQuotes(state: ClusterState, from: number, to: number, reason: string): string {
  const f = escaped(state.hosts[from]!.name);
  const t = escaped(state.hosts[to]!.name);
  const soft = new RegExp(`moving from ${f} \\([^)]*\\) to ${t} \\([^)]*\\)`);
  let out = reason;
  if (soft.test(out))
    out = out.replace(
      soft,
      `moving from ${state.hosts[from]!.name} (${hostUtil(state, from)}) to ${state.hosts[to]!.name} (${hostUtil(state, to)})`,
    );
  return out.replace(IMBALANCE_STEP, IMBALANCE_MARK);
}

function escaped(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
