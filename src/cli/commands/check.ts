// `aicerine check`: preconditions per aggregate; the exit status says whether all hold.
import type { Command } from 'commander';
import { formatReport, runChecks } from '../../cloud/check.js';
import { readSettingsFile } from '../../cloud/config-file.js';
import { createLogger } from '../../cloud/log.js';
import { openSession } from '../../cloud/session.js';
import { parseSiteDeclarations, type SiteDeclarations } from '../../cloud/site.js';
import { sessionSourceFor } from '../../config/credentials.js';
import { loadServiceConfig } from '../../config/load.js';

interface CheckFlags {
  cloud?: string;
  site?: string;
  config?: string;
  historyDays: string;
  json?: boolean;
  probeRatios?: boolean;
  probeWait: string;
  verbose?: boolean;
}

export function register(program: Command): void {
  program
    .command('check')
    .description(
      'check the preconditions Aicerine needs, per aggregate (exit status 1 when one does not hold)',
    )
    .option('--cloud <name>', 'cloud in clouds.yaml (default: OS_CLOUD, else the OS_* variables)')
    .option(
      '--config <file>',
      'the service configuration (aicerine.yaml): its windows, ratio bounds, nova.conf ratios, storage and reader credential',
    )
    .option(
      '--site <file>',
      'the older standalone site file (YAML/JSON) with the same declarations; --config is the newer form',
    )
    .option('--history-days <n>', 'days of os-migrations history to look at', '90')
    .option(
      '--probe-ratios',
      'find out by experiment whether nova.conf pins the VCPU ratio (nudges it, waits, restores)',
    )
    .option('--probe-wait <seconds>', 'how long the probe waits for nova-compute to rewrite the ratio', '75')
    .option('--json', 'print the report as JSON')
    .option('-v, --verbose', 'log every request (without secrets)')
    .action(async (flags: CheckFlags) => {
      const historyDays = Number(flags.historyDays);
      if (!Number.isFinite(historyDays) || historyDays < 0) {
        throw new Error(
          `--history-days: expected a number of days, got ${JSON.stringify(flags.historyDays)}`,
        );
      }
      const probeWait = Number(flags.probeWait);
      if (!Number.isFinite(probeWait) || probeWait <= 0) {
        throw new Error(`--probe-wait: expected a number of seconds, got ${JSON.stringify(flags.probeWait)}`);
      }
      if (flags.site && flags.config)
        throw new Error('--site and --config: give one (--config is the newer form)');
      let site: SiteDeclarations | undefined;
      let source = {};
      if (flags.config) {
        const loaded = await loadServiceConfig(flags.config);
        for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
        site = loaded.config.site;
        source = sessionSourceFor(loaded.config.openstack.reader);
      } else if (flags.site) {
        site = parseSiteDeclarations(await readSettingsFile(flags.site), flags.site);
      }
      const session = await openSession({
        ...source,
        ...(flags.cloud ? { load: { cloud: flags.cloud } } : {}),
        logger: createLogger({ level: flags.verbose ? 'debug' : 'warn' }),
      });
      const report = await runChecks(session, {
        ...(site ? { site } : {}),
        historyDays,
        ...(flags.probeRatios ? { probeRatios: { waitMs: probeWait * 1000 } } : {}),
      });
      for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      process.stderr.write(`${session.stats.summary()}\n`);
      process.exitCode = report.allHold ? 0 : 1;
    });
}
