// `aicerine plans list|show|approve|reject`: the control loop's plans through the API.
import type { Command } from 'commander';
import {
  type ApiFlags,
  apiClient,
  type Paged,
  parseSteps,
  printJsonOr,
  printPage,
  withApiOptions,
} from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface PlanSummary {
  id: string;
  aggregate: string;
  mode: string;
  status: string;
  createdAt: string;
  expiresAt: string | null;
  moveCount: number;
}
interface Move {
  step: number;
  wave: number;
  server: string;
  serverName?: string;
  from: string;
  to: string;
  reason: string;
}
interface PlanDetail extends PlanSummary {
  plan: {
    aggregates: {
      name: string;
      moves: Move[];
      before: { imbalance: number };
      after: { imbalance: number };
    }[];
  };
  decisions: { step: number; decision: string; decidedBy: string; comment: string | null }[];
}

type ListFlags = ApiFlags & { aggregate?: string; status?: string; limit?: string; cursor?: string };
type DecideFlags = ApiFlags & { steps?: string; comment?: string };

function showPlan(p: PlanDetail): string {
  const agg = p.plan.aggregates.find((a) => a.name === p.aggregate);
  const decided = new Map(p.decisions.map((d) => [d.step, d]));
  const lines = [
    `plan ${p.id}: ${p.aggregate} (${p.mode}), ${p.status}, ${p.moveCount} moves, made ${p.createdAt}${p.expiresAt ? `, expires ${p.expiresAt}` : ''}`,
  ];
  if (agg) lines.push(`imbalance ${agg.before.imbalance.toFixed(4)} -> ${agg.after.imbalance.toFixed(4)}`);
  for (const m of agg?.moves ?? []) {
    const d = decided.get(m.step);
    lines.push(
      `  ${String(m.step).padStart(3)}  wave ${m.wave}  ${m.serverName ?? m.server}  ${m.from} -> ${m.to}  ${d ? `[${d.decision} by ${d.decidedBy}${d.comment ? `: ${d.comment}` : ''}]` : '[undecided]'}  ${m.reason}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `plans show ID` and `show-plan ID`. */
export function showPlanCommand(cmd: Command): Command {
  return withApiOptions(cmd.description('a plan, its moves and the decisions taken').argument('<id>')).action(
    async (id: string, flags: ApiFlags) => {
      const api = await apiClient(flags);
      const plan = (await api.get(`/v1/plans/${encodeURIComponent(id)}`)) as PlanDetail;
      printJsonOr(flags.json, plan, () => showPlan(plan));
    },
  );
}

/** `plans approve|reject ID` and `approve|reject ID`. */
export function decideCommand(cmd: Command, verb: 'approve' | 'reject'): Command {
  return withApiOptions(
    cmd.description(`${verb} a whole plan, or the moves given with --steps`).argument('<id>'),
  )
    .option('--steps <list>', 'step numbers, comma-separated (default: the whole plan)')
    .option('--comment <text>', 'why, for the audit log')
    .action(async (id: string, flags: DecideFlags) => {
      const api = await apiClient(flags);
      const body: Record<string, unknown> = {};
      if (flags.steps !== undefined) body.steps = parseSteps(flags.steps);
      if (flags.comment !== undefined) body.comment = flags.comment;
      const p = (await api.post(`/v1/plans/${encodeURIComponent(id)}/${verb}`, body)) as PlanSummary;
      printJsonOr(flags.json, p, () => `plan ${p.id}: ${p.status}\n`);
    });
}

export function register(program: Command): void {
  const plans = program.command('plans').description(describeCommand('plans'));
  withApiOptions(plans.command('list', { isDefault: true }).description('plans, newest first'))
    .option('--aggregate <name>', 'only this aggregate')
    .option('--status <list>', 'only these statuses, comma-separated (proposed, approved, ...)')
    .option('--limit <n>', 'plans per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: ListFlags) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/plans', {
        aggregate: flags.aggregate,
        status: flags.status,
        limit: flags.limit,
        cursor: flags.cursor,
      })) as Paged<PlanSummary>;
      printPage(
        page,
        ['ID', 'AGGREGATE', 'MODE', 'STATUS', 'MOVES', 'CREATED', 'EXPIRES'],
        (p) => [p.id, p.aggregate, p.mode, p.status, p.moveCount, p.createdAt, p.expiresAt],
        flags.json,
      );
    });
  showPlanCommand(plans.command('show'));
  for (const verb of ['approve', 'reject'] as const) decideCommand(plans.command(verb), verb);
}
