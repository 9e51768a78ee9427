// Plans as the control loop stores them (one aggregate each), the operator's per-move decisions,
// and the plan's status, derived from the decisions and moved on by the loop (executed,
// superseded, expired). Decisions and status changes are transactions on the plan's row.

import type { Kysely } from 'kysely';
import { parsePlan } from '../formats/plan-file.js';
import type { Move, Plan } from '../model/plan.js';
import { lockRows, type StoreBackend, type StoreContext, writeTransaction } from './backend.js';
import { StoreError } from './errors.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { Database, PlanDecisionsTable, PlansTable } from './schema.js';
import { fromMs, fromMsOrNull, toMs, toMsOrNull } from './time.js';

/** How the control loop treats an aggregate (see the configuration); recorded with each plan. */
export const LOOP_MODES = ['observe', 'assisted', 'active'] as const;
export type LoopMode = (typeof LOOP_MODES)[number];

export const PLAN_STATUSES = [
  'proposed',
  'approved',
  'partially-approved',
  'rejected',
  'expired',
  'superseded',
  'executed',
  /** An observe-mode plan: stored for the record, never to be decided on or executed. */
  'observed',
] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

/** Statuses in which a plan may still be decided on or executed. */
export const OPEN_PLAN_STATUSES: readonly PlanStatus[] = ['proposed', 'partially-approved', 'approved'];

export const MOVE_DECISIONS = ['approved', 'rejected'] as const;
export type MoveDecisionKind = (typeof MOVE_DECISIONS)[number];

export interface PlanSummary {
  id: string;
  aggregate: string;
  mode: LoopMode;
  status: PlanStatus;
  snapshotTakenAt: string;
  createdAt: string;
  statusChangedAt: string;
  /** When the plan (or its approval) stops being executable; null: never. */
  expiresAt: string | null;
  moveCount: number;
}

export interface StoredPlan extends PlanSummary {
  plan: Plan;
}

export interface MoveDecision {
  planId: string;
  step: number;
  decision: MoveDecisionKind;
  decidedBy: string;
  comment: string | null;
  decidedAt: string;
}

export interface NewPlan {
  aggregate: string;
  mode: LoopMode;
  /** One aggregate's plan: `plan.aggregates` holds it, and no other entry has moves. */
  plan: Plan;
  createdAt: string;
  expiresAt?: string | null;
  /** 'approved' for a plan that needs no operator (active mode); default 'proposed'. */
  status?: 'proposed' | 'approved';
}

export interface DecisionInput {
  /** Steps of the plan's moves, or 'all' for the whole plan. */
  steps: number[] | 'all';
  decision: MoveDecisionKind;
  by: string;
  comment?: string | null;
  at: string;
  /** A new expiry for the plan (an approval lasts this long); absent keeps the current one. */
  expiresAt?: string | null;
}

export interface PlanFilter {
  aggregate?: string;
  statuses?: PlanStatus[];
  mode?: LoopMode;
  /** Created at or after. */
  createdFrom?: string;
  /** Created before. */
  createdBefore?: string;
}

export interface PlanRepository {
  /** Validates and stores a plan; returns it with its store id. */
  create(input: NewPlan): Promise<StoredPlan>;
  get(planId: string): Promise<StoredPlan | null>;
  /** Newest first, without the plan documents. */
  list(filter?: PlanFilter, page?: PageRequest): Promise<Page<PlanSummary>>;
  /**
   * Records a decision on some or all moves (a later decision on a step replaces the earlier one)
   * and derives the plan's status: every move approved → approved; every move rejected →
   * rejected; some approved → partially-approved; otherwise proposed. Refused unless the plan is
   * open and not past its expiry.
   */
  decide(planId: string, input: DecisionInput): Promise<PlanSummary>;
  decisions(planId: string): Promise<MoveDecision[]>;
  /** Compare-and-set on the status: moves it to `to` only from one of `from`; false otherwise. */
  setStatus(planId: string, from: readonly PlanStatus[], to: PlanStatus, at: string): Promise<boolean>;
  /** Marks every open plan whose expiry is at or before `at` expired; returns their ids. */
  expireDue(at: string): Promise<string[]>;
  /** Marks the aggregate's other open plans superseded by `planId`; returns their ids. */
  supersedeOthers(aggregate: string, planId: string, at: string): Promise<string[]>;
}

function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

function summaryFromRow(row: Omit<PlansTable, 'plan_json' | 'id'> & { id: number }): PlanSummary {
  if (!isOneOf(PLAN_STATUSES, row.status) || !isOneOf(LOOP_MODES, row.mode))
    throw new StoreError(
      `store: plan ${row.id} holds an unknown status or mode (${row.status}, ${row.mode})`,
    );
  return {
    id: String(row.id),
    aggregate: row.aggregate,
    mode: row.mode,
    status: row.status,
    snapshotTakenAt: fromMs(row.snapshot_taken_at),
    createdAt: fromMs(row.created_at),
    statusChangedAt: fromMs(row.status_changed_at),
    expiresAt: fromMsOrNull(row.expires_at),
    moveCount: row.move_count,
  };
}

