// `aicerine resume [--aggregate NAME]`: lift a pause made with aicerine pause (a pause in the configuration file stays).
import type { Command } from 'commander';
import { type ApiFlags, apiClient, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';
import { type Pauses, printPauses } from '../pause-state.js';

export function register(program: Command): void {
  withApiOptions(program.command('resume').description(describeCommand('resume')))
    .option('--aggregate <name>', 'only this aggregate (default: the whole service)')

    .action(async (flags: ApiFlags & { aggregate?: string }) => {
      const api = await apiClient(flags);
      const path =
        flags.aggregate === undefined
          ? '/v1/resume'
          : `/v1/aggregates/${encodeURIComponent(flags.aggregate)}/resume`;
      const p = (await api.post(path, {})) as Pauses;
      printPauses(flags.json, p);
    });
}
