// Metadata of recorded snapshots (the documents themselves live in files): which snapshot a plan
// was made from, and where to find it for a replay.

import type { Selectable } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { SnapshotsTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export interface NewSnapshotRecord {
  takenAt: string;
  /** The aggregate it covers, or null for the whole cloud. */
  aggregate?: string | null;
  /** Where the snapshot file was written, if it was. */
  path?: string | null;
  sizeBytes?: number | null;
  recordedAt: string;
}

export interface SnapshotRecord {
  id: string;
  takenAt: string;
  aggregate: string | null;
  path: string | null;
  sizeBytes: number | null;
  recordedAt: string;
}

export interface SnapshotRepository {
  record(snapshot: NewSnapshotRecord): Promise<SnapshotRecord>;
  get(id: string): Promise<SnapshotRecord | null>;
  /** Newest first. */
  list(filter?: { aggregate?: string }, page?: PageRequest): Promise<Page<SnapshotRecord>>;
}

function snapshotFromRow(row: Selectable<SnapshotsTable>): SnapshotRecord {
  return {
    id: String(row.id),
    takenAt: fromMs(row.taken_at),
    aggregate: row.aggregate,
    path: row.path,
    sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
    recordedAt: fromMs(row.recorded_at),
  };
}

export function createSnapshotRepository(ctx: StoreContext): SnapshotRepository {
  const { db } = ctx;
  return {
    async record(input) {
      if (input.sizeBytes != null && (!Number.isInteger(input.sizeBytes) || input.sizeBytes < 0))
        throw new StoreError(`store: snapshot sizeBytes must be an integer >= 0, got ${input.sizeBytes}`);
      const row = {
        taken_at: toMs(input.takenAt, 'snapshot takenAt'),
        aggregate: input.aggregate ?? null,
        path: input.path ?? null,
        size_bytes: input.sizeBytes ?? null,
        recorded_at: toMs(input.recordedAt, 'snapshot recordedAt'),
      };
      const result = await db.insertInto('snapshots').values(row).executeTakeFirstOrThrow();
      return snapshotFromRow({ ...row, id: Number(result.insertId) });
    },

    async get(id) {
      if (!/^\d{1,15}$/.test(id)) return null;
      const row = await db
        .selectFrom('snapshots')
        .selectAll()
        .where('id', '=', Number(id))
        .executeTakeFirst();
      return row === undefined ? null : snapshotFromRow(row);
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('snapshots').selectAll();
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, snapshotFromRow, (r) => String(r.id));
    },
  };
}
