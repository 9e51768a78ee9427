// The backends every store test runs on: SQLite always, MariaDB when the global setup started one.
// Each `open()` gives a fresh, empty store (a new file, or a new database on the shared server).

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { inject } from 'vitest';
import { openStore, type Store, type StoreOptions } from '../../src/store/index.js';

export interface TestBackend {
  name: 'sqlite' | 'mariadb';
  /** False when MariaDB is not installed here (outside CI): the suite is skipped. */
  available: boolean;
  /** Options for a new, empty store; `cleanup` removes it. */
  fresh(): Promise<{ options: StoreOptions; cleanup: () => Promise<void> }>;
}

const sqlite: TestBackend = {
  name: 'sqlite',
  available: true,
  async fresh() {
    const dir = await mkdtemp(join(tmpdir(), 'aic-store-'));
    return {
      options: { kind: 'sqlite', path: join(dir, 'aicerine.db') },
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

function mariadb(): TestBackend {
  const server = inject('mariadb');
  return {
    name: 'mariadb',
    available: server !== null,
    async fresh() {
      if (server === null) throw new Error('no MariaDB server');
      const database = `aic_${randomBytes(6).toString('hex')}`;
      const admin = await createConnection({ socketPath: server.socketPath, user: server.user });
      await admin.query(`create database ${database}`);
      await admin.end();
      return {
        options: { kind: 'mysql', socketPath: server.socketPath, user: server.user, database },
        cleanup: async () => {
          const conn = await createConnection({ socketPath: server.socketPath, user: server.user });
          await conn.query(`drop database if exists ${database}`);
          await conn.end();
        },
      };
    },
  };
}

export function testBackends(): TestBackend[] {
  return [sqlite, mariadb()];
}

/** Opens a fresh store on `backend`; the returned `dispose` closes and removes it. */
export async function openFresh(
  backend: TestBackend,
): Promise<{ store: Store; dispose: () => Promise<void> }> {
  const { options, cleanup } = await backend.fresh();
  const store = await openStore(options);
  return {
    store,
    dispose: async () => {
      await store.close();
      await cleanup();
    },
  };
}
