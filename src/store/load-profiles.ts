// Each aggregate's load profiles between refreshes (src/cloud/profiles): one row per aggregate,
// the profiles as one JSON document (a few hundred KiB for a few hundred servers), replaced whole
// once a day.
import type { ProfileStore, StoredAggregateProfiles } from '../cloud/profiles/port.js';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { toMs } from './time.js';

export function createProfileStore(ctx: StoreContext): ProfileStore {
  const { db, backend } = ctx;
  return {
    async list() {
      const rows = await db.selectFrom('load_profiles').selectAll().orderBy('aggregate').execute();
      return rows.map((r) => JSON.parse(r.document) as StoredAggregateProfiles);
    },
    async put(p) {
      if (p.aggregate === '') throw new StoreError('store: load profiles need an aggregate name, got ""');
      const row = {
        aggregate: p.aggregate,
        refreshed_at: toMs(p.refreshedAt, 'load profiles refreshedAt'),
        document: JSON.stringify(p),
      };
      const update = { refreshed_at: row.refreshed_at, document: row.document };
      if (backend === 'mysql')
        await db.insertInto('load_profiles').values(row).onDuplicateKeyUpdate(update).execute();
      else
        await db
          .insertInto('load_profiles')
          .values(row)
          .onConflict((oc) => oc.column('aggregate').doUpdateSet(update))
          .execute();
    },
  };
}