function decisionFromRow(row: PlanDecisionsTable): MoveDecision {
  if (!isOneOf(MOVE_DECISIONS, row.decision))
    throw new StoreError(
      `store: plan ${row.plan_id} step ${row.step} holds an unknown decision ${row.decision}`,
    );
  return {
    planId: String(row.plan_id),
    step: row.step,
    decision: row.decision,
    decidedBy: row.decided_by,
    comment: row.comment,
    decidedAt: fromMs(row.decided_at),
  };
}

/** The store id as the integer key, or null for a string that cannot be one (no such plan). */
function planKey(planId: string): number | null {
  return /^\d{1,15}$/.test(planId) ? Number(planId) : null;
}

/** The moves of the plan's one aggregate. */
function aggregateMoves(plan: Plan, aggregate: string): Move[] {
  const entry = plan.aggregates.find((a) => a.name === aggregate);
  if (entry === undefined)
    throw new StoreError(
      `store: the plan has no aggregate ${JSON.stringify(aggregate)} (plan.aggregates[].name)`,
    );
  const others = plan.aggregates.filter((a) => a.name !== aggregate && a.moves.length > 0).map((a) => a.name);
  if (others.length > 0)
    throw new StoreError(
      `store: a stored plan covers one aggregate (${aggregate}), but it also has moves for ${others.join(', ')}`,
    );
  return entry.moves;
}

function derivedStatus(moveCount: number, approved: number, rejected: number): PlanStatus {
  if (approved === moveCount) return 'approved';
  if (rejected === moveCount) return 'rejected';
  return approved > 0 ? 'partially-approved' : 'proposed';
}

