// `aicerine status`: whether the service answers, its version, and what is paused.
import type { Command } from 'commander';
import { type ApiFlags, apiClient, printJsonOr, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface PauseRow {
  configured: boolean;
  runtime: { by: string; at: string; reason: string | null } | null;
}

function pauseText(p: PauseRow): string {
  if (p.runtime !== null)
    return `paused by ${p.runtime.by} at ${p.runtime.at}${p.runtime.reason ? ` (${p.runtime.reason})` : ''}`;
  return p.configured ? 'paused in the configuration' : 'running';
}

export function register(program: Command): void {
  withApiOptions(program.command('status').description(describeCommand('status'))).action(
    async (flags: ApiFlags) => {
      const api = await apiClient(flags);
      const version = (await api.get('/v1/version')) as { version: string };
      const health = (await api.get('/v1/health')) as { status: string; store: string };
      const pauses = (await api.get('/v1/pauses')) as {
        global: PauseRow;
        aggregates: (PauseRow & { name: string })[];
      };
      printJsonOr(flags.json, { version, health, pauses }, () =>
        [
          `aicerine ${version.version} at ${api.baseUrl}: ${health.status} (store ${health.store})`,
          `service: ${pauseText(pauses.global)}`,
          // Under a service-wide pause an aggregate that is not paused itself does not run either.
          ...pauses.aggregates.map((a) => {
            const own = pauseText(a);
            const globallyPaused = pauses.global.runtime !== null || pauses.global.configured;
            return `  ${a.name}: ${own === 'running' && globallyPaused ? 'paused with the service' : own}`;
          }),
          '',
        ].join('\n'),
      );
    },
  );
}
