// `aicerine maintenance start|status|pause|resume|abort|done`: rolling maintenance of an
// aggregate through the service API (docs/maintenance.md). Without a campaign id, pause, resume,
// abort and status take the one unfinished campaign (or the one of --aggregate).
import type { Command } from 'commander';
import {
  ApiCallError,
  type ApiClient,
  type ApiFlags,
  apiClient,
  formatTable,
  type Paged,
  printJsonOr,
  withApiOptions,
} from '../api-client.js';
import { describeCommand } from '../command-list.js';
import { parseIntegerOption } from '../numbers.js';

interface HostView {
  host: string;
  state: string;
  note: string | null;
  startedAt: string | null;
  drainedAt: string | null;
  handedOverAt: string | null;
  returnedAt: string | null;
  endedAt: string | null;
  moved: { live: number; cold: number };
  cannotMove: { server: string; name: string; why: string }[];
}

interface CampaignView {
  id: string;
  aggregate: string;
  state: string;
  requestedBy: string;
  requestedAt: string;
  settings: { parallel: number; validate: boolean; returnWhen: string };
  hosts: HostView[];
  note: string | null;
  taskId: string | null;
  driver: { state: string; waitingReason: string | null; error: string | null } | null;
  abortRequested: boolean;
  endedAt: string | null;
}

type Flags = ApiFlags & { aggregate?: string };

