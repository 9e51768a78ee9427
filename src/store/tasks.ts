// The task table (docs/tasks.md). Every state switch is a compare-and-set on the row's version:
// the worker decides under the cluster-wide `tasks/table` lock, and the version makes a decision
// taken on a stale read (a lock that lapsed while its holder was paused) change nothing.

import { type Selectable, sql, type Updateable } from 'kysely';
import {
  type NewTaskBatch,
  TASK_STATES,
  type TaskFilter,
  type TaskPatch,
  type TaskRecord,
  type TaskState,
} from '../records/tasks.js';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { parseJson, parseStringArray } from './json.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { TasksTable } from './schema.js';
import { fromMs, fromMsOrNull, toMs } from './time.js';

function taskFromRow(row: Selectable<TasksTable>): TaskRecord {
  const args = parseJson(row.args);
  return {
    id: String(row.id),
    kind: row.kind,
    args: args !== null && typeof args === 'object' && !Array.isArray(args) ? args : {},
    requestedBy: row.requested_by,
    requestedAt: fromMs(row.requested_at),
    batch: row.batch,
    afterBatch: Number(row.after_batch) === 1,
    state: row.state as TaskState,
    progress: {
      done: Number(row.progress_done),
      total: row.progress_total === null ? null : Number(row.progress_total),
      detail: row.progress_detail,
    },
    result: row.result === null ? null : parseJson(row.result),
    error: row.error,
    waitingReason: row.waiting_reason,
    hosts: parseStringArray(row.hosts),
    checkpoint: row.checkpoint === null ? null : parseJson(row.checkpoint),
    owner: row.owner,
    cancelRequested: Number(row.cancel_requested) === 1,
    attempts: Number(row.attempts),
    version: Number(row.version),
    startedAt: fromMsOrNull(row.started_at),
    heartbeatAt: fromMsOrNull(row.heartbeat_at),
    updatedAt: fromMs(row.updated_at),
    endedAt: fromMsOrNull(row.ended_at),
  };
}

function columns(patch: TaskPatch, at: number): Updateable<TasksTable> {
  const out: Updateable<TasksTable> = { updated_at: at };
  if (patch.state !== undefined) {
    if (!TASK_STATES.includes(patch.state)) throw new StoreError(`store: not a task state: ${patch.state}`);
    out.state = patch.state;
  }
  if (patch.progress !== undefined) {
    out.progress_done = patch.progress.done;
    out.progress_total = patch.progress.total;
    out.progress_detail = patch.progress.detail;
  }
  if (patch.result !== undefined) out.result = patch.result === null ? null : JSON.stringify(patch.result);
  if (patch.error !== undefined) out.error = patch.error;
  if (patch.waitingReason !== undefined) out.waiting_reason = patch.waitingReason;
  if (patch.checkpoint !== undefined)
    out.checkpoint = patch.checkpoint === null ? null : JSON.stringify(patch.checkpoint);
  if (patch.owner !== undefined) out.owner = patch.owner;
  if (patch.cancelRequested !== undefined) out.cancel_requested = patch.cancelRequested ? 1 : 0;
  if (patch.attempts !== undefined) out.attempts = patch.attempts;
  if (patch.startedAt !== undefined)
    out.started_at = patch.startedAt === null ? null : toMs(patch.startedAt, 'task startedAt');
  if (patch.heartbeatAt !== undefined)
    out.heartbeat_at = patch.heartbeatAt === null ? null : toMs(patch.heartbeatAt, 'task heartbeatAt');
  if (patch.endedAt !== undefined)
    out.ended_at = patch.endedAt === null ? null : toMs(patch.endedAt, 'task endedAt');
  return out;
}

