// `aicerine quarantine list|release`: servers the executor gave up on, through the API.
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

interface Entry {
  serverId: string;
  aggregate: string;
  reason: string;
  novaFault: string | null;
  since: string;
  attempts: number;
  releasedBy: string | null;
}

type ListFlags = ApiFlags & { aggregate?: string; state?: string; limit?: string; cursor?: string };

export function register(program: Command): void {
  const quarantine = program.command('quarantine').description(describeCommand('quarantine'));
  withApiOptions(
    quarantine.command('list', { isDefault: true }).description('quarantined servers, newest first'),
  )
    .option('--aggregate <name>', 'only this aggregate')
    .option('--state <state>', 'active (default), released or all')
    .option('--limit <n>', 'entries per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: ListFlags) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/quarantine', {
        aggregate: flags.aggregate,
        state: flags.state,
        limit: flags.limit,
        cursor: flags.cursor,
      })) as Paged<Entry>;
      printPage(
        page,
        ['SERVER', 'AGGREGATE', 'SINCE', 'ATTEMPTS', 'RELEASED BY', 'REASON'],
        (q) => [q.serverId, q.aggregate, q.since, q.attempts, q.releasedBy, q.novaFault ?? q.reason],
        flags.json,
      );
    });
  withApiOptions(
    quarantine
      .command('release')
      .description('let the control loop move the server again')
      .argument('<server-id>'),
  )
    .option('--comment <text>', 'why, for the audit log')
    .action(async (serverId: string, flags: ApiFlags & { comment?: string }) => {
      const api = await apiClient(flags);
      const r = (await api.post(
        `/v1/quarantine/${encodeURIComponent(serverId)}/release`,
        flags.comment !== undefined ? { comment: flags.comment } : {},
      )) as Entry;
      printJsonOr(flags.json, r, () => `server ${r.serverId}: released by ${r.releasedBy}\n`);
    });
}
