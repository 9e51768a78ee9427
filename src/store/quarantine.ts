// Servers the executor stopped trying to move after repeated failures: visible with the Nova fault,
// released by an operator. At most one unreleased entry per server; released ones stay as history.

import { type Selectable, sql } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { QuarantineTable } from './schema.js';
import { fromMs, fromMsOrNull, toMs } from './time.js';

export interface QuarantineEntry {
  id: string;
  serverId: string;
  aggregate: string;
  reason: string;
  /** Nova's fault message of the last failure, when it gave one. */
  novaFault: string | null;
  /** When the server was first quarantined (this entry). */
  since: string;
  /** When the entry was last updated (a further failure while quarantined). */
  updatedAt: string;
  /** Migration attempts that failed. */
  attempts: number;
  releasedBy: string | null;
  releasedAt: string | null;
}

export interface QuarantineInput {
  serverId: string;
  aggregate: string;
  reason: string;
  novaFault?: string | null;
  attempts: number;
  at: string;
}

export interface QuarantineFilter {
  aggregate?: string;
  serverId?: string;
  /** 'active' (unreleased, the default), 'released' or 'all'. */
  state?: 'active' | 'released' | 'all';
}

export interface QuarantineRepository {
  /**
   * Quarantines the server; when it already is, updates the reason, fault and attempts of the
   * unreleased entry (keeping `since`). Returns the entry.
   */
  quarantine(input: QuarantineInput): Promise<QuarantineEntry>;
  /** The server's unreleased entry, or null when it may be moved. */
  active(serverId: string): Promise<QuarantineEntry | null>;
  /** Releases the server; returns the released entry, or null when it was not quarantined. */
  release(serverId: string, by: string, at: string): Promise<QuarantineEntry | null>;
  /** Newest first. */
  list(filter?: QuarantineFilter, page?: PageRequest): Promise<Page<QuarantineEntry>>;
}

function entryFromRow(row: Selectable<QuarantineTable>): QuarantineEntry {
  return {
    id: String(row.id),
    serverId: row.server_id,
    aggregate: row.aggregate,
    reason: row.reason,
    novaFault: row.nova_fault,
    since: fromMs(row.since),
    updatedAt: fromMs(row.updated_at),
    attempts: row.attempts,
    releasedBy: row.released_by,
    releasedAt: fromMsOrNull(row.released_at),
  };
}

export function createQuarantineRepository(ctx: StoreContext): QuarantineRepository {
  const { db, backend } = ctx;

  async function active(serverId: string): Promise<QuarantineEntry | null> {
    const row = await db
      .selectFrom('quarantine')
      .selectAll()
      .where('active_server_id', '=', serverId)
      .executeTakeFirst();
    return row === undefined ? null : entryFromRow(row);
  }

  return {
    async quarantine(input) {
      if (input.serverId === '') throw new StoreError('store: quarantine needs a server id');
      if (!Number.isInteger(input.attempts) || input.attempts < 0)
        throw new StoreError(`store: quarantine of ${input.serverId}: attempts must be an integer >= 0`);
      const at = toMs(input.at, `quarantine of ${input.serverId}: at`);
      const insert = db.insertInto('quarantine').values({
        server_id: input.serverId,
        active_server_id: input.serverId,
        aggregate: input.aggregate,
        reason: input.reason,
        nova_fault: input.novaFault ?? null,
        since: at,
        updated_at: at,
        attempts: input.attempts,
        released_by: null,
        released_at: null,
      });
      // The unique active_server_id makes this one atomic upsert on both backends.
      if (backend === 'mysql')
        await insert
          .onDuplicateKeyUpdate({
            reason: sql`values(reason)`,
            nova_fault: sql`values(nova_fault)`,
            attempts: sql`values(attempts)`,
            updated_at: sql`values(updated_at)`,
          })
          .execute();
      else
        await insert
          .onConflict((oc) =>
            oc.column('active_server_id').doUpdateSet((eb) => ({
              reason: eb.ref('excluded.reason'),
              nova_fault: eb.ref('excluded.nova_fault'),
              attempts: eb.ref('excluded.attempts'),
              updated_at: eb.ref('excluded.updated_at'),
            })),
          )
          .execute();
      const entry = await active(input.serverId);
      if (entry === null)
        throw new StoreError(`store: quarantine of ${input.serverId} was released meanwhile`);
      return entry;
    },

    active,

    async release(serverId, by, at) {
      if (by === '') throw new StoreError(`store: releasing ${serverId} names who releases it`);
      const when = toMs(at, `release of ${serverId}: at`);
      const current = await active(serverId);
      if (current === null) return null;
      const result = await db
        .updateTable('quarantine')
        .set({ active_server_id: null, released_by: by, released_at: when })
        .where('id', '=', Number(current.id))
        .where('active_server_id', '=', serverId)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return null; // released by someone else meanwhile
      return { ...current, releasedBy: by, releasedAt: fromMs(when) };
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('quarantine').selectAll();
      const state = filter.state ?? 'active';
      if (state === 'active') q = q.where('active_server_id', 'is not', null);
      if (state === 'released') q = q.where('active_server_id', 'is', null);
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.serverId !== undefined) q = q.where('server_id', '=', filter.serverId);
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, entryFromRow, (r) => String(r.id));
    },
  };
}
