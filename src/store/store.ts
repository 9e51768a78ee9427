// The store: one object that the service opens once and passes around. It implements the
// executor's journal and carries one repository per kind of record.

import type { ExecutionJournal } from '../executor/journal.js';
import type { StoreBackend } from './backend.js';
import { connect, type StoreOptions } from './connect.js';
import { createJournal } from './journal.js';
import { migrateToLatest } from './migrations.js';

export interface Store extends ExecutionJournal {
  readonly backend: StoreBackend;
  /** Closes the database (the pool on MariaDB); the store is unusable after. */
  close(): Promise<void>;
}

/** Opens (creating if needed) the store and migrates its schema to the latest version. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const ctx = connect(options);
  try {
    await migrateToLatest(ctx.db, ctx.backend);
  } catch (err) {
    await ctx.db.destroy();
    throw err;
  }
  return {
    backend: ctx.backend,
    ...createJournal(ctx),
    close: () => ctx.db.destroy(),
  };
}
