// Cost samples from Nova's os-migrations history. Pure: migration records, the servers' RAM and
// the hosts' aggregates in; samples and the reasons records were left out, out.
//
// Nova records when a live migration was requested (created_at) and when its record last
// changed (updated_at, the final status for a finished one), not when it started copying. A
// migration that waited behind others on its source (max_concurrent_live_migrations, 1 by
// default) therefore looks as long as its wait plus its copy. We rebuild each source host's
// queue: in request order, a migration starts when fewer than `concurrency` earlier ones of the
// same source are still running, and its sample counts from there. What remains is the
// scheduling and pre-live-migration time, which every migration pays and the executor's own
// samples (timed from the request) include too.
import type { NovaMigration } from '../cloud/openstack/nova.js';
import type { Snapshot } from '../model/snapshot.js';
import type { CostOutcome, CostSample } from './sample.js';

export interface HistoryContext {
  /** RAM of a server (its flavor), or undefined when the server is gone. */
  ramOf: (serverId: string) => number | undefined;
  /** Dirty rate of a server, when measured now (a stand-in for the rate it had then). */
  dirtyRateOf?: ((serverId: string) => number | undefined) | undefined;
  /** Aggregates a host belongs to (empty: none). */
  aggregatesOf: (host: string) => readonly string[];
  /** max_concurrent_live_migrations of a source host; 1 (Nova's default) when not given. */
  concurrencyOf?: ((host: string) => number) | undefined;
  /** The aggregate name for hosts in none. */
  unassigned?: string | undefined;
}

export const HISTORY_SKIP_REASONS = [
  'not a live migration',
  'not finished',
  'server deleted (RAM unknown)',
  'no source host',
  'bad timestamps',
] as const;
export type HistorySkipReason = (typeof HISTORY_SKIP_REASONS)[number];

export interface HistorySamples {
  samples: CostSample[];
  skipped: Partial<Record<HistorySkipReason, number>>;
  /** Samples whose start was moved later because they queued behind others. */
  queueCorrected: number;
}

const OUTCOME_OF: Record<string, CostOutcome> = {
  completed: 'completed',
  done: 'completed',
  failed: 'failed',
  error: 'error',
  cancelled: 'cancelled',
};

/** Nova's timestamps have no zone; they are UTC. */
export function novaTimeMs(t: string): number {
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : `${t}Z`);
}

export function samplesFromHistory(
  migrations: readonly NovaMigration[],
  ctx: HistoryContext,
): HistorySamples {
  const skipped: Partial<Record<HistorySkipReason, number>> = {};
  const skip = (r: HistorySkipReason) => {
    skipped[r] = (skipped[r] ?? 0) + 1;
  };
  const concurrencyOf = ctx.concurrencyOf ?? (() => 1);
  const unassigned = ctx.unassigned ?? '_unassigned_';

  interface Timed {
    m: NovaMigration;
    created: number;
    ended: number;
    outcome: CostOutcome;
  }
  const bySource = new Map<string, Timed[]>();
  for (const m of migrations) {
    if (m.migrationType !== '' && m.migrationType !== 'live-migration') {
      skip('not a live migration');
      continue;
    }
    const outcome = OUTCOME_OF[m.status];
    if (!outcome) {
      skip('not finished');
      continue;
    }
    if (!m.sourceCompute) {
      skip('no source host');
      continue;
    }
    const created = novaTimeMs(m.createdAt);
    const ended = novaTimeMs(m.updatedAt ?? m.createdAt);
    if (!Number.isFinite(created) || !Number.isFinite(ended) || ended < created) {
      skip('bad timestamps');
      continue;
    }
    const list = bySource.get(m.sourceCompute) ?? [];
    list.push({ m, created, ended, outcome });
    bySource.set(m.sourceCompute, list);
  }

  const samples: CostSample[] = [];
  let queueCorrected = 0;
  for (const [source, list] of [...bySource.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    list.sort((a, b) => a.created - b.created || a.m.id - b.m.id);
    const slots = Math.max(1, concurrencyOf(source));
    // End times of earlier migrations of this source that held a slot (an `error` one was
    // refused before it reached the source, so it never did).
    const earlierEnds: number[] = [];
    for (const t of list) {
      const busy = earlierEnds.filter((e) => e > t.created).sort((a, b) => b - a);
      const start = busy.length >= slots ? Math.max(t.created, busy[slots - 1] as number) : t.created;
      const startClamped = Math.min(start, t.ended);
      if (t.outcome !== 'error') earlierEnds.push(t.ended);
      const ram = ctx.ramOf(t.m.serverId);
      if (ram === undefined) {
        skip('server deleted (RAM unknown)');
        continue;
      }
      const queuedSeconds = (startClamped - t.created) / 1000;
      if (queuedSeconds > 0) queueCorrected++;
      const dests = t.m.destCompute ? new Set(ctx.aggregatesOf(t.m.destCompute)) : undefined;
      const own = ctx.aggregatesOf(source);
      // A migration within an aggregate counts for it; one that crossed aggregates counts for the source's.
      const shared = dests ? own.filter((a) => dests.has(a)) : [];
      const aggregates = shared.length ? shared : own.length ? own : [unassigned];
      const dirty = ctx.dirtyRateOf?.(t.m.serverId);
      for (const aggregate of aggregates) {
        samples.push({
          aggregate,
          serverId: t.m.serverId,
          ramMB: ram,
          ...(dirty !== undefined ? { dirtyRateMBps: dirty } : {}),
          seconds: (t.ended - startClamped) / 1000,
          outcome: t.outcome,
          source: 'nova-history',
          endedAt: new Date(t.ended).toISOString(),
          novaMigrationId: t.m.id,
          ...(queuedSeconds > 0 ? { queuedSeconds } : {}),
        });
      }
    }
  }
  return { samples, skipped, queueCorrected };
}

/**
 * The context from a snapshot the caller already has (RecordResult.snapshot, with
 * RecordResult.migrations as the records): no extra API call. Dirty rates are the servers'
 * `dirtyRateMBps`, else their `load.dirtyRateMBps`.
 */
export function historyContextFromSnapshot(
  snapshot: Snapshot,
  opts: { concurrencyOf?: (host: string) => number } = {},
): HistoryContext {
  // Indexed on first use: a cycle with no migration in the history asks nothing, and indexing
  // 100,000 servers every cycle for nothing was a tenth of a steady cycle's CPU.
  let servers: Map<string, Snapshot['servers'][number]> | undefined;
  let hosts: Map<string, Snapshot['hosts'][number]> | undefined;
  const server = (id: string) => {
    servers ??= new Map(snapshot.servers.map((s) => [s.id, s]));
    return servers.get(id);
  };
  const host = (name: string) => {
    hosts ??= new Map(snapshot.hosts.map((h) => [h.name, h]));
    return hosts.get(name);
  };
  return {
    ramOf: (id) => server(id)?.flavor.ramMB,
    dirtyRateOf: (id) => {
      const s = server(id);
      return s?.dirtyRateMBps ?? s?.load?.dirtyRateMBps;
    },
    aggregatesOf: (h) => host(h)?.aggregates ?? [],
    concurrencyOf: opts.concurrencyOf ?? ((h) => host(h)?.maxConcurrentLiveMigrations ?? 1),
  };
}
