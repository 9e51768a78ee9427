// The data-health gate's verdicts per aggregate: why the loop did (or did not) act on a cycle's data.

import type { Selectable } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { parseStringArray } from './json.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { DataHealthTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export const DATA_HEALTH_VERDICTS = ['ok', 'blocked'] as const;
export type DataHealthVerdict = (typeof DATA_HEALTH_VERDICTS)[number];

export interface NewDataHealthRecord {
  aggregate: string;
  verdict: DataHealthVerdict;
  /** Why (stale, partial or contradictory data); may be empty for ok. */
  reasons: string[];
  at: string;
}

export interface DataHealthRecord extends NewDataHealthRecord {
  id: string;
}

export interface DataHealthFilter {
  aggregate?: string;
  verdict?: DataHealthVerdict;
  since?: string;
}

export interface DataHealthRepository {
  record(verdict: NewDataHealthRecord): Promise<DataHealthRecord>;
  /** The aggregate's most recent verdict, or null. */
  latest(aggregate: string): Promise<DataHealthRecord | null>;
  /** Newest first. */
  list(filter?: DataHealthFilter, page?: PageRequest): Promise<Page<DataHealthRecord>>;
}

function recordFromRow(row: Selectable<DataHealthTable>): DataHealthRecord {
  const verdict = row.verdict;
  if (verdict !== 'ok' && verdict !== 'blocked')
    throw new StoreError(`store: data-health record ${row.id} holds an unknown verdict ${verdict}`);
  return {
    id: String(row.id),
    aggregate: row.aggregate,
    verdict,
    reasons: parseStringArray(row.reasons),
    at: fromMs(row.at),
  };
}

export function createDataHealthRepository(ctx: StoreContext): DataHealthRepository {
  const { db } = ctx;
  return {
    async record(input) {
      if (input.verdict !== 'ok' && input.verdict !== 'blocked')
        throw new StoreError(
          `store: a data-health verdict is ok or blocked, got ${JSON.stringify(input.verdict)}`,
        );
      if (input.verdict === 'blocked' && input.reasons.length === 0)
        throw new StoreError(`store: a blocked verdict for ${input.aggregate} must say why (reasons)`);
      const row = {
        aggregate: input.aggregate,
        verdict: input.verdict,
        reasons: JSON.stringify(input.reasons),
        at: toMs(input.at, `data-health verdict of ${input.aggregate}: at`),
      };
      const result = await db.insertInto('data_health').values(row).executeTakeFirstOrThrow();
      return recordFromRow({ ...row, id: Number(result.insertId) });
    },

    async latest(aggregate) {
      const row = await db
        .selectFrom('data_health')
        .selectAll()
        .where('aggregate', '=', aggregate)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row === undefined ? null : recordFromRow(row);
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('data_health').selectAll();
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.verdict !== undefined) q = q.where('verdict', '=', filter.verdict);
      if (filter.since !== undefined) q = q.where('at', '>=', toMs(filter.since, 'data-health filter since'));
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, recordFromRow, (r) => String(r.id));
    },
  };
}
