// Reads the live-migration history of a cloud through the reader credential: os-migrations of
// the last N days, the servers (for their flavor's RAM) and the aggregates (to group by). Three
// list calls plus pages, whatever the size of the cloud.
import type { NovaClient } from '../cloud/openstack/nova.js';
import { type HistorySamples, samplesFromHistory } from './history.js';

export interface ReadHistoryOptions {
  days: number;
  now?: () => Date;
  /** max_concurrent_live_migrations per source host, when the operator declared it (nova.conf is not readable). */
  concurrencyOf?: (host: string) => number;
  /** Dirty rates measured now, by server id (e.g. from a recorded snapshot). */
  dirtyRateOf?: (serverId: string) => number | undefined;
}

export interface ReadHistoryResult extends HistorySamples {
  /** Live-migration records read. */
  records: number;
  since: string;
}

export async function readMigrationHistory(
  nova: NovaClient,
  opts: ReadHistoryOptions,
): Promise<ReadHistoryResult> {
  const now = (opts.now ?? (() => new Date()))();
  const since = new Date(now.getTime() - opts.days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const [migrations, servers, aggregates] = await Promise.all([
    nova.listMigrations({ changesSince: since, migrationType: 'live-migration' }),
    nova.listServers(),
    nova.listAggregates(),
  ]);
  const ram = new Map(servers.map((s) => [s.id, s.flavor.ramMB]));
  const aggregatesOf = new Map<string, string[]>();
  for (const a of aggregates)
    for (const h of a.hosts) aggregatesOf.set(h, [...(aggregatesOf.get(h) ?? []), a.name]);
  const result = samplesFromHistory(migrations, {
    ramOf: (id) => ram.get(id),
    aggregatesOf: (h) => aggregatesOf.get(h) ?? [],
    concurrencyOf: opts.concurrencyOf,
    dirtyRateOf: opts.dirtyRateOf,
  });
  return { ...result, records: migrations.length, since };
}
