// `aicerine costs`: fits live-migration durations from the cloud's os-migrations history (reader
// credential) and prints, per aggregate, the samples, the coefficients and their error.
import type { Command } from 'commander';
import { createLogger } from '../../cloud/log.js';
import { openSession } from '../../cloud/session.js';
import { DEFAULT_TIMEOUT_SETTINGS } from '../../costs/estimator.js';
import { DEFAULT_COST_FIT_SETTINGS, fitCosts } from '../../costs/fit.js';
import { readMigrationHistory } from '../../costs/read-history.js';
import { buildCostsReport } from '../../costs/report.js';
import { readSnapshot } from '../../formats/snapshot-file.js';
import { DEFAULT_POLICY } from '../../policy/defaults.js';
import { loadPolicyFile } from '../../policy/load.js';
import { describeCommand } from '../command-list.js';
import { formatCostsReport } from '../format-costs.js';

interface CostsFlags {
  cloud?: string;
  days: string;
  minSamples: string;
  concurrency: string;
  policy?: string;
  snapshot?: string;
  json?: boolean;
  verbose?: boolean;
}

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${flag}: expected a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

export function register(program: Command): void {
  program
    .command('costs')
    .description(describeCommand('costs'))
    .option('--cloud <name>', 'cloud in clouds.yaml (default: OS_CLOUD, else the OS_* variables)')
    .option('--days <n>', 'days of os-migrations history to read', '30')
    .option(
      '--min-samples <n>',
      'completed migrations needed before a fit replaces the pre-copy model',
      String(DEFAULT_COST_FIT_SETTINGS.minSamples),
    )
    .option(
      '--concurrency <n>',
      "sources' max_concurrent_live_migrations, to tell queueing from copying",
      '1',
    )
    .option('--policy <file>', 'policy file whose costModel is the fallback (default: built-in)')
    .option(
      '--snapshot <file>',
      "servers' dirty rates (dirtyRateMBps, or load.dirtyRateMBps from a metrics rule) from a recorded snapshot",
    )
    .option('--json', 'print the report (aicerine-costs/1) as JSON')
    .option('-v, --verbose', 'log every request (without secrets)')
    .action(async (flags: CostsFlags) => {
      const days = Number(flags.days);
      if (!Number.isFinite(days) || days <= 0)
        throw new Error(`--days: expected a number of days > 0, got ${JSON.stringify(flags.days)}`);
      const minSamples = positiveInt('--min-samples', flags.minSamples);
      const concurrency = positiveInt('--concurrency', flags.concurrency);
      const policy = flags.policy ? await loadPolicyFile(flags.policy) : DEFAULT_POLICY;
      const dirty = new Map<string, number>();
      if (flags.snapshot) {
        for (const s of (await readSnapshot(flags.snapshot)).servers) {
          const rate = s.dirtyRateMBps ?? s.load?.dirtyRateMBps;
          if (rate !== undefined) dirty.set(s.id, rate);
        }
      }
      const session = await openSession({
        ...(flags.cloud ? { load: { cloud: flags.cloud } } : {}),
        logger: createLogger({ level: flags.verbose ? 'debug' : 'warn' }),
      });
      const history = await readMigrationHistory(session.nova, {
        days,
        concurrencyOf: () => concurrency,
        dirtyRateOf: (id) => dirty.get(id),
      });
      const fits = fitCosts(history.samples, { ...DEFAULT_COST_FIT_SETTINGS, minSamples });
      const report = buildCostsReport(history, fits, policy.costModel, DEFAULT_TIMEOUT_SETTINGS);
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatCostsReport(report));
      process.stderr.write(`${session.stats.summary()}\n`);
    });
}
