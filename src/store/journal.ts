// The executor's journal on SQL: every call is committed before it returns (one statement, one
// transaction, or a share of one: GroupCommit), so an acknowledged write survives a crash of the
// process (kill -9) on both backends.

import type { Kysely } from 'kysely';
import {
  EXECUTION_STATES,
  type ExecutionRecord,
  type ExecutionState,
  FINAL_MOVE_STATES,
  MOVE_STATES,
  type MoveRecord,
  type MoveState,
  type MoveTransition,
  type PlannedMove,
} from '../records/executions.js';
import { lockRows, type StoreContext, writeTransaction } from './backend.js';
import { StoreError } from './errors.js';
import { enforceFence, type OwnerFence } from './ownership.js';
import type { Database, ExecutionMovesTable, ExecutionsTable } from './schema.js';
import { fromMs, fromMsOrNull, toMs } from './time.js';

/** Rows per INSERT: well under MariaDB's 65,535 and SQLite's 32,766 bound parameters. */
const INSERT_CHUNK = 500;
const IN_FLIGHT: readonly MoveState[] = ['issuing', 'migrating', 'aborting'];

export function isMoveState(value: string): value is MoveState {
  return (MOVE_STATES as readonly string[]).includes(value);
}

export function isExecutionState(value: string): value is ExecutionState {
  return (EXECUTION_STATES as readonly string[]).includes(value);
}

function moveState(value: string, where: string): MoveState {
  if (!isMoveState(value))
    throw new StoreError(`store: ${where} holds an unknown move state ${JSON.stringify(value)}`);
  return value;
}

function executionState(value: string, where: string): ExecutionState {
  if (!isExecutionState(value))
    throw new StoreError(`store: ${where} holds an unknown execution state ${JSON.stringify(value)}`);
  return value;
}

export function executionFromRow(row: ExecutionsTable): ExecutionRecord {
  return {
    id: row.id,
    aggregate: row.aggregate,
    planId: row.plan_id,
    state: executionState(row.state, `execution ${row.id}`),
    startedAt: fromMs(row.started_at),
    endedAt: fromMsOrNull(row.ended_at),
    startedBy: row.started_by,
  };
}

/**
 * The fence of the aggregate's owner, asked at every write; it throws (changing nothing) when this
 * process does not own the aggregate now. Absent: a single process, no fencing.
 */
export type FenceOf = (aggregate: string) => OwnerFence;

function moveFromRow(row: ExecutionMovesTable): MoveRecord {
  const move: MoveRecord = {
    executionId: row.execution_id,
    step: row.step,
    wave: row.wave,
    serverId: row.server_id,
    from: row.from_host,
    to: row.to_host,
    estimatedSeconds: row.estimated_seconds,
    state: moveState(row.state, `execution ${row.execution_id} step ${row.step}`),
    attempt: row.attempt,
    novaMigrationId: row.nova_migration_id === null ? null : Number(row.nova_migration_id),
    issuedAt: fromMsOrNull(row.issued_at),
    endedAt: fromMsOrNull(row.ended_at),
    detail: row.detail,
  };
  if (row.server_name !== null) move.serverName = row.server_name;
  if (row.after_steps !== null) move.after = JSON.parse(row.after_steps) as number[];
  return move;
}

function checkMoves(executionId: string, moves: PlannedMove[]): void {
  const seen = new Set<number>();
  moves.forEach((m, i) => {
    const where = `execution ${executionId}: moves[${i}]`;
    if (!Number.isInteger(m.step) || m.step < 1)
      throw new StoreError(`${where}.step must be a positive integer, got ${m.step}`);
    if (seen.has(m.step)) throw new StoreError(`${where}.step ${m.step} appears twice`);
    seen.add(m.step);
    if (!Number.isInteger(m.wave) || m.wave < 1)
      throw new StoreError(`${where}.wave must be a positive integer, got ${m.wave}`);
    if (m.serverId === '' || m.from === '' || m.to === '')
      throw new StoreError(`${where}: serverId, from and to must not be empty`);
    if (!Number.isFinite(m.estimatedSeconds) || m.estimatedSeconds < 0)
      throw new StoreError(`${where}.estimatedSeconds must be a number >= 0, got ${m.estimatedSeconds}`);
  });
  moves.forEach((m, i) => {
    // `after` may name steps outside this execution (moves run earlier, or not approved): the
    // executor decides what that means. It must still name steps.
    for (const dep of m.after ?? [])
      if (!Number.isInteger(dep) || dep < 1)
        throw new StoreError(
          `execution ${executionId}: moves[${i}].after must list positive steps, got ${dep}`,
        );
  });
}

type CompareAndSet = (q: Kysely<Database>) => Promise<{ numUpdatedRows: bigint }>;

