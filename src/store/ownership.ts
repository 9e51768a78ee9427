// Fencing of the replicas' writes. Each aggregate has one owner at a time (an etcd lease, see
// src/coordination); the owner's fence is a number that grows with every new acquisition. The
// store keeps the highest fence that wrote for each aggregate, and a write that carries an older
// one is refused in the same transaction as the write itself: a replica that lost its lease
// (paused, cut off, slow) can no longer change what its successor now owns, whatever it believes.

import type { Kysely } from 'kysely';
import { lockRows, type StoreBackend, type StoreContext, writeTransaction } from './backend.js';
import { StoreError } from './errors.js';
import type { Database } from './schema.js';
import { fromMs, toMs } from './time.js';

/** What an owner's write carries: the aggregate, its lease's fence, and who it is (for the error). */
export interface OwnerFence {
  aggregate: string;
  fence: number;
  owner: string;
}

export interface AggregateOwnerRecord {
  aggregate: string;
  /** The highest fence that wrote for the aggregate. */
  fence: number;
  owner: string;
  claimedAt: string;
}

/** A write refused because a newer owner's fence is recorded for the aggregate. Nothing was written. */
export class FencedOutError extends StoreError {
  constructor(
    readonly aggregate: string,
    readonly fence: number,
    readonly recorded: number,
    readonly recordedOwner: string,
  ) {
    super(
      `store: aggregate ${aggregate}: write with fence ${fence} refused, ${recordedOwner} holds fence ${recorded}`,
    );
    this.name = 'FencedOutError';
  }
}

function checkFenceValue(f: OwnerFence): void {
  if (f.aggregate === '') throw new StoreError('store: a fence must name its aggregate');
  if (!Number.isSafeInteger(f.fence) || f.fence < 1)
    throw new StoreError(`store: aggregate ${f.aggregate}: fence must be a positive integer, got ${f.fence}`);
  if (f.owner === '') throw new StoreError(`store: aggregate ${f.aggregate}: a fence must name its owner`);
}

/**
 * Inside a write transaction: locks the aggregate's fence row (creating it the first time),
 * refuses an older fence, and records a newer one. Run it before the write it guards, in the same
 * transaction, so the check and the write commit together or not at all.
 */
export async function enforceFence(
  trx: Kysely<Database>,
  backend: StoreBackend,
  f: OwnerFence,
  atMs: number,
): Promise<void> {
  checkFenceValue(f);
  // Lock the row first and create it only when absent. Inserting first (INSERT IGNORE on a row
  // that exists) takes a shared lock on its key, and two writers of one aggregate that both hold
  // it and then ask for the exclusive lock deadlock on InnoDB: every move transition did that.
  const lockRow = () =>
    lockRows(
      backend,
      trx.selectFrom('aggregate_owners').selectAll().where('aggregate', '=', f.aggregate),
    ).executeTakeFirst();
  let row = await lockRow();
  if (row === undefined) {
    // Two first claims at once serialize on the new key.
    const absent = { aggregate: f.aggregate, fence: 0, owner: '', claimed_at: atMs };
    if (backend === 'mysql') await trx.insertInto('aggregate_owners').ignore().values(absent).execute();
    else
      await trx
        .insertInto('aggregate_owners')
        .values(absent)
        .onConflict((oc) => oc.column('aggregate').doNothing())
        .execute();
    row = await lockRow();
    if (row === undefined)
      throw new StoreError(`store: aggregate ${f.aggregate}: its fence row could not be created`);
  }
  const recorded = Number(row.fence);
  if (recorded > f.fence) throw new FencedOutError(f.aggregate, f.fence, recorded, row.owner);
  if (recorded < f.fence)
    await trx
      .updateTable('aggregate_owners')
      .set({ fence: f.fence, owner: f.owner, claimed_at: atMs })
      .where('aggregate', '=', f.aggregate)
      .execute();
}

export interface OwnershipRepository {
  /**
   * Records a new owner's fence before it acts (a takeover): from then on every write with an
   * older fence is refused. Throws FencedOutError when a newer fence is already recorded.
   */
  claim(fence: OwnerFence, at: string): Promise<void>;
  get(aggregate: string): Promise<AggregateOwnerRecord | null>;
  /** Every aggregate that ever had an owner, by name. */
  list(): Promise<AggregateOwnerRecord[]>;
}

export function createOwnershipRepository(ctx: StoreContext): OwnershipRepository {
  const { db } = ctx;
  const fromRow = (r: { aggregate: string; fence: number; owner: string; claimed_at: number }) => ({
    aggregate: r.aggregate,
    fence: Number(r.fence),
    owner: r.owner,
    claimedAt: fromMs(r.claimed_at),
  });
  return {
    async claim(fence, at) {
      const atMs = toMs(at, `aggregate ${fence.aggregate}: claim at`);
      await writeTransaction(ctx, (trx) => enforceFence(trx, ctx.backend, fence, atMs));
    },
    async get(aggregate) {
      const row = await db
        .selectFrom('aggregate_owners')
        .selectAll()
        .where('aggregate', '=', aggregate)
        .executeTakeFirst();
      return row === undefined || Number(row.fence) === 0 ? null : fromRow(row);
    },
    async list() {
      const rows = await db
        .selectFrom('aggregate_owners')
        .selectAll()
        .where('fence', '>', 0)
        .orderBy('aggregate')
        .execute();
      return rows.map(fromRow);
    },
  };
}
