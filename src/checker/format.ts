// The readable form of a check: one line per violation, where first (aggregate, step, wave), then
// the code and the constraint that found it, then what is wrong in words.
import type { Plan } from '../model/plan.js';
import type { CheckResult, Violation } from './violations.js';

function where(v: Violation): string {
  const parts = [v.aggregate];
  if (v.step !== undefined) parts.push(`step ${v.step}`);
  if (v.wave !== undefined) parts.push(`wave ${v.wave}`);
  return parts.join(' ');
}

export function formatCheckResult(result: CheckResult, plan: Plan, label = 'plan'): string {
  const moves = plan.aggregates.reduce((n, a) => n + a.moves.length, 0);
  const size = `${moves} move${moves === 1 ? '' : 's'} in ${plan.aggregates.length} aggregate${plan.aggregates.length === 1 ? '' : 's'}`;
  if (result.ok) return `OK ${label}: ${size}, no violations\n`;

  const rows = result.violations.map((v) => [where(v), v.code, `[${v.constraint}]`, v.detail]);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  const lines = rows.map((r) => r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i] ?? 0) : cell)).join('  '));
  const constraints = new Set(result.violations.map((v) => v.constraint)).size;
  const n = result.violations.length;
  const head = `FAIL ${label}: ${size}, ${n} violation${n === 1 ? '' : 's'} of ${constraints} constraint${constraints === 1 ? '' : 's'}`;
  return `${[head, ...lines].join('\n')}\n`;
}
