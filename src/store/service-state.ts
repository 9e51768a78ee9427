// The running service's own state in the store: run-time pauses (global or per aggregate) that an
// operator made through the API or the CLI, read by the loop every cycle so they survive a
// restart; and each cycle's imbalance per aggregate and dimension, the history the API charts.

import type { Selectable } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { parseJson } from './json.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { AggregateHistoryTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export interface StoredPause {
  /** null: the global pause. */
  aggregate: string | null;
  by: string;
  at: string;
  reason: string | null;
}

export interface PauseRepository {
  /** Every run-time pause in force. */
  list(): Promise<StoredPause[]>;
  /** Pauses the scope (replacing who and why when it already was). */
  set(pause: StoredPause): Promise<void>;
  /** Lifts the scope's pause; false when it was not paused. */
  clear(aggregate: string | null): Promise<boolean>;
}

/** Replicas: an abort asked on one replica for the execution another one runs. */
export interface AbortRequest {
  executionId: string;
  by: string;
  at: string;
}

export interface AbortRequestRepository {
  /** Records the request (the first one stands when asked twice). */
  request(r: AbortRequest): Promise<void>;
  list(): Promise<AbortRequest[]>;
  /** Removes the request once carried out (or moot); false when there was none. */
  clear(executionId: string): Promise<boolean>;
}

export interface DimensionStats {
  stddev: number;
  max: number;
  mean?: number;
}

export interface NewHistoryPoint {
  aggregate: string;
  at: string;
  imbalance: number;
  dimensions: Record<string, DimensionStats>;
  hosts: number;
  planMoves: number;
  /** The plan the cycle stored or kept, if any. */
  planId?: string | null;
  /** The planning inputs were those of `planId` (or of the last cycle when null): nothing was planned or stored. */
  unchanged?: boolean;
}

export interface HistoryPoint extends NewHistoryPoint {
  id: string;
}

export interface HistoryRepository {
  record(point: NewHistoryPoint): Promise<HistoryPoint>;
  /** Newest first. */
  list(filter: { aggregate?: string; since?: string }, page?: PageRequest): Promise<Page<HistoryPoint>>;
}

const GLOBAL = '';

export function createPauseRepository(ctx: StoreContext): PauseRepository {
  const { db, backend } = ctx;
  return {
    async list() {
      const rows = await db.selectFrom('service_pauses').selectAll().orderBy('scope').execute();
      return rows.map((r) => ({
        aggregate: r.scope === GLOBAL ? null : r.scope,
        by: r.paused_by,
        at: fromMs(r.at),
        reason: r.reason,
      }));
    },

    async set(p) {
      if (p.aggregate === '') throw new StoreError('store: a paused aggregate needs a name, got ""');
      const row = {
        scope: p.aggregate ?? GLOBAL,
        paused_by: p.by,
        at: toMs(p.at, 'pause at'),
        reason: p.reason,
      };
      const update = { paused_by: row.paused_by, at: row.at, reason: row.reason };
      if (backend === 'mysql')
        await db.insertInto('service_pauses').values(row).onDuplicateKeyUpdate(update).execute();
      else
        await db
          .insertInto('service_pauses')
          .values(row)
          .onConflict((oc) => oc.column('scope').doUpdateSet(update))
          .execute();
    },

    async clear(aggregate) {
      const r = await db
        .deleteFrom('service_pauses')
        .where('scope', '=', aggregate ?? GLOBAL)
        .executeTakeFirstOrThrow();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export function createAbortRequestRepository(ctx: StoreContext): AbortRequestRepository {
  const { db } = ctx;
  return {
    async request(r) {
      const exists = await db
        .selectFrom('abort_requests')
        .select('execution_id')
        .where('execution_id', '=', r.executionId)
        .executeTakeFirst();
      if (exists) return;
      await db
        .insertInto('abort_requests')
        .values({ execution_id: r.executionId, requested_by: r.by, at: toMs(r.at, 'abort request at') })
        .execute();
    },

    async list() {
      const rows = await db.selectFrom('abort_requests').selectAll().orderBy('at').execute();
      return rows.map((r) => ({ executionId: r.execution_id, by: r.requested_by, at: fromMs(r.at) }));
    },

    async clear(executionId) {
      const r = await db
        .deleteFrom('abort_requests')
        .where('execution_id', '=', executionId)
        .executeTakeFirstOrThrow();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

function isStats(v: unknown): v is DimensionStats {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.stddev === 'number' && typeof o.max === 'number';
}

function pointFromRow(row: Selectable<AggregateHistoryTable>): HistoryPoint {
  const raw = parseJson(row.dimensions);
  const dimensions: Record<string, DimensionStats> = {};
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw))
    for (const [k, v] of Object.entries(raw)) if (isStats(v)) dimensions[k] = v;
  return {
    id: String(row.id),
    aggregate: row.aggregate,
    at: fromMs(row.at),
    imbalance: Number(row.imbalance),
    dimensions,
    hosts: Number(row.hosts),
    planMoves: Number(row.plan_moves),
    planId: row.plan_id === null ? null : String(row.plan_id),
    unchanged: Number(row.unchanged) === 1,
  };
}

export function createHistoryRepository(ctx: StoreContext): HistoryRepository {
  const { db } = ctx;
  return {
    async record(p) {
      if (!Number.isFinite(p.imbalance))
        throw new StoreError(
          `store: history of ${p.aggregate}: imbalance must be a number, got ${p.imbalance}`,
        );
      for (const field of ['hosts', 'planMoves'] as const)
        if (!Number.isInteger(p[field]) || p[field] < 0)
          throw new StoreError(
            `store: history of ${p.aggregate}: ${field} must be an integer >= 0, got ${p[field]}`,
          );
      const row = {
        aggregate: p.aggregate,
        at: toMs(p.at, `history of ${p.aggregate}: at`),
        imbalance: p.imbalance,
        dimensions: JSON.stringify(p.dimensions),
        hosts: p.hosts,
        plan_moves: p.planMoves,
        plan_id: p.planId ?? null,
        unchanged: p.unchanged === true ? 1 : 0,
      };
      const result = await db.insertInto('aggregate_history').values(row).executeTakeFirstOrThrow();
      return pointFromRow({ ...row, id: Number(result.insertId) });
    },

    async list(filter, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('aggregate_history').selectAll();
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.since !== undefined) q = q.where('at', '>=', toMs(filter.since, 'history filter since'));
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, pointFromRow, (r) => String(r.id));
    },
  };
}
