// Keeps each aggregate's load profiles fresh and puts them in the snapshot the loop plans on.
// Profiles change slowly: an aggregate is read again once its profiles are older than the refresh
// interval (a day by default), not every cycle. A refresh round reads the history of every due
// aggregate's servers with one range query per profiled metric, reduces it per server, measures
// how wrong the previous profiles were, and keeps the result in the store, so a restart reads
// nothing until the next refresh is due.
import { buildServerProfile, hasHistory, slotClock } from '../../forecast/reduce.js';
import {
  type ForecastError,
  type LoadProfiles,
  PROFILES_FORMAT,
  type ServerProfile,
  type Snapshot,
} from '../../model/snapshot.js';
import type { PrometheusClient } from '../prometheus/client.js';
import type { LoadTargets } from '../prometheus/loads.js';
import type { MetricsPolicy } from '../prometheus/policy.js';
import { forecastError } from './error.js';
import { readServerHistory } from './history.js';
import type { ProfileStore, StoredAggregateProfiles } from './port.js';
import type { ProfileSettings } from './settings.js';

const UNASSIGNED = '_unassigned_';
const DAY_MS = 86_400_000;

export interface ProfileRound {
  /** Aggregates whose profiles were read again this cycle (empty on most cycles). */
  refreshed: string[];
  /** Range queries sent this cycle. */
  calls: number;
  /** Servers profiled in the snapshot. */
  servers: number;
  warnings: string[];
}

const sameSettings = (a: StoredAggregateProfiles['settings'], b: ProfileSettings): boolean =>
  a.resolution === b.resolution &&
  a.quantile === b.quantile &&
  a.timeZone === b.timeZone &&
  a.minSamples === b.minSamples &&
  a.historyDays === b.historyDays;

/** Aggregate name -> host names, as the planner groups them. */
function aggregatesOf(snapshot: Snapshot): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const h of snapshot.hosts) {
    for (const a of h.aggregates.length > 0 ? h.aggregates : [UNASSIGNED]) {
      const list = out.get(a) ?? [];
      list.push(h.name);
      out.set(a, list);
    }
  }
  return out;
}

export class ProfileRefresher {
  private cache: Map<string, StoredAggregateProfiles> | null = null;

  constructor(
    private readonly prom: PrometheusClient,
    private readonly store: ProfileStore,
    private readonly settings: ProfileSettings,
    private readonly policy: MetricsPolicy,
    private readonly now: () => Date = () => new Date(),
  ) {
    // Fails here, at start, rather than at the first refresh a day later.
    slotClock(settings.resolution, settings.timeZone);
  }

  /** The aggregates whose profiles a refresh would read now. */
  async due(snapshot: Snapshot): Promise<string[]> {
    const cache = await this.load();
    const now = this.now().getTime();
    return [...aggregatesOf(snapshot).keys()].filter((a) => {
      const p = cache.get(a);
      return (
        p === undefined ||
        !sameSettings(p.settings, this.settings) ||
        now - Date.parse(p.refreshedAt) >= this.settings.refreshMs ||
        // A clock set back (a replay, a restored store) would otherwise wait for ever.
        Date.parse(p.refreshedAt) > now
      );
    });
  }

  /**
   * Refreshes what is due (reading history for `targets`' servers) and sets `snapshot.profiles`
   * from every aggregate's latest profiles. A failed read keeps the older profiles and says so.
   */
  async attach(snapshot: Snapshot, targets: Pick<LoadTargets, 'servers'>): Promise<ProfileRound> {
    const round: ProfileRound = { refreshed: [], calls: 0, servers: 0, warnings: [] };
    const due = await this.due(snapshot);
    if (due.length > 0) {
      try {
        await this.refresh(snapshot, targets, due, round);
      } catch (e) {
        round.warnings.push(
          `profiles: history not readable, planning on the profiles kept (${(e as Error).message})`,
        );
      }
    }
    const profiles = this.compose(snapshot);
    if (profiles) {
      snapshot.profiles = profiles;
      round.servers = Object.keys(profiles.servers).length;
    }
    return round;
  }

