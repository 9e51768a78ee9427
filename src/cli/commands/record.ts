// `aicerine record`: a snapshot of the live cloud, written with writeSnapshot.
import type { Command } from 'commander';
import { readSettingsFile } from '../../cloud/config-file.js';
import { createLogger } from '../../cloud/log.js';
import { memoryProfileStore } from '../../cloud/profiles/port.js';
import { ProfileRefresher } from '../../cloud/profiles/refresher.js';
import type { ProfileSettings } from '../../cloud/profiles/settings.js';
import {
  DEFAULT_METRICS_POLICY,
  type MetricsPolicy,
  parseMetricsPolicy,
} from '../../cloud/prometheus/policy.js';
import { recordSnapshot } from '../../cloud/record.js';
import { openSession } from '../../cloud/session.js';
import { parseStoragePolicy, type StoragePolicy } from '../../cloud/storage.js';
import { sessionSourceFor } from '../../config/credentials.js';
import { loadServiceConfig } from '../../config/load.js';
import { checkOutputPath } from '../../formats/output-path.js';
import { writeSnapshot } from '../../formats/snapshot-file.js';
import { describeCommand } from '../command-list.js';
import { parseNumberOption } from '../numbers.js';

interface RecordFlags {
  cloud?: string;
  config?: string;
  prometheus?: string;
  metrics?: string;
  storage?: string;
  historyDays: string;
  neutron: boolean;
  output: string;
  verbose?: boolean;
}

/** A one-line progress bar on a terminal; nothing when stderr is a pipe or a file. */
function progressBar(stream: NodeJS.WriteStream): (step: string, done: number, total: number) => void {
  if (!stream.isTTY) return () => {};
  return (step, done, total) => {
    const width = 24;
    const filled = Math.round((done / total) * width);
    stream.write(
      `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${step.padEnd(14)}`,
    );
    if (done === total) stream.write('\n');
  };
}

export function register(program: Command): void {
  program
    .command('record')
    .description(describeCommand('record'))
    .option('--cloud <name>', 'cloud in clouds.yaml (default: OS_CLOUD, else the OS_* variables)')
    .option(
      '--config <file>',
      'the service configuration (aicerine.yaml): its reader credential, prometheus (url, metrics policy, profiles) and storage; flags win over it',
    )
    .option('--prometheus <url>', 'Prometheus to read measured loads from')
    .option(
      '--metrics <file>',
      'metrics policy (YAML/JSON): PromQL per dimension; default: node + libvirt exporters',
    )
    .option(
      '--storage <file>',
      'storage policy (YAML/JSON): {default: shared|local, aggregates: {name: shared|local}}',
    )
    .option('--history-days <n>', 'days of os-migrations history to include', '30')
    .option('--no-neutron', 'do not read Neutron ports (SR-IOV left unknown)')
    .option('-v, --verbose', 'log every request (without secrets)')
    .requiredOption('-o, --output <file>', 'snapshot file to write (.json or .json.gz)')
    .action(async (flags: RecordFlags) => {
      const historyDays = parseNumberOption('--history-days', flags.historyDays, { min: 0 });
      await checkOutputPath(flags.output);
      const loaded = flags.config ? await loadServiceConfig(flags.config) : undefined;
      for (const w of loaded?.warnings ?? []) process.stderr.write(`warning: ${w}\n`);
      const config = loaded?.config;
      const metricsFile = flags.metrics ?? config?.prometheus?.metricsPolicyFile ?? undefined;
      const metricsPolicy: MetricsPolicy | undefined = metricsFile
        ? parseMetricsPolicy(await readSettingsFile(metricsFile), metricsFile)
        : undefined;
      const storage: StoragePolicy | undefined = flags.storage
        ? parseStoragePolicy(await readSettingsFile(flags.storage), flags.storage)
        : (config?.storage ?? undefined);
      const prometheusUrl = flags.prometheus ?? config?.prometheus?.url;
      const session = await openSession({
        // --cloud wins over the configuration's reader credential.
        ...(flags.cloud
          ? { load: { cloud: flags.cloud } }
          : config
            ? await sessionSourceFor(config.credentials.reader)
            : {}),
        ...(prometheusUrl ? { prometheusUrl } : {}),
        logger: createLogger({ level: flags.verbose ? 'debug' : 'warn' }),
      });
      const result = await recordSnapshot(session, {
        ...(metricsPolicy ? { metricsPolicy } : {}),
        ...(storage ? { storage } : {}),
        historyDays,
        neutron: flags.neutron ? 'auto' : 'never',
        onProgress: progressBar(process.stderr),
      });
      // Load profiles as serve attaches them (prometheus.profiles): the same range queries and
      // reduction, kept in memory for this one record, so the history is read each time and the
      // profiles carry no forecast error (only a service's daily refreshes measure one).
      const profileSettings: ProfileSettings | null = config?.prometheus?.profiles ?? null;
      if (profileSettings && session.prometheus && result.loadTargets) {
        const refresher = new ProfileRefresher(
          session.prometheus,
          memoryProfileStore(),
          profileSettings,
          metricsPolicy ?? DEFAULT_METRICS_POLICY,
        );
        const round = await refresher.attach(result.snapshot, result.loadTargets);
        result.warnings.push(...round.warnings);
        process.stderr.write(
          `profiles: ${round.servers} servers profiled (${round.calls} range queries, ${profileSettings.historyDays} days)\n`,
        );
      }
      await writeSnapshot(flags.output, result.snapshot);
      for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
      const s = result.snapshot;
      process.stdout.write(
        `${flags.output}: ${s.hosts.length} hosts, ${s.servers.length} servers, ${s.serverGroups.length} server groups, ${s.migrationHistory?.length ?? 0} past migrations\n`,
      );
      process.stdout.write(`${session.stats.summary()}\n`);
    });
}
