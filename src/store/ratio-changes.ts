// Every allocation-ratio write that prevention made in Placement, with its reason: the record that
// shows why a host's ratio is what it is, and what an overwrite behind our back is compared with.

import type { Selectable } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { RatioChangesTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export interface NewRatioChange {
  host: string;
  /** Placement resource class, e.g. VCPU. */
  resourceClass: string;
  oldRatio: number;
  newRatio: number;
  reason: string;
  /** The resource provider generation the write was made against. */
  generation: number;
  at: string;
  /** Who or what wrote it: "prevention", "operator:alice". */
  by: string;
}

export interface RatioChange extends NewRatioChange {
  id: string;
}

export interface RatioChangeFilter {
  host?: string;
  resourceClass?: string;
  /** At or after. */
  since?: string;
}

export interface RatioChangeRepository {
  record(change: NewRatioChange): Promise<RatioChange>;
  /** The last change recorded for the host's resource class, or null. */
  latest(host: string, resourceClass: string): Promise<RatioChange | null>;
  /** Newest first. */
  list(filter?: RatioChangeFilter, page?: PageRequest): Promise<Page<RatioChange>>;
}

function changeFromRow(row: Selectable<RatioChangesTable>): RatioChange {
  return {
    id: String(row.id),
    host: row.host,
    resourceClass: row.resource_class,
    oldRatio: row.old_ratio,
    newRatio: row.new_ratio,
    reason: row.reason,
    generation: Number(row.generation),
    at: fromMs(row.at),
    by: row.changed_by,
  };
}

export function createRatioChangeRepository(ctx: StoreContext): RatioChangeRepository {
  const { db } = ctx;
  return {
    async record(change) {
      const where = `store: ratio change of ${change.host} ${change.resourceClass}`;
      if (change.host === '' || change.resourceClass === '')
        throw new StoreError(`${where}: host and class needed`);
      for (const [field, value] of [
        ['oldRatio', change.oldRatio],
        ['newRatio', change.newRatio],
      ] as const)
        if (!Number.isFinite(value) || value <= 0)
          throw new StoreError(`${where}: ${field} must be a number > 0, got ${value}`);
      if (!Number.isInteger(change.generation) || change.generation < 0)
        throw new StoreError(`${where}: generation must be an integer >= 0, got ${change.generation}`);
      const row = {
        host: change.host,
        resource_class: change.resourceClass,
        old_ratio: change.oldRatio,
        new_ratio: change.newRatio,
        reason: change.reason,
        generation: change.generation,
        at: toMs(change.at, `${where}: at`),
        changed_by: change.by,
      };
      const result = await db.insertInto('ratio_changes').values(row).executeTakeFirstOrThrow();
      return changeFromRow({ ...row, id: Number(result.insertId) });
    },

    async latest(host, resourceClass) {
      const row = await db
        .selectFrom('ratio_changes')
        .selectAll()
        .where('host', '=', host)
        .where('resource_class', '=', resourceClass)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row === undefined ? null : changeFromRow(row);
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('ratio_changes').selectAll();
      if (filter.host !== undefined) q = q.where('host', '=', filter.host);
      if (filter.resourceClass !== undefined) q = q.where('resource_class', '=', filter.resourceClass);
      if (filter.since !== undefined)
        q = q.where('at', '>=', toMs(filter.since, 'ratio change filter since'));
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, changeFromRow, (r) => String(r.id));
    },
  };
}