/**
 * Compare-and-sets asked while a commit is under way, or in the same turn of the event loop, are
 * committed together in one transaction: each caller still returns only once its change is
 * committed, but moves that change state together (a listing that shows several migrations
 * ended, the pre-flights of the moves it let start) wait for one commit (one fsync) instead of
 * one each, in turn. better-sqlite3 commits synchronously: every fsync stops the event loop,
 * and with it the calls to Nova of every other move. Each update stays conditional on its own
 * row, so one that finds its move changed under it changes nothing and fails alone; an error of
 * the transaction itself (the disk, a lock held too long) fails every update of the batch, none
 * of which was committed.
 */
class GroupCommit {
  private queue: { cas: CompareAndSet; resolve: (n: number) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;

  constructor(private readonly ctx: StoreContext) {}

  add(cas: CompareAndSet): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ cas, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    try {
      const first = batch[0];
      // One update alone needs no transaction around it: it commits by itself.
      const counts =
        batch.length === 1 && first !== undefined
          ? [Number((await first.cas(this.ctx.db)).numUpdatedRows)]
          : await writeTransaction(this.ctx, async (trx) => {
              const out: number[] = [];
              for (const op of batch) out.push(Number((await op.cas(trx)).numUpdatedRows));
              return out;
            });
      for (const [i, op] of batch.entries()) op.resolve(counts[i] ?? 0);
    } catch (e) {
      for (const op of batch) op.reject(e);
    }
    if (this.queue.length === 0) this.busy = false;
    else setImmediate(() => void this.flush());
  }
}

/**
 * The journal on SQL. It implements the executor's port (ExecutionJournal, src/executor/journal.ts)
 * by shape: the store does not import the executor, the service hands this to it.
 */
export type SqlJournal = ReturnType<typeof createJournal>;