/** Minutes and seconds between two ISO times, or "-". */
function span(from: string | null, to: string | null): string {
  if (from === null || to === null) return '-';
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

function counts(c: CampaignView): string {
  const by = new Map<string, number>();
  for (const h of c.hosts) by.set(h.state, (by.get(h.state) ?? 0) + 1);
  return [...by].map(([s, n]) => `${n} ${s}`).join(', ');
}

export function describeCampaign(c: CampaignView): string {
  const head = [
    `campaign ${c.id}: aggregate ${c.aggregate}, ${c.state}${c.abortRequested && c.state !== 'ABORTED' ? ' (abort asked)' : ''}`,
    `  requested: ${c.requestedAt} by ${c.requestedBy}; driver task ${c.taskId ?? '-'}`,
    `  settings:  ${c.settings.parallel} at a time, ${c.settings.validate ? 'validate' : 'no validation'}, back when ${c.settings.returnWhen}`,
    `  hosts:     ${counts(c)}`,
  ];
  if (c.note) head.push(`  note:      ${c.note}`);
  const open = c.state === 'RUNNING' || c.state === 'PAUSED';
  if (open && (c.driver === null || c.driver.state === 'DONE' || c.driver.state === 'ERROR'))
    head.push(
      `  driver:    task ${c.taskId ?? '-'} ${c.driver === null ? 'is gone' : `ended ${c.driver.state}${c.driver.error ? ` (${c.driver.error})` : ''}`}: nothing moves until \`aicerine maintenance resume ${c.id}\``,
    );
  else if (open && c.driver?.state === 'WAITING')
    head.push(`  driver:    waiting: ${c.driver.waitingReason ?? ''}`);
  const table = formatTable(
    ['HOST', 'STATE', 'MOVED', 'DRAIN', 'HANDED OVER', 'AWAY', 'RE-ADMIT', 'NOTE'],
    c.hosts.map((h) => [
      h.host,
      h.state,
      h.startedAt === null ? '-' : `${h.moved.live} live, ${h.moved.cold} cold`,
      span(h.startedAt, h.drainedAt),
      h.handedOverAt,
      span(h.handedOverAt, h.returnedAt),
      span(h.returnedAt, h.endedAt),
      h.note,
    ]),
  );
  return `${head.join('\n')}\n\n${table}`;
}

/**
 * The campaign an id-less command means: the one unfinished campaign (of --aggregate); for
 * `status` (lastEnded), the newest one when none is unfinished, so its outcome can be read.
 */
async function pick(
  api: ApiClient,
  id: string | undefined,
  flags: Flags,
  lastEnded = false,
): Promise<CampaignView> {
  if (id !== undefined) return (await api.get(`/v1/maintenance/${encodeURIComponent(id)}`)) as CampaignView;
  const page = (await api.get('/v1/maintenance', {
    aggregate: flags.aggregate,
    limit: '1000',
  })) as Paged<CampaignView>;
  const open = page.items.filter((c) => c.state === 'RUNNING' || c.state === 'PAUSED');
  if (open.length === 1) return open[0]!;
  if (open.length === 0 && lastEnded && page.items.length > 0)
    return [...page.items].sort((a, b) => Number(b.id) - Number(a.id))[0]!;
  if (open.length === 0)
    throw new ApiCallError(
      `no unfinished maintenance campaign${flags.aggregate ? ` of ${flags.aggregate}` : ''}; name one by its id (aicerine maintenance list)`,
    );
  throw new ApiCallError(
    `${open.length} unfinished campaigns (${open.map((c) => `${c.id} on ${c.aggregate}`).join(', ')}): name one by its id or --aggregate`,
  );
}

export function register(program: Command): void {
  const m = program.command('maintenance').description(describeCommand('maintenance'));

  withApiOptions(
    m
      .command('start')
      .description('take the hosts of an aggregate out one by one (or N at a time) for maintenance'),
  )
    .requiredOption('--aggregate <name>', 'the Nova aggregate')
    .option('--hosts <h1,h2,...>', 'only these hosts, in this order (default: every host, by name)')
    .option('--parallel <n>', 'hosts out at once, at most (never more than the rest can take)')
    .option('--validate', 'run validate-compute on each host before re-admitting it')
    .option('--no-validate', 'do not validate (over maintenance.validate)')
    .option('--return-when <how>', 'done (aicerine maintenance done HOST) or service-restart')
    .action(
      async (
        flags: Flags & { hosts?: string; parallel?: string; validate?: boolean; returnWhen?: string },
        cmd: Command,
      ) => {
        const body: Record<string, unknown> = { aggregate: flags.aggregate };
        if (flags.hosts !== undefined)
          body.hosts = flags.hosts
            .split(',')
            .map((h) => h.trim())
            .filter((h) => h !== '');
        if (flags.parallel !== undefined)
          body.parallel = parseIntegerOption('--parallel', flags.parallel, { min: 1 });
        // Commander sets validate to true by default because of --no-validate: only a flag given counts.
        const source = cmd.getOptionValueSource('validate');
        if (source === 'cli') body.validate = flags.validate === true;
        if (flags.returnWhen !== undefined) {
          if (flags.returnWhen !== 'done' && flags.returnWhen !== 'service-restart')
            throw new ApiCallError(
              `--return-when: expected done or service-restart, got ${JSON.stringify(flags.returnWhen)}`,
            );
          body.returnWhen = flags.returnWhen;
        }
        const api = await apiClient(flags);
        const c = (await api.post('/v1/maintenance', body)) as CampaignView;
        printJsonOr(
          flags.json,
          c,
          () =>
            `campaign ${c.id} started on ${c.aggregate}: ${c.hosts.length} host(s), ${c.settings.parallel} at a time (aicerine maintenance status ${c.id})\n`,
        );
      },
    );

  withApiOptions(m.command('list', { isDefault: true }).description('campaigns, newest first'))
    .option('--aggregate <name>', 'only this aggregate')
    .action(async (flags: Flags) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/maintenance', { aggregate: flags.aggregate })) as Paged<CampaignView>;
      printJsonOr(flags.json, page, () =>
        page.items.length === 0
          ? '(none)\n'
          : formatTable(
              ['ID', 'AGGREGATE', 'STATE', 'HOSTS', 'REQUESTED', 'BY'],
              page.items.map((c) => [c.id, c.aggregate, c.state, counts(c), c.requestedAt, c.requestedBy]),
            ),
      );
    });

  withApiOptions(
    m
      .command('status')
      .description("a campaign's hosts: state, servers moved, timings, what each waits for")
      .argument('[id]', 'the campaign (default: the one unfinished, else the newest)'),
  )
    .option('--aggregate <name>', 'the unfinished (else the newest) campaign of this aggregate')
    .action(async (id: string | undefined, flags: Flags) => {
      const api = await apiClient(flags);
      const c = await pick(api, id, flags, true);
      printJsonOr(flags.json, c, () => describeCampaign(c));
    });

  for (const [verb, what] of [
    ['pause', 'take no further host out, validate or re-admit none, until resumed (what runs finishes)'],
    ['resume', 'go on with a paused campaign'],
    ['abort', 'cancel what runs and end the campaign; hosts stay as they are'],
  ] as const) {
    withApiOptions(
      m.command(verb).description(what).argument('[id]', 'the campaign (default: the one unfinished)'),
    )
      .option('--aggregate <name>', 'the unfinished campaign of this aggregate')
      .action(async (id: string | undefined, flags: Flags) => {
        const api = await apiClient(flags);
        const target = await pick(api, id, flags);
        const c = (await api.post(
          `/v1/maintenance/${encodeURIComponent(target.id)}/${verb}`,
          {},
        )) as CampaignView;
        printJsonOr(
          flags.json,
          c,
          () =>
            `campaign ${c.id}: ${verb === 'abort' ? 'aborting (running evacuations and validations are cancelled)' : c.state}\n`,
        );
      });
  }

  withApiOptions(
    m
      .command('done')
      .description('a host handed over for maintenance is back: validate (if asked) and re-admit it')
      .argument('<host>'),
  ).action(async (host: string, flags: ApiFlags) => {
    const api = await apiClient(flags);
    const c = (await api.post(`/v1/maintenance/hosts/${encodeURIComponent(host)}/done`, {})) as CampaignView;
    printJsonOr(flags.json, c, () => {
      const next = c.settings.validate ? 'it is validated, then re-admitted' : 'it is re-admitted';
      // A paused campaign re-admits nothing until it resumes: say so rather than promise it.
      return c.state === 'PAUSED'
        ? `${host} is back (campaign ${c.id}, paused): ${next} when the campaign resumes (\`aicerine maintenance resume\`)\n`
        : `${host} is back (campaign ${c.id}): ${next}\n`;
    });
  });
}
