// Text form of the `aicerine costs` report.
import type { CostsReport } from '../costs/report.js';
import { table } from './format-plan.js';

export function formatCostsReport(r: CostsReport): string {
  const skipped = Object.entries(r.skipped).map(([why, n]) => `${n} ${why}`);
  const lines = [
    `Live migrations since ${r.since}: ${r.records} records, ${r.samples} samples` +
      (skipped.length ? ` (left out: ${skipped.join(', ')})` : '') +
      `; ${r.queueCorrected} started later than requested (queued behind others on their source)`,
    '',
  ];
  if (r.aggregates.length === 0) {
    lines.push('No finished live migration of a known server: every aggregate uses the pre-copy model.');
    return `${lines.join('\n')}\n`;
  }
  const rows = [
    [
      'aggregate',
      'samples',
      'fitted',
      'not completed',
      'method',
      'intercept s',
      's/GiB',
      's/GiB/(MiB/s)',
      'MAE s',
      'p90 |err| s',
      'uses',
    ],
  ];
  for (const a of r.aggregates) {
    const c = a.coefficients;
    const notDone = Object.entries(a.counts.byOutcome).map(([o, n]) => `${n} ${o}`);
    rows.push([
      a.aggregate,
      String(a.counts.total),
      String(a.counts.fitted),
      notDone.join(', ') || '0',
      a.method ?? '-',
      c ? String(c.intercept) : '-',
      c ? String(c.secondsPerGiB) : '-',
      c?.secondsPerGiBPerDirtyMBps !== undefined ? String(c.secondsPerGiBPerDirtyMBps) : '-',
      a.error ? String(a.error.mae) : '-',
      a.error ? String(a.error.p90Abs) : '-',
      a.uses,
    ]);
  }
  lines.push(...table(rows));
  lines.push('');
  for (const a of r.aggregates) {
    const ex = a.examples
      .map((e) => `${e.ramMB / 1024} GiB ${e.estimatedSeconds} s (timeout ${e.timeoutSeconds} s)`)
      .join(', ');
    lines.push(`${a.aggregate}: ${a.uses === 'learned' ? 'learned fit' : 'pre-copy model'}, ${a.why}; ${ex}`);
    if (a.counts.timeoutsAbovePrediction > 0)
      lines.push(
        `  ${a.counts.timeoutsAbovePrediction} migrations aborted at a timeout ran longer than the fit predicts`,
      );
  }
  return `${lines.join('\n')}\n`;
}
