// The readable form of a plan: per aggregate, before/after per dimension, then the moves by
// wave with their reasons, then what stays unresolved.
import { type AggregatePlan, type Plan, phaseLabel, SOFT_GROUP_PHASE_LABEL } from '../model/plan.js';

export function formatPlan(plan: Plan, opts: { maxMovesShown?: number } = {}): string {
  const out: string[] = [];
  const total = plan.aggregates.reduce((n, a) => n + a.moves.length, 0);
  out.push(
    `Plan (${plan.repairOnly ? 'repair-only' : plan.mode}) for the snapshot of ${plan.snapshotTakenAt}: ${count(total, 'move')} in ${count(plan.aggregates.length, 'aggregate')}, planned in ${plan.stats.planningMs} ms`,
  );
  for (const agg of plan.aggregates)
    out.push(
      '',
      ...formatAggregate(agg, opts.maxMovesShown ?? 200, plan.stats[`imbalanceLowerBound:${agg.name}`]),
    );
  return `${out.join('\n')}\n`;
}

function formatAggregate(agg: AggregatePlan, maxShown: number, bound: number | undefined): string[] {
  const lines: string[] = [];
  const waves = new Set(agg.moves.map((m) => m.wave)).size;
  const seconds = agg.moves.reduce((s, m) => s + m.estimatedSeconds, 0);
  lines.push(
    `== ${agg.name}: ${count(agg.moves.length, 'move')} in ${count(waves, 'wave')} (≈${Math.round(seconds)} s of migration)`,
  );
  const dims = Object.keys(agg.before.dimensions);
  const rows: string[][] = [['', 'imbalance', ...dims.flatMap((d) => [`${d} stddev`, `${d} max`])]];
  for (const [label, b] of [
    ['before', agg.before],
    ['after', agg.after],
  ] as const) {
    rows.push([
      label,
      b.imbalance.toFixed(4),
      ...dims.flatMap((d) => {
        const s = b.dimensions[d];
        return [s ? s.stddev.toFixed(4) : '-', s ? `${(s.max * 100).toFixed(1)}%` : '-'];
      }),
    ]);
  }
  lines.push(...table(rows).map((l) => `  ${l}`));
  if (bound !== undefined && Object.keys(agg.before.dimensions).length > 0)
    lines.push(`  ${gapNote(agg, bound)}`);
  const rose = balanceCostNote(agg);
  if (rose) lines.push(`  ${rose}`);
  if (agg.moves.length > 0) {
    const moveRows: string[][] = [['step', 'wave', 'phase', 'server', 'from', 'to', 'est.s', 'reason']];
    for (const m of agg.moves.slice(0, maxShown)) {
      moveRows.push([
        String(m.step),
        String(m.wave),
        phaseLabel(m),
        m.serverName ?? m.server,
        m.from,
        m.to,
        String(m.estimatedSeconds),
        m.reason,
      ]);
    }
    lines.push('', ...table(moveRows).map((l) => `  ${l}`));
    if (agg.moves.length > maxShown)
      lines.push(`  ... ${agg.moves.length - maxShown} more moves (use --json)`);
  } else {
    lines.push('  no moves');
  }
  if (agg.hostsFreed.length > 0) lines.push(`  hosts freed: ${agg.hostsFreed.join(', ')}`);
  if ((agg.hostsPartlyDrained ?? []).length > 0)
    lines.push(`  hosts left with only servers that cannot move: ${agg.hostsPartlyDrained!.join(', ')}`);
  if ((agg.spareHosts ?? []).length > 0)
    lines.push(`  spare hosts (kept empty): ${agg.spareHosts!.join(', ')}`);
  for (const u of agg.unresolved) lines.push(`  unresolved: ${u}`);
  return lines;
}

/** "1 move", "2 moves", "0 moves". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** The plan against the lower bound for its number of moves (docs/planner.md, "The gap"). */
function gapNote(agg: AggregatePlan, bound: number): string {
  const n = agg.moves.length;
  const moves = count(n, 'move');
  if (bound <= 0)
    return `gap: no useful lower bound with ${moves} (they could change nearly every host); after ${agg.after.imbalance.toFixed(4)}`;
  // Ten times the bound or more: a percentage that large says the bound is weak, not the plan bad.
  if (agg.after.imbalance >= 10 * bound)
    return `gap: no plan of ${moves} goes below ${bound.toFixed(4)}, a weak bound here (after ${agg.after.imbalance.toFixed(4)})`;
  // The bound and the distance to it in the plan's own unit: a percentage of a small bound reads
  // as a verdict on the plan ("352.8%") when it only says the bound is far below.
  const distance = agg.after.imbalance - bound;
  return `gap: no plan of ${moves} can go below imbalance ${bound.toFixed(4)} (a lower bound); this one ends at ${agg.after.imbalance.toFixed(4)}, ${distance.toFixed(4)} above it`;
}

const PHASE_WORDS: Record<string, string> = {
  evacuate: 'evacuations',
  affinity: 'hard server-group repairs',
  [SOFT_GROUP_PHASE_LABEL]: 'soft server-group moves',
  spread: 'spread moves',
  pack: 'pack moves',
};

/**
 * When an aggregate ends less balanced than it started, what paid for it: the balance each
 * phase's moves cost (their gains, summed), so a plan never reads worse without saying why.
 */
function balanceCostNote(agg: AggregatePlan): string | null {
  if (agg.after.imbalance <= agg.before.imbalance) return null;
  const costs = new Map<string, number>();
  for (const m of agg.moves)
    if (m.gain !== undefined && m.gain < 0)
      costs.set(phaseLabel(m), (costs.get(phaseLabel(m)) ?? 0) - m.gain);
  const parts = [...costs.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([phase, cost]) => `${PHASE_WORDS[phase] ?? phase} cost ${cost.toFixed(4)}`);
  const why = parts.length > 0 ? parts.join(', ') : 'measured host load differs from the sum of its servers';
  return `imbalance rose ${agg.before.imbalance.toFixed(4)} -> ${agg.after.imbalance.toFixed(4)}: ${why}`;
}

export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  return rows.map((row) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
