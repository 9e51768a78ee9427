// `aicerine what-if AGGREGATE`: the service plans its latest snapshot of the aggregate with
// changes (drain hosts, add hosts like one, other policy keys) and answers the plan with the
// before/after figures; nothing is stored or executed.
import type { Command } from 'commander';
import { readSettingsFile } from '../../cloud/config-file.js';
import type { Plan } from '../../model/plan.js';
import {
  ApiCallError,
  type ApiFlags,
  apiClient,
  formatTable,
  printJsonOr,
  withApiOptions,
} from '../api-client.js';
import { describeCommand } from '../command-list.js';
import { formatPlan } from '../format-plan.js';
import { parseIntegerOption } from '../numbers.js';

type Flags = ApiFlags & {
  drain?: string;
  addLike?: string;
  addCount?: string;
  policy?: string;
  moves: string;
};

interface WhatIfAnswer {
  aggregate: string;
  asOf: string;
  changes: { drained: string[]; added: string[] };
  plan: Plan;
  dimensions: string[];
  hosts: {
    name: string;
    before: Record<string, number>;
    after: Record<string, number>;
    serversBefore: number;
    serversAfter: number;
  }[];
}

const pct = (x: number | undefined) => (x === undefined ? '-' : `${(x * 100).toFixed(1)}%`);

export function formatWhatIf(a: WhatIfAnswer, moves: number): string {
  const changes = [
    ...(a.changes.drained.length > 0 ? [`drain ${a.changes.drained.join(', ')}`] : []),
    ...(a.changes.added.length > 0 ? [`add ${a.changes.added.join(', ')}`] : []),
  ];
  const head = `what-if on ${a.aggregate} (snapshot of ${a.asOf})${changes.length > 0 ? `: ${changes.join('; ')}` : ''}; nothing is stored or executed\n\n`;
  const table = formatTable(
    ['HOST', 'SERVERS', ...a.dimensions.flatMap((d) => [`${d.toUpperCase()} BEFORE`, 'AFTER'])],
    a.hosts.map((h) => [
      h.name,
      `${h.serversBefore} -> ${h.serversAfter}`,
      ...a.dimensions.flatMap((d) => [pct(h.before[d]), pct(h.after[d])]),
    ]),
  );
  return `${head}${formatPlan(a.plan, { maxMovesShown: moves })}\n${table}`;
}

export function register(program: Command): void {
  withApiOptions(program.command('what-if').description(describeCommand('what-if')).argument('<aggregate>'))
    .option('--drain <hosts>', 'hosts to empty, comma-separated')
    .option('--add-like <host>', 'add empty hosts copied from this one (with --add-count)')
    .option('--add-count <n>', 'how many hosts --add-like adds (default 1)')
    .option('--policy <file>', "policy keys (YAML or JSON, docs/policy.md) over the aggregate's policy")
    .option('--moves <n>', 'most moves to show', '20')
    .action(async (aggregate: string, flags: Flags) => {
      const moves = parseIntegerOption('--moves', flags.moves, { min: 0 });
      const body: Record<string, unknown> = { aggregate };
      if (flags.drain !== undefined) {
        const hosts = flags.drain.split(',').map((h) => h.trim());
        if (hosts.some((h) => h === ''))
          throw new ApiCallError(
            `--drain: expected host names separated by commas, got ${JSON.stringify(flags.drain)}`,
          );
        body.drainHosts = hosts;
      }
      if (flags.addCount !== undefined && flags.addLike === undefined)
        throw new ApiCallError('--add-count: needs --add-like HOST, the host the added ones are copied from');
      if (flags.addLike !== undefined)
        body.addHosts = {
          like: flags.addLike,
          count: parseIntegerOption('--add-count', flags.addCount ?? '1', { min: 1, max: 1000 }),
        };
      if (flags.policy !== undefined) {
        const doc = await readSettingsFile(flags.policy);
        if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
          throw new ApiCallError(`${flags.policy}: expected a mapping of policy keys`);
        body.policy = doc;
      }
      const api = await apiClient(flags);
      const answer = (await api.post('/v1/what-if', body)) as WhatIfAnswer;
      printJsonOr(flags.json, answer, () => formatWhatIf(answer, moves));
    });
}