/** A LIKE pattern matching `"host"` inside the hosts JSON array, with `!` as the escape. */
function hostPattern(host: string): string {
  return `%${JSON.stringify(host).replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/**
 * The task table on SQL. It implements the task modules' port (TaskRepository, src/tasks/ports.ts)
 * by shape: the store does not import the tasks, the service hands this to them.
 */
export type SqlTaskTable = ReturnType<typeof createTaskRepository>;

export function createTaskRepository(ctx: StoreContext) {
  const { db } = ctx;
  const get = async (id: string): Promise<TaskRecord | null> => {
    if (!/^\d{1,15}$/.test(id)) return null;
    const row = await db.selectFrom('tasks').selectAll().where('id', '=', Number(id)).executeTakeFirst();
    return row === undefined ? null : taskFromRow(row);
  };
  return {
    async create(batch: NewTaskBatch): Promise<TaskRecord[]> {
      if (batch.tasks.length === 0) throw new StoreError('store: a task request creates at least one task');
      if (batch.requestedBy === '' || batch.batch === '')
        throw new StoreError('store: a task names who requested it and its batch');
      const at = toMs(batch.requestedAt, 'task requestedAt');
      return db.transaction().execute(async (trx) => {
        const ids: number[] = [];
        for (const t of batch.tasks) {
          if (t.kind === '') throw new StoreError('store: a task has a kind');
          const result = await trx
            .insertInto('tasks')
            .values({
              kind: t.kind,
              args: JSON.stringify(t.args),
              requested_by: batch.requestedBy,
              requested_at: at,
              batch: batch.batch,
              after_batch: t.afterBatch ? 1 : 0,
              state: 'SCHEDULED',
              progress_done: 0,
              progress_total: null,
              progress_detail: 'scheduled',
              result: null,
              error: null,
              waiting_reason: null,
              hosts: JSON.stringify(t.hosts),
              checkpoint: null,
              owner: null,
              cancel_requested: 0,
              attempts: 0,
              version: 1,
              started_at: null,
              heartbeat_at: null,
              updated_at: at,
              ended_at: null,
            })
            .executeTakeFirstOrThrow();
          ids.push(Number(result.insertId));
        }
        const rows = await trx.selectFrom('tasks').selectAll().where('id', 'in', ids).orderBy('id').execute();
        return rows.map(taskFromRow);
      });
    },

    get,

    async list(filter: TaskFilter = {}, page?: PageRequest): Promise<Page<TaskRecord>> {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('tasks').selectAll();
      if (filter.state !== undefined) q = q.where('state', '=', filter.state);
      if (filter.kind !== undefined) q = q.where('kind', '=', filter.kind);
      if (filter.batch !== undefined) q = q.where('batch', '=', filter.batch);
      if (filter.host !== undefined)
        q = q.where(sql<boolean>`hosts like ${hostPattern(filter.host)} escape '!'`);
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, taskFromRow, (r) => String(r.id));
    },

    async unfinished(): Promise<TaskRecord[]> {
      const rows = await db
        .selectFrom('tasks')
        .selectAll()
        .where('state', 'in', ['SCHEDULED', 'WAITING', 'RUNNING'])
        .orderBy('id')
        .execute();
      return rows.map(taskFromRow);
    },

    async update(id: string, version: number, patch: TaskPatch, at: string): Promise<TaskRecord | null> {
      if (!/^\d{1,15}$/.test(id)) return null;
      const result = await db
        .updateTable('tasks')
        .set({ ...columns(patch, toMs(at, 'task update at')), version: version + 1 })
        .where('id', '=', Number(id))
        .where('version', '=', version)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return null;
      return get(id);
    },

    async updateRunning(id: string, owner: string, patch: TaskPatch, at: string): Promise<TaskRecord | null> {
      if (!/^\d{1,15}$/.test(id)) return null;
      const result = await db
        .updateTable('tasks')
        .set((eb) => ({ ...columns(patch, toMs(at, 'task update at')), version: eb('version', '+', 1) }))
        .where('id', '=', Number(id))
        .where('state', '=', 'RUNNING')
        .where('owner', '=', owner)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return null;
      return get(id);
    },

    async deleteDone(before: string): Promise<number> {
      const result = await db
        .deleteFrom('tasks')
        .where('state', '=', 'DONE')
        .where('ended_at', '<', toMs(before, 'task purge before'))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
