// The two SQL backends and what differs between them for every repository: the long-text column
// type and how a write transaction takes its locks. (Upserts differ too; the repositories that
// need one branch on the backend where they do it.) Everything else is one Kysely query for both.

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

const DEADLOCK_RETRIES = 6;

function isDeadlock(err: unknown): boolean {
  // ER_LOCK_DEADLOCK (1213); ER_LOCK_WAIT_TIMEOUT (1205) is not retried: something holds the row.
  return typeof err === 'object' && err !== null && 'errno' in err && err.errno === 1213;
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
  if (ctx.backend === 'mysql') {
    // InnoDB may pick this transaction as a deadlock victim (row locks taken in another order by a
    // second replica): it was rolled back whole, so running it again is safe.
    for (let attempt = 1; ; attempt++) {
      try {
        return await ctx.db.transaction().execute((trx: Transaction<Database>) => work(trx));
      } catch (err) {
        if (attempt >= DEADLOCK_RETRIES || !isDeadlock(err)) throw err;
        // The same writers met again at once would likely meet again: spread them a little.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  }
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
