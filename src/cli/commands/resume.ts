// `aicerine resume [--aggregate NAME]`: lift a pause made with aicerine pause (a pause in the configuration file stays).
import type { Command } from 'commander';
import { type ApiFlags, apiClient, formatTable, printJsonOr, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface Pauses {
  global: { configured: boolean; runtime: { by: string; at: string; reason: string | null } | null };
  aggregates: {
    name: string;
    configured: boolean;
    runtime: { by: string; at: string; reason: string | null } | null;
  }[];
}

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
      printJsonOr(flags.json, p, () =>
        formatTable(
          ['SCOPE', 'CONFIG', 'PAUSED BY', 'AT', 'REASON'],
          [
            [
              '(global)',
              p.global.configured ? 'paused' : '-',
              p.global.runtime?.by ?? null,
              p.global.runtime?.at ?? null,
              p.global.runtime?.reason ?? null,
            ],
            ...p.aggregates.map((a) => [
              a.name,
              a.configured ? 'paused' : '-',
              a.runtime?.by ?? null,
              a.runtime?.at ?? null,
              a.runtime?.reason ?? null,
            ]),
          ],
        ),
      );
    });
}
