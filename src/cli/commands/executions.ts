// `aicerine executions list|show|abort`: what the executor ran and runs, through the API.
import type { Command } from 'commander';
import {
  type ApiFlags,
  apiClient,
  formatTable,
  type Paged,
  printJsonOr,
  printPage,
  withApiOptions,
} from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface Execution {
  id: string;
  aggregate: string;
  planId: string | null;
  state: string;
  startedAt: string;
  endedAt: string | null;
  startedBy: string;
}
interface MoveRow {
  step: number;
  wave: number;
  serverId: string;
  serverName?: string;
  from: string;
  to: string;
  state: string;
  attempt: number;
  detail: string | null;
}

type ListFlags = ApiFlags & { aggregate?: string; state?: string; limit?: string; cursor?: string };

export function register(program: Command): void {
  const executions = program.command('executions').description(describeCommand('executions'));
  withApiOptions(executions.command('list', { isDefault: true }).description('executions, newest first'))
    .option('--aggregate <name>', 'only this aggregate')
    .option('--state <state>', 'running, finished or aborted')
    .option('--limit <n>', 'executions per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: ListFlags) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/executions', {
        aggregate: flags.aggregate,
        state: flags.state,
        limit: flags.limit,
        cursor: flags.cursor,
      })) as Paged<Execution>;
      printPage(
        page,
        ['ID', 'AGGREGATE', 'PLAN', 'STATE', 'STARTED', 'ENDED', 'BY'],
        (e) => [e.id, e.aggregate, e.planId, e.state, e.startedAt, e.endedAt, e.startedBy],
        flags.json,
      );
    });
  withApiOptions(
    executions.command('show').description('an execution and its moves').argument('<id>'),
  ).action(async (id: string, flags: ApiFlags) => {
    const api = await apiClient(flags);
    const e = (await api.get(`/v1/executions/${encodeURIComponent(id)}`)) as Execution & { moves: MoveRow[] };
    printJsonOr(
      flags.json,
      e,
      () =>
        `execution ${e.id}: ${e.aggregate}, ${e.state}, started ${e.startedAt} by ${e.startedBy}${e.endedAt ? `, ended ${e.endedAt}` : ''}\n${formatTable(
          ['STEP', 'WAVE', 'SERVER', 'FROM', 'TO', 'STATE', 'TRY', 'DETAIL'],
          e.moves.map((m) => [
            m.step,
            m.wave,
            m.serverName ?? m.serverId,
            m.from,
            m.to,
            m.state,
            m.attempt,
            m.detail,
          ]),
        )}`,
    );
  });
  abortCommand(executions.command('abort'));
}

/** `executions abort ID` and `abort ID`. */
export function abortCommand(cmd: Command): Command {
  return withApiOptions(
    cmd
      .description(
        'abort a running execution: moves not started are skipped, migrations in flight are aborted in Nova',
      )
      .argument('<id>'),
  )
    .option('--comment <text>', 'why, for the audit log')
    .option('--wait', 'wait until the execution has ended (every abort confirmed by Nova)')
    .action(async (id: string, flags: ApiFlags & { comment?: string; wait?: boolean }) => {
      const api = await apiClient(flags);
      const r = await api.post(
        `/v1/executions/${encodeURIComponent(id)}/abort`,
        flags.comment !== undefined ? { comment: flags.comment } : {},
      );
      if (!flags.wait) {
        printJsonOr(flags.json, r, () => `execution ${id}: aborting\n`);
        return;
      }
      for (;;) {
        const e = (await api.get(`/v1/executions/${encodeURIComponent(id)}`)) as Execution & {
          moves: MoveRow[];
        };
        if (e.state !== 'running') {
          printJsonOr(
            flags.json,
            e,
            () =>
              `execution ${id}: ${e.state}; ${e.moves.filter((m) => m.state === 'completed').length} completed, ${e.moves.filter((m) => m.state === 'failed').length} aborted or failed, ${e.moves.filter((m) => m.state === 'skipped').length} skipped\n`,
          );
          return;
        }
        await new Promise((res) => setTimeout(res, 1000));
      }
    });
}
