// The store's public surface.

export type { StoreBackend } from './backend.js';
export type { MysqlStoreOptions, SqliteStoreOptions, StoreOptions } from './connect.js';
export { StoreError } from './errors.js';
export { MIGRATION_TABLE, storeMigrations } from './migrations.js';
export { openStore, type Store } from './store.js';
