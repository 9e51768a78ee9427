// `aicerine check`: preconditions per aggregate; the exit status says whether all hold.
import type { Command } from 'commander';
import { formatReport, runChecks } from '../../cloud/check.js';
import { readSettingsFile } from '../../cloud/config-file.js';
import {
  type CredentialToCheck,
  checkCredentials,
  DEFAULT_CREDENTIAL_ROLES,
} from '../../cloud/credential-check.js';
import { createLogger } from '../../cloud/log.js';
import { openSession } from '../../cloud/session.js';
import { parseSiteDeclarations, type SiteDeclarations } from '../../cloud/site.js';
import { credentialLabel, sessionSourceFor } from '../../config/credentials.js';
import { loadServiceConfig } from '../../config/load.js';
import { describeCommand } from '../command-list.js';
import { parseNumberOption } from '../numbers.js';

interface CheckFlags {
  cloud?: string;
  site?: string;
  config?: string;
  historyDays: string;
  json?: boolean;
  probeRatios?: boolean;
  probeWait: string;
  verbose?: boolean;
  readerRole: string;
  actuatorRole: string;
  tasksRole: string;
}

export function register(program: Command): void {
  program
    .command('check')
    .description(describeCommand('check'))
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
    .option('--reader-role <name>', 'the role the reader credential needs', DEFAULT_CREDENTIAL_ROLES.reader)
    .option(
      '--actuator-role <name>',
      'the role the actuator credential needs',
      DEFAULT_CREDENTIAL_ROLES.actuator,
    )
    .option(
      '--tasks-role <name>',
      'the role the tasks credential needs in its project',
      DEFAULT_CREDENTIAL_ROLES.tasks,
    )
    .option('--json', 'print the report as JSON')
    .option('-v, --verbose', 'log every request (without secrets)')
    .action(async (flags: CheckFlags) => {
      const historyDays = parseNumberOption('--history-days', flags.historyDays, { min: 0 });
      const probeWait = parseNumberOption('--probe-wait', flags.probeWait, { min: 0, aboveMin: true });
      if (flags.site && flags.config)
        throw new Error('--site and --config: give one (--config is the newer form)');
      let site: SiteDeclarations | undefined;
      let source: Awaited<ReturnType<typeof sessionSourceFor>> = {};
      const credentials: CredentialToCheck[] = [];
      if (flags.config) {
        const loaded = await loadServiceConfig(flags.config);
        for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
        site = loaded.config.site;
        source = await sessionSourceFor(loaded.config.credentials.reader);
        // Every credential the service would run with: it authenticates, holds what it needs
        // and no more, and its access rules cover the calls the service makes with it.
        for (const kind of ['reader', 'actuator', 'tasks'] as const) {
          const ref = loaded.config.credentials[kind];
          if (!ref) continue;
          const label = credentialLabel(kind, ref);
          credentials.push({
            kind,
            label,
            open: async () => openSession({ ...(await sessionSourceFor(ref)), credential: { kind, label } }),
          });
        }
      } else if (flags.site) {
        site = parseSiteDeclarations(await readSettingsFile(flags.site), flags.site);
      }
      const session = await openSession({
        // --cloud wins over the configuration's reader credential.
        ...(flags.cloud ? { load: { cloud: flags.cloud } } : source),
        logger: createLogger({ level: flags.verbose ? 'debug' : 'warn' }),
      });
      const report = await runChecks(session, {
        ...(site ? { site } : {}),
        historyDays,
        ...(flags.probeRatios ? { probeRatios: { waitMs: probeWait * 1000 } } : {}),
      });
      const credentialResults = await checkCredentials(credentials, {
        reader: flags.readerRole,
        actuator: flags.actuatorRole,
        tasks: flags.tasksRole,
      });
      report.results.push(...credentialResults);
      report.allHold = report.allHold && credentialResults.every((r) => r.status !== 'fail');
      for (const r of credentialResults)
        if (r.status === 'info') report.warnings.push(`${r.title}: no (${r.details.join('; ')})`);
      for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      process.stderr.write(`${session.stats.summary()}\n`);
      process.exitCode = report.allHold ? 0 : 1;
    });
}
