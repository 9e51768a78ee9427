// The two SQL backends and the few places where their SQL differs: column types for long text,
// table options, upserts, and how a write transaction takes its locks. Everything else is one
// Kysely query that runs on both.

import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

export const STORE_BACKENDS = ['sqlite', 'mysql'] as const;
export type StoreBackend = (typeof STORE_BACKENDS)[number];

export interface StoreContext {
  db: Kysely<Database>;
  backend: StoreBackend;
}

/** Long text: SQLite's TEXT has no limit; MariaDB's TEXT stops at 64 KiB, too small for a plan. */
export function longTextType(backend: StoreBackend): RawBuilder<unknown> {
  return backend === 'mysql' ? sql`longtext` : sql`text`;
}

/**
 * Runs `work` in a transaction that holds the write lock from its first statement, so a
 * read-then-write inside it cannot interleave with another writer. SQLite: `BEGIN IMMEDIATE`
 * (a deferred transaction would fail to upgrade under a second process instead of waiting out the
 * busy timeout). MariaDB: an ordinary InnoDB transaction; the repository reads the rows it will
 * change with `lockRows` (SELECT ... FOR UPDATE).
 */
export async function writeTransaction<T>(
  ctx: StoreContext,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  if (ctx.backend === 'mysql') return ctx.db.transaction().execute((trx: Transaction<Database>) => work(trx));
  return ctx.db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}

/** `FOR UPDATE` on MariaDB; nothing on SQLite, where the immediate transaction already excludes writers. */
export function lockRows<Q extends { forUpdate(): Q }>(backend: StoreBackend, query: Q): Q {
  return backend === 'mysql' ? query.forUpdate() : query;
}
