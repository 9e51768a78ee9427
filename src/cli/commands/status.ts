// `aicerine status`: whether the service answers, its version, what is paused, and (replicas)
// which replica owns which aggregate.
import type { Command } from 'commander';
import { type ApiFlags, apiClient, printJsonOr, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface PauseRow {
  configured: boolean;
  runtime: { by: string; at: string; reason: string | null } | null;
}

interface ReplicaRow {
  id: string;
  address: string | null;
  lastHeartbeat: string | null;
  aggregates: { aggregate: string; fence: number }[];
  self: boolean;
}

function replicaLine(r: ReplicaRow): string {
  const owns = r.aggregates.map((a) => `${a.aggregate} (fence ${a.fence})`).join(', ') || 'no aggregate';
  return `  ${r.id}${r.self ? ' (answering)' : ''} at ${r.address ?? 'no API'}: heartbeat ${r.lastHeartbeat ?? 'unknown'}; owns ${owns}`;
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
      const replicas = (await api.get('/v1/replicas')) as {
        coordination: 'local' | 'etcd';
        replicas: ReplicaRow[];
      };
      printJsonOr(flags.json, { version, health, pauses, replicas }, () =>
        [
          `aicerine ${version.version} at ${api.baseUrl}: ${health.status} (store ${health.store})`,
          `service: ${pauseText(pauses.global)}`,
          // Under a service-wide pause an aggregate that is not paused itself does not run either.
          ...pauses.aggregates.map((a) => {
            const own = pauseText(a);
            const globallyPaused = pauses.global.runtime !== null || pauses.global.configured;
            return `  ${a.name}: ${own === 'running' && globallyPaused ? 'paused with the service' : own}`;
          }),
          replicas.coordination === 'local'
            ? 'replicas: none (one process owns every aggregate)'
            : `replicas: ${replicas.replicas.length} live`,
          ...replicas.replicas.map(replicaLine),
          '',
        ].join('\n'),
      );
    },
  );
}
