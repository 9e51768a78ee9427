// `aicerine tasks list|show|evacuate|purge|validate|cancel|clean`: operator tasks through the API
// (docs/tasks.md). A request is checked against the cloud before anything is created.
import type { Command } from 'commander';
import {
  type ApiFlags,
  apiClient,
  type Paged,
  printJsonOr,
  printPage,
  withApiOptions,
} from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface Task {
  id: string;
  kind: string;
  args: Record<string, unknown>;
  requestedBy: string;
  requestedAt: string;
  state: string;
  progress: { done: number; total: number | null; detail: string };
  result: unknown;
  error: string | null;
  waitingReason: string | null;
  hosts: string[];
  owner: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

interface Worker {
  state: string;
  blocked: string | null;
}

type ListFlags = ApiFlags & { state?: string; kind?: string; host?: string; limit?: string; cursor?: string };

// "8 done: live-migrating 5 server(s)", "3/10 done: ..."; a count alone ran into the words. A
// task that ended says "done" as its detail: no need to say it twice.
const progressOf = (t: Task) => {
  const detail = t.progress.detail && t.progress.detail !== 'done' ? `: ${t.progress.detail}` : '';
  return `${t.progress.done}${t.progress.total !== null ? `/${t.progress.total}` : ''} done${detail}`;
};

function describeTask(t: Task): string {
  const lines = [
    `task ${t.id}: ${t.kind} ${JSON.stringify(t.args)}`,
    `  state:     ${t.state}${t.waitingReason ? ` (${t.waitingReason})` : ''}`,
    `  requested: ${t.requestedAt} by ${t.requestedBy}`,
    `  hosts:     ${t.hosts.join(', ') || '-'}`,
    `  progress:  ${progressOf(t)}`,
  ];
  if (t.error) lines.push(`  error:     ${t.error}`);
  if (t.result !== null && t.result !== undefined)
    lines.push(`  result:    ${JSON.stringify(t.result, null, 2).replace(/\n/g, '\n  ')}`);
  return `${lines.join('\n')}\n`;
}

async function request(flags: ApiFlags, kind: string, args: Record<string, unknown>): Promise<void> {
  const api = await apiClient(flags);
  const r = (await api.post('/v1/tasks', { kind, args })) as { tasks: Task[] };
  printJsonOr(flags.json, r, () =>
    r.tasks
      .map((t) => `task ${t.id}: ${t.kind} ${t.state}${t.hosts.length ? ` on ${t.hosts.join(', ')}` : ''}\n`)
      .join(''),
  );
}

export function register(program: Command): void {
  const tasks = program.command('tasks').description(describeCommand('tasks'));
  withApiOptions(tasks.command('list', { isDefault: true }).description('tasks, newest first'))
    .option('--state <state>', 'SCHEDULED, WAITING, RUNNING, DONE or ERROR')
    .option('--kind <kind>', 'only this kind')
    .option('--host <host>', 'only tasks that hold this host')
    .option('--limit <n>', 'tasks per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: ListFlags) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/tasks', {
        state: flags.state,
        kind: flags.kind,
        host: flags.host,
        limit: flags.limit,
        cursor: flags.cursor,
      })) as Paged<Task> & { worker: Worker | null };
      printPage(
        page,
        ['ID', 'KIND', 'STATE', 'HOSTS', 'REQUESTED', 'BY', 'PROGRESS'],
        (t) => [
          t.id,
          t.kind,
          t.state,
          t.hosts.join(',') || '-',
          t.requestedAt,
          t.requestedBy,
          t.error ?? t.waitingReason ?? progressOf(t),
        ],
        flags.json,
      );
      if (!flags.json && page.worker?.blocked) process.stdout.write(`worker: ${page.worker.blocked}\n`);
    });
  withApiOptions(tasks.command('show').description('one task in full').argument('<id>')).action(
    async (id: string, flags: ApiFlags) => {
      const api = await apiClient(flags);
      const t = (await api.get(`/v1/tasks/${encodeURIComponent(id)}`)) as Task;
      printJsonOr(flags.json, t, () => describeTask(t));
    },
  );
  withApiOptions(
    tasks
      .command('evacuate')
      .description('disable a compute host and move its servers off (live; cold when allowed)')
      .argument('<host>'),
  )
    .option('--target <host>', 'move everything to this host')
    .option('--last-resort <hosts>', 'comma-separated hosts used as destinations only when no other fits')
    .action(async (host: string, flags: ApiFlags & { target?: string; lastResort?: string }) => {
      const lastResort = (flags.lastResort ?? '')
        .split(',')
        .map((h) => h.trim())
        .filter((h) => h !== '');
      await request(flags, 'evacuate-compute', {
        host,
        ...(flags.target ? { target: flags.target } : {}),
        ...(lastResort.length > 0 ? { lastResort } : {}),
      });
    });
  withApiOptions(
    tasks
      .command('purge')
      .description('delete what a project owns (servers, groups, keypairs, images, volumes, ports)')
      .argument('<project>', 'project id or name'),
  )
    .option('--dry-run', 'only list what a run would delete')
    .action(async (project: string, flags: ApiFlags & { dryRun?: boolean }) => {
      await request(flags, 'purge-project', { project, dryRun: flags.dryRun === true });
    });
  withApiOptions(
    tasks
      .command('validate')
      .description('boot a canary on disabled compute hosts and check them (one task per host)')
      .argument('<hosts...>'),
  )
    .option('--keep-enabled', 'enable each host that passes')
    .action(async (hosts: string[], flags: ApiFlags & { keepEnabled?: boolean }) => {
      await request(flags, 'validate-compute', { hosts, keepEnabled: flags.keepEnabled === true });
    });
  withApiOptions(tasks.command('cancel').description('cancel a task').argument('<id>')).action(
    async (id: string, flags: ApiFlags) => {
      const api = await apiClient(flags);
      const t = (await api.post(`/v1/tasks/${encodeURIComponent(id)}/cancel`, {})) as Task;
      printJsonOr(flags.json, t, () =>
        t.state === 'RUNNING' ? `task ${t.id}: stops at its next safe point\n` : `task ${t.id}: ${t.state}\n`,
      );
    },
  );
  withApiOptions(tasks.command('clean').description('remove DONE tasks now (other states stay)'))
    .option('--before <time>', 'only those that ended before this ISO time')
    .action(async (flags: ApiFlags & { before?: string }) => {
      const api = await apiClient(flags);
      const r = (await api.post('/v1/tasks/clean', flags.before ? { before: flags.before } : {})) as {
        deleted: number;
      };
      printJsonOr(flags.json, r, () => `${r.deleted} DONE task(s) removed\n`);
    });
}
