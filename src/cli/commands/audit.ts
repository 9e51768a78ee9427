// `aicerine audit`: who did what, with which credential, through the API.
import type { Command } from 'commander';
import { type ApiFlags, apiClient, type Paged, printPage, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface Entry {
  at: string;
  actor: string;
  credential: string | null;
  action: string;
  target: string;
}

type AuditFlags = ApiFlags & {
  actor?: string;
  action?: string;
  target?: string;
  from?: string;
  before?: string;
  limit?: string;
  cursor?: string;
};

export function register(program: Command): void {
  withApiOptions(program.command('audit').description(describeCommand('audit')))
    .option('--actor <who>', 'only this actor, e.g. operator:alice or loop:active')
    .option('--action <what>', 'only this action, e.g. plan.approve')
    .option('--target <on>', 'only this target, e.g. plan:12')
    .option('--from <time>', 'at or after this ISO time')
    .option('--before <time>', 'before this ISO time')
    .option('--limit <n>', 'entries per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: AuditFlags) => {
      const api = await apiClient(flags);
      const { actor, action, target, from, before, limit, cursor } = flags;
      const page = (await api.get('/v1/audit', {
        actor,
        action,
        target,
        from,
        before,
        limit,
        cursor,
      })) as Paged<Entry>;
      printPage(
        page,
        ['AT', 'ACTOR', 'ACTION', 'TARGET', 'CREDENTIAL'],
        (e) => [e.at, e.actor, e.action, e.target, e.credential],
        flags.json,
      );
    });
}
