// `aicerine serve`: the service. Reads the cloud every cycle, plans per aggregate and acts as
// each aggregate's mode and windows allow, until SIGINT/SIGTERM (then no new migration starts;
// those in flight finish or are aborted, as configured).
import type { Command } from 'commander';
import { createApiLogger, isLoopback } from '../../api/index.js';
import { createLogger } from '../../cloud/log.js';
import { loadServiceConfig } from '../../config/load.js';
import { systemClock } from '../../executor/ports.js';
import { type ServiceApi, startServiceApi } from '../../service/api.js';
import { openServiceParts } from '../../service/open.js';
import { AicerineService } from '../../service/service.js';
import { describeCommand } from '../command-list.js';

interface ServeFlags {
  config: string;
  once?: boolean;
  verbose?: boolean;
  /** false with --no-auth. */
  auth: boolean;
}

export function register(program: Command): void {
  program
    .command('serve')
    .description(describeCommand('serve'))
    .requiredOption('-c, --config <file>', 'service configuration (YAML), see docs/configuration.md')
    .option('--once', 'run one cycle, wait for what it started, print its report and exit')
    .option('-v, --verbose', 'debug logging (never secrets)')
    .option(
      '--no-auth',
      'serve the API without Keystone authentication: loopback addresses only (demos, a single-user lab)',
    )
    .action(async (flags: ServeFlags) => {
      const { config, warnings } = await loadServiceConfig(flags.config);
      const logger = createLogger({ level: flags.verbose ? 'debug' : 'info' });
      for (const w of warnings) logger.warn(`config: ${w}`);
      if (!flags.once && config.api.enabled && !flags.auth && !isLoopback(config.api.host))
        throw new Error(
          `--no-auth: the API without authentication binds to loopback only, and api.host is ${config.api.host} (${config.file ?? 'configuration'})`,
        );
      const parts = await openServiceParts(config, logger);
      for (const n of parts.notes) logger.warn(n);
      const service = new AicerineService({
        config,
        store: parts.store,
        reader: parts.reader,
        actuator: parts.actuator,
        tasksSession: parts.tasks,
        clock: systemClock,
        logger,
        recorder: parts.recorder,
        notificationsUrl: parts.notificationsUrl,
        ...(parts.coordination !== null ? { coordination: parts.coordination } : {}),
      });
      if (flags.once && parts.coordination !== null) {
        await parts.coordination.locks.close();
        await parts.store.close();
        throw new Error(
          'serve --once runs one cycle as the only process; with coordination: etcd, run `serve` (replicas share the aggregates)',
        );
      }
      if (flags.once) {
        await service.executor.recover();
        const report = await service.runCycle();
        await service.executor.idle();
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        await parts.store.close();
        return;
      }
      let api: ServiceApi | null = null;
      if (config.api.enabled) {
        api = await startServiceApi({
          service,
          store: parts.store,
          config,
          reader: parts.reader,
          noAuth: !flags.auth,
          logger: createApiLogger({ level: flags.verbose ? 'debug' : 'info' }),
        });
        logger.info(
          `serve: API on ${api.url}/v1 (OpenAPI ${api.url}/v1/openapi.json, metrics ${api.url}/metrics)`,
        );
        if (!flags.auth)
          logger.warn(
            `serve: NO AUTHENTICATION on ${api.url}: anyone on this machine may approve plans, abort executions and pause the service`,
          );
      }
      const stop = async (signal: string) => {
        logger.info(`serve: ${signal}: no new migration starts; waiting for those in flight`);
        await api?.close();
        await service.stop();
        await parts.store.close();
        process.exit(0);
      };
      process.once('SIGINT', () => void stop('SIGINT'));
      process.once('SIGTERM', () => void stop('SIGTERM'));
      await service.start();
      logger.info(`serve: running, a cycle every ${Math.round(config.cycleIntervalMs / 1000)} s`);
    });
}