export function createJournal(ctx: StoreContext, fenceOf?: FenceOf) {
  const { db } = ctx;
  const groupCommit = new GroupCommit(ctx);

  async function moveRow(executionId: string, step: number): Promise<ExecutionMovesTable | undefined> {
    return db
      .selectFrom('execution_moves')
      .selectAll()
      .where('execution_id', '=', executionId)
      .where('step', '=', step)
      .executeTakeFirst();
  }

  return {
    async createExecution(
      execution: Omit<ExecutionRecord, 'state' | 'endedAt'>,
      moves: PlannedMove[],
    ): Promise<void> {
      if (execution.id === '') throw new StoreError('store: an execution id must not be empty');
      const startedAt = toMs(execution.startedAt, `execution ${execution.id}: startedAt`);
      checkMoves(execution.id, moves);
      const fence = fenceOf?.(execution.aggregate);
      await writeTransaction(ctx, async (trx) => {
        if (fence !== undefined) await enforceFence(trx, ctx.backend, fence, startedAt);
        const existing = await trx
          .selectFrom('executions')
          .select('id')
          .where('id', '=', execution.id)
          .executeTakeFirst();
        if (existing !== undefined) throw new StoreError(`store: execution ${execution.id} already exists`);
        await trx
          .insertInto('executions')
          .values({
            id: execution.id,
            aggregate: execution.aggregate,
            plan_id: execution.planId,
            state: 'running',
            started_at: startedAt,
            ended_at: null,
            started_by: execution.startedBy,
          })
          .execute();
        for (let i = 0; i < moves.length; i += INSERT_CHUNK) {
          const rows = moves.slice(i, i + INSERT_CHUNK).map(
            (m): ExecutionMovesTable => ({
              execution_id: execution.id,
              step: m.step,
              wave: m.wave,
              server_id: m.serverId,
              server_name: m.serverName ?? null,
              from_host: m.from,
              to_host: m.to,
              after_steps: m.after !== undefined && m.after.length > 0 ? JSON.stringify(m.after) : null,
              estimated_seconds: m.estimatedSeconds,
              state: 'pending',
              attempt: 1,
              nova_migration_id: null,
              issued_at: null,
              ended_at: null,
              detail: null,
              fence: fence?.fence ?? null,
            }),
          );
          await trx.insertInto('execution_moves').values(rows).execute();
        }
      });
    },

    async transitionMove(
      executionId: string,
      step: number,
      expectedFrom: MoveState,
      next: MoveTransition,
    ): Promise<boolean> {
      const where = `execution ${executionId} step ${step}`;
      if (!isMoveState(expectedFrom) || !isMoveState(next.state))
        throw new StoreError(`store: ${where}: unknown move state in ${expectedFrom} -> ${next.state}`);
      if (FINAL_MOVE_STATES.includes(expectedFrom))
        throw new StoreError(`store: ${where}: ${expectedFrom} is final and is never left`);
      if (next.attempt !== undefined && (!Number.isInteger(next.attempt) || next.attempt < 1))
        throw new StoreError(`store: ${where}: attempt must be a positive integer, got ${next.attempt}`);
      const at = toMs(next.at, `${where}: at`);
      const final = FINAL_MOVE_STATES.includes(next.state);
      const changes: Partial<ExecutionMovesTable> = { state: next.state };
      if (next.attempt !== undefined) {
        // A new attempt is a new Nova migration: forget the last one's id unless given.
        changes.attempt = next.attempt;
        changes.nova_migration_id = null;
        changes.ended_at = null;
      }
      if (next.state === 'issuing') changes.issued_at = at;
      if (final) changes.ended_at = at;
      if (next.novaMigrationId !== undefined) changes.nova_migration_id = next.novaMigrationId;
      if (next.detail !== undefined) changes.detail = next.detail;
      // The compare-and-set: one conditional UPDATE, atomic on both backends.
      const compareAndSet = (q: typeof db) =>
        q
          .updateTable('execution_moves')
          .set(changes)
          .where('execution_id', '=', executionId)
          .where('step', '=', step)
          .where('state', '=', expectedFrom)
          .executeTakeFirst();
      const updated =
        fenceOf === undefined
          ? await groupCommit.add(compareAndSet)
          : Number(
              (
                await writeTransaction(ctx, async (trx) => {
                  // The owner's fence is checked and the move changed in one transaction.
                  const execution = await trx
                    .selectFrom('executions')
                    .select('aggregate')
                    .where('id', '=', executionId)
                    .executeTakeFirst();
                  if (execution === undefined) throw new StoreError(`store: no execution ${executionId}`);
                  const fence = fenceOf(execution.aggregate);
                  await enforceFence(trx, ctx.backend, fence, at);
                  changes.fence = fence.fence;
                  return compareAndSet(trx);
                })
              ).numUpdatedRows,
            );
      if (updated === 1) return true;
      if ((await moveRow(executionId, step)) === undefined) throw new StoreError(`store: no move ${where}`);
      return false;
    },

    async finishExecution(
      executionId: string,
      state: Exclude<ExecutionState, 'running'>,
      at: string,
    ): Promise<void> {
      if (state !== 'finished' && state !== 'aborted')
        throw new StoreError(`store: execution ${executionId} cannot finish as ${JSON.stringify(state)}`);
      const endedAt = toMs(at, `execution ${executionId}: at`);
      await writeTransaction(ctx, async (trx) => {
        const row = await lockRows(
          ctx.backend,
          trx.selectFrom('executions').selectAll().where('id', '=', executionId),
        ).executeTakeFirst();
        if (row === undefined) throw new StoreError(`store: no execution ${executionId}`);
        if (fenceOf !== undefined) await enforceFence(trx, ctx.backend, fenceOf(row.aggregate), endedAt);
        if (row.state === state) return; // already recorded: a restarted executor may say it twice
        if (row.state !== 'running')
          throw new StoreError(
            `store: execution ${executionId} is already ${row.state}, cannot become ${state}`,
          );
        // An execution never ends while Nova may still be migrating one of its servers, and a
        // finished one has every move final (an aborted one may leave moves never started).
        const open = await lockRows(
          ctx.backend,
          trx
            .selectFrom('execution_moves')
            .select(['step', 'state'])
            .where('execution_id', '=', executionId)
            .where('state', 'in', state === 'finished' ? [...IN_FLIGHT, 'pending'] : [...IN_FLIGHT])
            .orderBy('step'),
        ).execute();
        if (open.length > 0)
          throw new StoreError(
            `store: execution ${executionId} cannot become ${state}: ${open
              .slice(0, 5)
              .map((m) => `step ${m.step} is ${m.state}`)
              .join(', ')}${open.length > 5 ? ` and ${open.length - 5} more` : ''}`,
          );
        await trx
          .updateTable('executions')
          .set({ state, ended_at: endedAt })
          .where('id', '=', executionId)
          .where('state', '=', 'running')
          .execute();
      });
    },

    async getExecution(executionId: string): Promise<ExecutionRecord | null> {
      const row = await db
        .selectFrom('executions')
        .selectAll()
        .where('id', '=', executionId)
        .executeTakeFirst();
      return row === undefined ? null : executionFromRow(row);
    },

    async listMoves(executionId: string): Promise<MoveRecord[]> {
      const rows = await db
        .selectFrom('execution_moves')
        .selectAll()
        .where('execution_id', '=', executionId)
        .orderBy('step')
        .execute();
      return rows.map(moveFromRow);
    },

    async listUnfinishedExecutions(): Promise<ExecutionRecord[]> {
      const rows = await db
        .selectFrom('executions')
        .selectAll()
        .where('state', '=', 'running')
        .orderBy('started_at')
        .orderBy('id')
        .execute();
      return rows.map(executionFromRow);
    },
  };
}
