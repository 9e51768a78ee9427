import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, MysqlDialect, SqliteDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import { describe, expect, it } from 'vitest';
import { MIGRATION_TABLE, openStore, type StoreOptions, storeMigrations } from '../../src/store/index.js';
import { type TestBackend, testBackends } from './backends.js';

const run = promisify(execFile);

const RUNNER = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));
const OPENER = fileURLToPath(new URL('./fixtures/open-store.ts', import.meta.url));

async function openInChild(options: StoreOptions): Promise<void> {
  const { stdout } = await run(process.execPath, [RUNNER, OPENER, JSON.stringify(options)]);
  expect(stdout).toBe('opened\n');
}

/** A bare Kysely on the same database, to look at what the store left there. */
function rawDb(options: StoreOptions): Kysely<Record<string, Record<string, unknown>>> {
  if (options.kind === 'sqlite')
    return new Kysely({ dialect: new SqliteDialect({ database: new BetterSqlite3(options.path) }) });
  return new Kysely({
    dialect: new MysqlDialect({
      pool: createPool({
        socketPath: options.socketPath,
        user: options.user,
        database: options.database,
        connectionLimit: 1,
      }),
    }),
  });
}

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'schema migrations on %s',
  (_name, backend: TestBackend) => {
    describe.skipIf(!backend.available)('', () => {
      it('records each migration once, even when two processes open a new store at the same time', async () => {
        const { options, cleanup } = await backend.fresh();
        const raw = rawDb(options);
        try {
          // Two processes: better-sqlite3 is synchronous, so two stores on one file in one process
          // would block each other's event loop (one store per file per process, as the service does).
          await Promise.all([openInChild(options), openInChild(options)]);
          const ran = await raw.selectFrom(MIGRATION_TABLE).select('name').execute();
          expect(ran.map((r) => r.name)).toEqual(
            Object.keys(storeMigrations(backend.name === 'sqlite' ? 'sqlite' : 'mysql')),
          );
        } finally {
          await raw.destroy();
          await cleanup();
        }
      });

      it('refuses a database that a newer Aicerine migrated further', async () => {
        const { options, cleanup } = await backend.fresh();
        const raw = rawDb(options);
        try {
          await (await openStore(options)).close();
          await raw
            .insertInto(MIGRATION_TABLE)
            .values({ name: '9999-from-the-future', timestamp: new Date().toISOString() })
            .execute();
          await expect(openStore(options)).rejects.toThrow(
            /cannot migrate the schema.*9999-from-the-future/s,
          );
        } finally {
          await raw.destroy();
          await cleanup();
        }
      });

      it.runIf(backend.name === 'sqlite')('creates the file and its missing directories', async () => {
        const { options, cleanup } = await backend.fresh();
        try {
          if (options.kind !== 'sqlite') throw new Error('sqlite only');
          const path = join(dirname(options.path), 'state', 'deeper', 'aicerine.db');
          await (await openStore({ kind: 'sqlite', path })).close();
          expect(existsSync(path)).toBe(true);
        } finally {
          await cleanup();
        }
      });

      it.runIf(backend.name === 'sqlite')('keeps the SQLite file in WAL mode', async () => {
        const { options, cleanup } = await backend.fresh();
        try {
          await (await openStore(options)).close();
          if (options.kind !== 'sqlite') throw new Error('sqlite only');
          const db = new BetterSqlite3(options.path);
          expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
          expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
          db.close();
        } finally {
          await cleanup();
        }
      });

      it.runIf(backend.name === 'sqlite')(
        'backs up a live store with VACUUM INTO (docs/store.md)',
        async () => {
          const { options, cleanup } = await backend.fresh();
          try {
            if (options.kind !== 'sqlite') throw new Error('sqlite only');
            const store = await openStore(options);
            await store.audit.record({ actor: 'a', action: 'x', target: 't', at: '2026-11-30T12:00:00Z' });
            const copy = `${options.path}.backup`;
            const db = new BetterSqlite3(options.path);
            db.prepare('vacuum into ?').run(copy);
            db.close();
            await store.close();
            const restored = await openStore({ kind: 'sqlite', path: copy });
            expect((await restored.audit.list()).items.map((e) => e.action)).toEqual(['x']);
            await restored.close();
          } finally {
            await cleanup();
          }
        },
      );

      it.runIf(backend.name === 'mariadb')(
        'creates InnoDB tables with an exact (binary) collation',
        async () => {
          const { options, cleanup } = await backend.fresh();
          const raw = rawDb(options);
          try {
            await (await openStore(options)).close();
            const { rows } = await sql<{ engine: string; collation: string }>`
          select engine as engine, table_collation as collation from information_schema.tables
          where table_schema = database() and table_name not like 'aicerine_migration%'`.execute(raw);
            // 0001-0008: the store's tables, service control, tasks, the replicas' fences, abort
            // requests, the maintenance campaigns and the load profiles.
            expect(rows.length).toBe(21);
            for (const row of rows) expect(row).toEqual({ engine: 'InnoDB', collation: 'utf8mb4_bin' });
          } finally {
            await raw.destroy();
            await cleanup();
          }
        },
      );
    });
  },
);
