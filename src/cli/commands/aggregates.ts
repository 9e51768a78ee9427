// `aicerine aggregates`: each configured aggregate as the service sees it, through the API.
import type { Command } from 'commander';
import { type ApiFlags, apiClient, type Paged, printPage, withApiOptions } from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface Aggregate {
  name: string;
  mode: string;
  paused: boolean;
  window: { open: boolean; closesAt: string | null; nextOpensAt: string | null };
  dataHealth: { verdict: string; reasons: string[] } | null;
  latestPlan: { id: string; status: string; moveCount: number } | null;
  imbalance: { overall: number } | null;
  lastDecision?: { at: string; started: number; summary: string } | null;
}

export function register(program: Command): void {
  withApiOptions(program.command('aggregates').description(describeCommand('aggregates')))
    .option('--limit <n>', 'aggregates per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: ApiFlags & { limit?: string; cursor?: string }) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/aggregates', {
        limit: flags.limit,
        cursor: flags.cursor,
      })) as Paged<Aggregate>;
      printPage(
        page,
        ['AGGREGATE', 'MODE', 'PAUSED', 'WINDOW', 'DATA', 'PLAN', 'IMBALANCE', 'LAST DECISION'],
        (a) => [
          a.name,
          a.mode,
          a.paused ? 'yes' : 'no',
          a.window.open
            ? `open${a.window.closesAt ? ` until ${a.window.closesAt}` : ''}`
            : `closed${a.window.nextOpensAt ? `, opens ${a.window.nextOpensAt}` : ''}`,
          a.dataHealth === null
            ? null
            : a.dataHealth.verdict === 'ok'
              ? 'ok'
              : `blocked: ${a.dataHealth.reasons[0] ?? ''}`,
          a.latestPlan === null
            ? null
            : `${a.latestPlan.id} ${a.latestPlan.status} (${a.latestPlan.moveCount} move${a.latestPlan.moveCount === 1 ? '' : 's'})`,
          a.imbalance === null ? null : a.imbalance.overall.toFixed(4),
          // Why an aggregate that may act did not: cooldown, data-health gate, window, budget...
          a.lastDecision ? a.lastDecision.summary : null,
        ],
        flags.json,
      );
    });
}