  private async load(): Promise<Map<string, StoredAggregateProfiles>> {
    if (this.cache === null) {
      this.cache = new Map((await this.store.list()).map((p) => [p.aggregate, p]));
    }
    return this.cache;
  }

  private async refresh(
    snapshot: Snapshot,
    targets: Pick<LoadTargets, 'servers'>,
    due: string[],
    round: ProfileRound,
  ): Promise<void> {
    const cache = await this.load();
    const groups = aggregatesOf(snapshot);
    const hostSet = new Set(due.flatMap((a) => groups.get(a) ?? []));
    const wanted = targets.servers.filter((s) => hostSet.has(s.host));
    const to = this.now();
    const from = new Date(to.getTime() - this.settings.historyDays * DAY_MS);
    const history = await readServerHistory(this.prom, this.policy, { servers: wanted }, { from, to });
    round.calls += history.calls;
    for (const [metric, n] of Object.entries(history.unmatched))
      if (n > 0) round.warnings.push(`profiles: ${n} ${metric} series name no server of the snapshot`);
    const clock = slotClock(this.settings.resolution, this.settings.timeZone);
    const byHost = new Map(snapshot.hosts.map((h) => [h.name, h]));
    for (const aggregate of due) {
      const hostNames = new Set(groups.get(aggregate) ?? []);
      const mine = snapshot.servers.filter((s) => hostNames.has(s.host));
      const servers: Record<string, ServerProfile> = {};
      for (const s of mine) {
        const series = history.series.get(s.id);
        if (!series) continue;
        const profile = buildServerProfile(series, this.settings, clock);
        if (hasHistory(profile)) servers[s.id] = profile;
      }
      const previous = cache.get(aggregate);
      let error: ForecastError | null = previous?.error ?? null;
      if (previous && Date.parse(previous.refreshedAt) < to.getTime()) {
        const hosts = [...hostNames].map((n) => byHost.get(n)).filter((h) => h !== undefined);
        error = forecastError(previous, hosts, mine, history.series, to) ?? error;
      }
      const stored: StoredAggregateProfiles = {
        aggregate,
        refreshedAt: to.toISOString(),
        from: from.toISOString(),
        to: to.toISOString(),
        settings: {
          resolution: this.settings.resolution,
          quantile: this.settings.quantile,
          timeZone: this.settings.timeZone,
          minSamples: this.settings.minSamples,
          historyDays: this.settings.historyDays,
        },
        servers,
        error,
      };
      await this.store.put(stored);
      cache.set(aggregate, stored);
      round.refreshed.push(aggregate);
    }
  }

  /** The snapshot's profiles: every aggregate's latest, for the servers the snapshot holds. */
  private compose(snapshot: Snapshot): LoadProfiles | null {
    const cache = this.cache;
    if (cache === null) return null;
    const groups = aggregatesOf(snapshot);
    const present = [...groups.keys()]
      .map((a) => cache.get(a))
      .filter(
        (p): p is StoredAggregateProfiles => p !== undefined && sameSettings(p.settings, this.settings),
      );
    if (present.length === 0) return null;
    const ids = new Set(snapshot.servers.map((s) => s.id));
    const servers: Record<string, ServerProfile> = {};
    const errors: Record<string, ForecastError> = {};
    for (const p of present) {
      for (const [id, profile] of Object.entries(p.servers)) if (ids.has(id)) servers[id] = profile;
      if (p.error) errors[p.aggregate] = p.error;
    }
    const oldest = (k: 'from' | 'refreshedAt') =>
      present.map((p) => p[k]).reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
    return {
      format: PROFILES_FORMAT,
      resolution: this.settings.resolution,
      quantile: this.settings.quantile,
      timeZone: this.settings.timeZone,
      from: oldest('from'),
      to: present.map((p) => p.to).reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b)),
      // The oldest refresh: what the figures may be as old as.
      refreshedAt: oldest('refreshedAt'),
      minSamples: this.settings.minSamples,
      servers,
      ...(Object.keys(errors).length > 0 ? { errors } : {}),
    };
  }
}
