// `aicerine pause [--aggregate NAME]`: stop new migrations, everywhere or in one aggregate (through the service API).
import type { Command } from 'commander';
import { type ApiFlags, apiClient, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';
import { type Pauses, printPauses } from '../pause-state.js';

export function register(program: Command): void {
  withApiOptions(program.command('pause').description(describeCommand('pause')))
    .option('--aggregate <name>', 'only this aggregate (default: the whole service)')
    .option('--reason <text>', 'why, for the audit log and the other operators')
    .action(async (flags: ApiFlags & { aggregate?: string; reason?: string }) => {
      const api = await apiClient(flags);
      const path =
        flags.aggregate === undefined
          ? '/v1/pause'
          : `/v1/aggregates/${encodeURIComponent(flags.aggregate)}/pause`;
      const p = (await api.post(path, flags.reason !== undefined ? { reason: flags.reason } : {})) as Pauses;
      printPauses(flags.json, p);
    });
}