export function createPlanRepository(ctx: StoreContext): PlanRepository {
  const { db, backend } = ctx;
  const SUMMARY = [
    'id',
    'aggregate',
    'mode',
    'status',
    'snapshot_taken_at',
    'created_at',
    'status_changed_at',
    'expires_at',
    'move_count',
  ] as const;

  async function lockedPlan(trx: Kysely<Database>, be: StoreBackend, key: number) {
    return lockRows(be, trx.selectFrom('plans').select(SUMMARY).where('id', '=', key)).executeTakeFirst();
  }

  return {
    async create(input) {
      if (!isOneOf(LOOP_MODES, input.mode))
        throw new StoreError(`store: plan mode must be one of ${LOOP_MODES.join(', ')}, got ${input.mode}`);
      const plan = parsePlan(input.plan);
      const moves = aggregateMoves(plan, input.aggregate);
      const createdAt = toMs(input.createdAt, 'plan createdAt');
      const status = input.status ?? 'proposed';
      if (status !== 'proposed' && status !== 'approved')
        throw new StoreError(`store: a new plan is proposed or approved, got ${JSON.stringify(status)}`);
      const row = {
        aggregate: input.aggregate,
        mode: input.mode,
        status,
        snapshot_taken_at: toMs(plan.snapshotTakenAt, 'plan snapshotTakenAt'),
        created_at: createdAt,
        status_changed_at: createdAt,
        expires_at: toMsOrNull(input.expiresAt, 'plan expiresAt'),
        move_count: moves.length,
        plan_json: JSON.stringify(plan),
      };
      const result = await db.insertInto('plans').values(row).executeTakeFirstOrThrow();
      const id = Number(result.insertId);
      return { ...summaryFromRow({ ...row, id }), plan };
    },

    async get(planId) {
      const key = planKey(planId);
      if (key === null) return null;
      const row = await db.selectFrom('plans').selectAll().where('id', '=', key).executeTakeFirst();
      if (row === undefined) return null;
      return { ...summaryFromRow(row), plan: JSON.parse(row.plan_json) as Plan };
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('plans').select(SUMMARY);
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.mode !== undefined) q = q.where('mode', '=', filter.mode);
      if (filter.statuses !== undefined) {
        if (filter.statuses.length === 0) return { items: [], nextCursor: null };
        q = q.where('status', 'in', filter.statuses);
      }
      if (filter.createdFrom !== undefined)
        q = q.where('created_at', '>=', toMs(filter.createdFrom, 'plan filter createdFrom'));
      if (filter.createdBefore !== undefined)
        q = q.where('created_at', '<', toMs(filter.createdBefore, 'plan filter createdBefore'));
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, summaryFromRow, (r) => String(r.id));
    },

    async decide(planId, input) {
      const key = planKey(planId);
      const at = toMs(input.at, `plan ${planId} decision at`);
      const expiresAt = input.expiresAt === undefined ? undefined : toMsOrNull(input.expiresAt, 'expiresAt');
      if (!isOneOf(MOVE_DECISIONS, input.decision))
        throw new StoreError(
          `store: a decision is approved or rejected, got ${JSON.stringify(input.decision)}`,
        );
      if (input.by === '') throw new StoreError(`store: plan ${planId}: a decision names who made it (by)`);
      return writeTransaction(ctx, async (trx) => {
        const row = key === null ? undefined : await lockedPlan(trx, backend, key);
        if (row === undefined || key === null) throw new StoreError(`store: no plan ${planId}`);
        if (!OPEN_PLAN_STATUSES.includes(row.status as PlanStatus))
          throw new StoreError(
            `store: plan ${planId} is ${row.status}; decisions are taken on open plans only`,
          );
        if (row.expires_at !== null && row.expires_at <= at)
          throw new StoreError(`store: plan ${planId} expired at ${fromMs(row.expires_at)}`);
        const json = await trx
          .selectFrom('plans')
          .select('plan_json')
          .where('id', '=', key)
          .executeTakeFirstOrThrow();
        const plan = JSON.parse(json.plan_json) as Plan;
        const known = new Set(aggregateMoves(plan, row.aggregate).map((m) => m.step));
        const steps = input.steps === 'all' ? [...known] : [...new Set(input.steps)];
        const unknown = steps.filter((s) => !known.has(s));
        if (unknown.length > 0)
          throw new StoreError(`store: plan ${planId} has no step ${unknown.join(', ')}`);
        if (steps.length > 0) {
          await trx
            .deleteFrom('plan_decisions')
            .where('plan_id', '=', key)
            .where('step', 'in', steps)
            .execute();
          await trx
            .insertInto('plan_decisions')
            .values(
              steps.map((step) => ({
                plan_id: key,
                step,
                decision: input.decision,
                decided_by: input.by,
                comment: input.comment ?? null,
                decided_at: at,
              })),
            )
            .execute();
        }
        const counts = await trx
          .selectFrom('plan_decisions')
          .select(['decision', (eb) => eb.fn.countAll<number | string>().as('n')])
          .where('plan_id', '=', key)
          .groupBy('decision')
          .execute();
        const count = (d: MoveDecisionKind) => Number(counts.find((c) => c.decision === d)?.n ?? 0);
        // A plan with no moves takes the whole-plan decision itself.
        const status =
          row.move_count === 0
            ? input.decision
            : derivedStatus(row.move_count, count('approved'), count('rejected'));
        const changes: { status?: string; status_changed_at?: number; expires_at?: number | null } = {};
        if (status !== row.status) {
          changes.status = status;
          changes.status_changed_at = at;
        }
        if (expiresAt !== undefined) changes.expires_at = expiresAt;
        if (Object.keys(changes).length > 0)
          await trx.updateTable('plans').set(changes).where('id', '=', key).execute();
        return summaryFromRow({ ...row, ...changes, id: key });
      });
    },

    async decisions(planId) {
      const key = planKey(planId);
      if (key === null) return [];
      const rows = await db
        .selectFrom('plan_decisions')
        .selectAll()
        .where('plan_id', '=', key)
        .orderBy('step')
        .execute();
      return rows.map(decisionFromRow);
    },

    async setStatus(planId, from, to, at) {
      if (!isOneOf(PLAN_STATUSES, to))
        throw new StoreError(`store: unknown plan status ${JSON.stringify(to)}`);
      const when = toMs(at, `plan ${planId} status at`);
      const key = planKey(planId);
      if (key === null || from.length === 0) return false;
      const result = await db
        .updateTable('plans')
        .set({ status: to, status_changed_at: when })
        .where('id', '=', key)
        .where('status', 'in', [...from])
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return true;
      const exists = await db.selectFrom('plans').select('id').where('id', '=', key).executeTakeFirst();
      if (exists === undefined) throw new StoreError(`store: no plan ${planId}`);
      return false;
    },

    async expireDue(at) {
      const when = toMs(at, 'expireDue at');
      return writeTransaction(ctx, async (trx) => {
        const due = await lockRows(
          backend,
          trx
            .selectFrom('plans')
            .select('id')
            .where('status', 'in', [...OPEN_PLAN_STATUSES])
            .where('expires_at', '<=', when)
            .orderBy('id'),
        ).execute();
        const ids = due.map((r) => r.id);
        if (ids.length > 0)
          await trx
            .updateTable('plans')
            .set({ status: 'expired', status_changed_at: when })
            .where('id', 'in', ids)
            .execute();
        return ids.map(String);
      });
    },

    async supersedeOthers(aggregate, planId, at) {
      const when = toMs(at, 'supersedeOthers at');
      const key = planKey(planId) ?? -1;
      return writeTransaction(ctx, async (trx) => {
        const open = await lockRows(
          backend,
          trx
            .selectFrom('plans')
            .select('id')
            .where('aggregate', '=', aggregate)
            .where('status', 'in', [...OPEN_PLAN_STATUSES])
            .where('id', '!=', key)
            .orderBy('id'),
        ).execute();
        const ids = open.map((r) => r.id);
        if (ids.length > 0)
          await trx
            .updateTable('plans')
            .set({ status: 'superseded', status_changed_at: when })
            .where('id', 'in', ids)
            .execute();
        return ids.map(String);
      });
    },
  };
}
