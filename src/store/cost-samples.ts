// Observed live-migration durations, from Nova's migration history and from our own executions:
// what the learned cost model fits per aggregate.

import { type Selectable, sql } from 'kysely';
import { type StoreContext, writeTransaction } from './backend.js';
import { StoreError } from './errors.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { CostSamplesTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export const COST_SAMPLE_SOURCES = ['nova-history', 'own'] as const;
export type CostSampleSource = (typeof COST_SAMPLE_SOURCES)[number];

export const COST_SAMPLE_OUTCOMES = ['completed', 'failed', 'aborted'] as const;
export type CostSampleOutcome = (typeof COST_SAMPLE_OUTCOMES)[number];

export interface NewCostSample {
  aggregate: string;
  serverId: string;
  ramMB: number;
  /** Page dirty rate in MB/s, when Prometheus had it. */
  dirtyRateMBps?: number | null;
  durationSeconds: number;
  outcome: CostSampleOutcome;
  source: CostSampleSource;
  /** The sample's identity at its source (e.g. the Nova migration id): adding it again adds nothing. */
  sourceKey?: string | null;
  /** When the migration finished. */
  at: string;
}

export interface CostSample extends NewCostSample {
  id: string;
  dirtyRateMBps: number | null;
  sourceKey: string | null;
}

export interface CostSampleFilter {
  aggregate?: string;
  serverId?: string;
  source?: CostSampleSource;
  outcome?: CostSampleOutcome;
  /** At or after. */
  since?: string;
}

export interface CostSampleRepository {
  /** Adds the samples not yet stored (by source and sourceKey); returns how many were added. */
  add(samples: NewCostSample[]): Promise<number>;
  /** Newest first. */
  list(filter?: CostSampleFilter, page?: PageRequest): Promise<Page<CostSample>>;
}

function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

function sampleFromRow(row: Selectable<CostSamplesTable>): CostSample {
  if (!isOneOf(COST_SAMPLE_SOURCES, row.source) || !isOneOf(COST_SAMPLE_OUTCOMES, row.outcome))
    throw new StoreError(`store: cost sample ${row.id} holds an unknown source or outcome`);
  return {
    id: String(row.id),
    aggregate: row.aggregate,
    serverId: row.server_id,
    ramMB: row.ram_mb,
    dirtyRateMBps: row.dirty_rate_mbps,
    durationSeconds: row.duration_seconds,
    outcome: row.outcome,
    source: row.source,
    sourceKey: row.source_key,
    at: fromMs(row.at),
  };
}

function checkSample(s: NewCostSample, i: number): void {
  const where = `store: cost sample [${i}]`;
  if (!isOneOf(COST_SAMPLE_SOURCES, s.source))
    throw new StoreError(`${where}.source must be one of ${COST_SAMPLE_SOURCES.join(', ')}, got ${s.source}`);
  if (!isOneOf(COST_SAMPLE_OUTCOMES, s.outcome))
    throw new StoreError(
      `${where}.outcome must be one of ${COST_SAMPLE_OUTCOMES.join(', ')}, got ${s.outcome}`,
    );
  if (!Number.isInteger(s.ramMB) || s.ramMB < 0)
    throw new StoreError(`${where}.ramMB must be an integer >= 0`);
  if (!Number.isFinite(s.durationSeconds) || s.durationSeconds < 0)
    throw new StoreError(`${where}.durationSeconds must be a number >= 0, got ${s.durationSeconds}`);
  if (s.dirtyRateMBps != null && (!Number.isFinite(s.dirtyRateMBps) || s.dirtyRateMBps < 0))
    throw new StoreError(`${where}.dirtyRateMBps must be a number >= 0 or null`);
}

export function createCostSampleRepository(ctx: StoreContext): CostSampleRepository {
  const { db, backend } = ctx;
  return {
    async add(samples) {
      samples.forEach(checkSample);
      const rows = samples.map((s, i) => ({
        aggregate: s.aggregate,
        server_id: s.serverId,
        ram_mb: s.ramMB,
        dirty_rate_mbps: s.dirtyRateMBps ?? null,
        duration_seconds: s.durationSeconds,
        outcome: s.outcome,
        source: s.source,
        source_key: s.sourceKey ?? null,
        at: toMs(s.at, `cost sample [${i}].at`),
      }));
      let added = 0;
      for (let i = 0; i < rows.length; i += 500) {
        const batch = rows.slice(i, i + 500);
        added += await writeTransaction(ctx, async (trx) => {
          // Samples already stored (same source and key) are skipped, not errors: Nova's history is
          // re-read every cycle. Keys are looked up first so the count is exact on both backends.
          const keyed = batch.filter((r) => r.source_key !== null);
          const seen = new Set<string>();
          if (keyed.length > 0) {
            const existing = await trx
              .selectFrom('cost_samples')
              .select(['source', 'source_key'])
              .where('source_key', 'in', [...new Set(keyed.map((r) => r.source_key as string))])
              .execute();
            for (const e of existing) seen.add(`${e.source}\u0000${e.source_key}`);
          }
          const fresh = batch.filter((r) => {
            if (r.source_key === null) return true;
            const key = `${r.source}\u0000${r.source_key}`;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          });
          if (fresh.length === 0) return 0;
          // The unique (source, source_key) still guards against another replica adding the same
          // sample meanwhile: a no-op on conflict.
          const insert = trx.insertInto('cost_samples').values(fresh);
          if (backend === 'mysql') await insert.onDuplicateKeyUpdate({ id: sql`id` }).execute();
          else await insert.onConflict((oc) => oc.doNothing()).execute();
          return fresh.length;
        });
      }
      return added;
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('cost_samples').selectAll();
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.serverId !== undefined) q = q.where('server_id', '=', filter.serverId);
      if (filter.source !== undefined) q = q.where('source', '=', filter.source);
      if (filter.outcome !== undefined) q = q.where('outcome', '=', filter.outcome);
      if (filter.since !== undefined) q = q.where('at', '>=', toMs(filter.since, 'cost sample filter since'));
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, sampleFromRow, (r) => String(r.id));
    },
  };
}
