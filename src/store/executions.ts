// Executions as people look them up (newest first, by aggregate, state or plan); the executor
// itself goes through the journal.

import type { ExecutionRecord, ExecutionState } from '../records/executions.js';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { executionFromRow } from './journal.js';
import { type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import { toMs } from './time.js';

export interface ExecutionFilter {
  aggregate?: string;
  state?: ExecutionState;
  planId?: string;
  /** Started at or after. */
  startedFrom?: string;
}

export interface ExecutionRepository {
  /** Newest first (by start time, then id). */
  list(filter?: ExecutionFilter, page?: PageRequest): Promise<Page<ExecutionRecord>>;
}

/** Cursor "<startedAt ms>:<id>": the position of the last row returned. */
function parseCursor(cursor: string | null | undefined): { ms: number; id: string } | null {
  if (cursor === undefined || cursor === null) return null;
  const match = /^(\d{1,15}):(.+)$/s.exec(cursor);
  if (match === null)
    throw new StoreError(`store: not a cursor of the execution list: ${JSON.stringify(cursor)}`);
  return { ms: Number(match[1]), id: match[2]! };
}

export function createExecutionRepository(ctx: StoreContext): ExecutionRepository {
  const { db } = ctx;
  return {
    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = parseCursor(page?.cursor);
      let q = db.selectFrom('executions').selectAll();
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.state !== undefined) q = q.where('state', '=', filter.state);
      if (filter.planId !== undefined) q = q.where('plan_id', '=', filter.planId);
      if (filter.startedFrom !== undefined)
        q = q.where('started_at', '>=', toMs(filter.startedFrom, 'execution filter startedFrom'));
      if (after !== null)
        q = q.where((eb) =>
          eb.or([
            eb('started_at', '<', after.ms),
            eb.and([eb('started_at', '=', after.ms), eb('id', '<', after.id)]),
          ]),
        );
      const rows = await q
        .orderBy('started_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, executionFromRow, (r) => `${Number(r.started_at)}:${r.id}`);
    },
  };
}
