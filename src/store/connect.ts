// Opens a Kysely instance on one of the two backends with the settings the store relies on.

import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, MysqlDialect, SqliteDialect } from 'kysely';
import { createPool } from 'mysql2';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import type { Database } from './schema.js';

export interface SqliteStoreOptions {
  kind: 'sqlite';
  /** The database file (created when missing, with its directory), or ':memory:' for a throwaway store. */
  path: string;
  /** How long a write waits for another process's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * When a commit reaches the disk (default 'full'). 'full': before the commit returns (each
   * commit waits for an fsync), so it survives a killed process and a power loss. 'normal': the
   * write-ahead log is synced at checkpoints only: a commit survives a killed process (kill -9:
   * it is in the operating system's page cache), but a power loss or a kernel crash may lose the
   * last commits (never corrupts the file). The executor's journal then forgets the last moves'
   * states, and the pre-flight of a restart finds those servers busy or already moved.
   */
  synchronous?: SqliteSynchronous;
}

export const SQLITE_SYNCHRONOUS = ['full', 'normal'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS)[number];

export interface MysqlStoreOptions {
  kind: 'mysql';
  /** Unix socket path; when set, host and port are ignored. */
  socketPath?: string;
  host?: string;
  port?: number;
  user: string;
  password?: string;
  database: string;
  /** Connections in the pool (default 10). */
  connectionLimit?: number;
}

export type StoreOptions = SqliteStoreOptions | MysqlStoreOptions;

export function connect(options: StoreOptions): StoreContext {
  if (options.kind === 'sqlite') {
    if (options.synchronous !== undefined && !SQLITE_SYNCHRONOUS.includes(options.synchronous))
      throw new StoreError(
        `store: synchronous must be one of ${SQLITE_SYNCHRONOUS.join(', ')}, got ${JSON.stringify(options.synchronous)}`,
      );
    // The file is created when missing, and so is its directory (a fresh state directory).
    // The store holds every tenant's server names: the folder and file are the service user's
    // only. SQLite gives its WAL and shared-memory files the mode of the database file.
    if (options.path !== ':memory:' && options.path !== '' && !options.path.startsWith('file:')) {
      mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
      closeSync(openSync(options.path, 'a', 0o600));
    }
    const database = new BetterSqlite3(options.path);
    // WAL: readers never block the writer. synchronous=FULL (the default): a commit is on disk
    // when it returns, so the journal survives power loss as well as a killed process; NORMAL
    // (SqliteStoreOptions.synchronous): a killed process only. Foreign keys are off by default in
    // SQLite and must be asked for on every connection.
    // The busy timeout first: switching a new file to WAL takes a lock another process may hold.
    database.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    database.pragma('journal_mode = WAL');
    database.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    database.pragma('foreign_keys = ON');
    return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), backend: 'sqlite' };
  }
  const pool = createPool({
    ...(options.socketPath !== undefined
      ? { socketPath: options.socketPath }
      : { host: options.host ?? 'localhost', port: options.port ?? 3306 }),
    user: options.user,
    ...(options.password !== undefined ? { password: options.password } : {}),
    database: options.database,
    connectionLimit: options.connectionLimit ?? 10,
    // BIGINT (epoch milliseconds, Nova migration ids) as JS numbers; all fit in 2^53.
    supportBigNumbers: true,
    bigNumberStrings: false,
    charset: 'utf8mb4_bin',
  });
  const dialect = new MysqlDialect({
    pool,
    // Strict mode: a value that does not fit is an error, never silently truncated.
    onCreateConnection: async (conn) => {
      await conn.executeQuery(
        CompiledQuery.raw(
          "set session sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
        ),
      );
    },
  });
  return { db: new Kysely<Database>({ dialect }), backend: 'mysql' };
}
