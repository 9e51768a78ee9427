// A recorder for a service that records every cycle: the first cycle reads the cloud in full,
// later cycles re-read only what changed (servers and live migrations by `changes-since`,
// Placement providers whose generation moved, the providers of every host a live migration
// touched, and hosts the caller names), so a steady cycle costs calls in proportion to the
// changes, not to the cloud. Each cycle gives the same snapshot `recordSnapshot` would.
import type {
  NovaAggregate,
  NovaHypervisor,
  NovaMigration,
  NovaServer,
  NovaServerGroup,
  NovaService,
} from './openstack/nova.js';
import type { ResourceProvider } from './openstack/placement.js';
import type { LoadedMetrics } from './prometheus/loads.js';
import {
  addLoads,
  buildSnapshot,
  type CloudReads,
  historySince,
  mapProvidersToHosts,
  type ProviderData,
  type RecordOptions,
  type RecordResult,
  readProviders,
  readSriov,
} from './record.js';
import {
  applyMigrationChanges,
  applyServerChanges,
  DELETED_STATUS,
  FRESH_MIGRATION_STATUS,
  novaInstant,
  providersToRead,
  pruneMigrations,
  sameSet,
} from './record-state.js';
import type { CloudSession } from './session.js';
import { SnapshotMemo } from './snapshot-memo.js';

export interface IncrementalOptions extends Omit<RecordOptions, 'onProgress'> {
  /** A full read every this many cycles (default 60; the first cycle is always full). */
  fullEveryCycles?: number;
  /** ... and whenever the last full read is older than this (default 6 h). */
  fullEveryMs?: number;
  /**
   * A full read when the previous successful cycle is older than this (default 1 h): Nova's
   * deleted rows may have been archived meanwhile, and a deletion nobody listed is never seen.
   */
  maxGapMs?: number;
  /**
   * Seconds taken off the previous read time in `changes-since` (default 60): updated_at is
   * written by the clock of whichever Nova node changed the row, at one-second precision.
   */
  overlapSeconds?: number;
  /** Server groups and SR-IOV ports are re-read at least every this many cycles (default 10). */
  slowEveryCycles?: number;
  /**
   * Per-server metric series are queried every this many cycles (default 6; 1: every cycle, and
   * always on a full read); in between servers keep the loads last read. Host series are queried
   * every cycle. Why: docs/openstack.md, "Recording every cycle".
   */
  serverMetricsEveryCycles?: number;
}

export interface CycleChanges {
  serversAdded: number;
  serversUpdated: number;
  serversDeleted: number;
  migrationsChanged: number;
  /** Providers whose inventories and usages were re-read. */
  providersRead: number;
  /**
   * Of those, read because a live migration listed this cycle touched their host, or the caller
   * named the host (requestHostReads), not because their generation moved: Placement does not
   * bump a provider's generation when an allocation is removed from it.
   */
  providersReadByHost: number;
  /** Slow-cadence reads done this cycle ("server groups", "ports", "server metrics"). */
  reread: string[];
}

export interface CycleResult extends RecordResult {
  /** Whether this cycle read the cloud in full. */
  full: boolean;
  /** Why it did ("first cycle", "every 60 cycles", "the set of compute hosts changed", ...). */
  fullReason: string | undefined;
  /** Requests sent on the session during the cycle (retries and Keystone included). */
  callCount: number;
  /** The same, per service type. */
  callsByService: Record<string, number>;
  /** Wall-clock seconds the cycle took. */
  seconds: number;
  /** Where they went: reading Nova, Placement and Neutron; building the snapshot; Prometheus. */
  timings: { readSeconds: number; buildSeconds: number; metricsSeconds: number };
  /** What an incremental cycle found (all zero on a full one). */
  changes: CycleChanges;
  /** nova-compute hosts the snapshot left out (no provider, no VCPU/MEMORY_MB inventory). */
  hostsLeftOut: string[];
}

/** The raw state kept between cycles: what the last reads gave, by key. */
interface KeptState {
  services: NovaService[];
  aggregates: NovaAggregate[];
  hypervisors: NovaHypervisor[];
  servers: Map<string, NovaServer>;
  groups: NovaServerGroup[];
  migrations: Map<number, NovaMigration>;
  sriov: Set<string> | undefined;
  providers: ResourceProvider[];
  placement: Map<string, ProviderData>;
  /** Generation of each provider as listed before its inventories and usages were read. */
  readGeneration: Map<string, number>;
  /** Our clock when the server and migration reads of the last successful cycle started. */
  readStartMs: number;
  fullAtMs: number;
  cyclesSinceFull: number;
  cyclesSinceSlow: number;
  readWarnings: string[];
}

const DEFAULTS = {
  fullEveryCycles: 60,
  fullEveryMs: 6 * 3_600_000,
  maxGapMs: 3_600_000,
  overlapSeconds: 60,
  slowEveryCycles: 10,
  serverMetricsEveryCycles: 6,
};

/** Thrown inside an incremental cycle when its picture cannot be trusted: read in full instead. */
class NeedFullRead extends Error {}

const noChanges = (): CycleChanges => ({
  serversAdded: 0,
  serversUpdated: 0,
  serversDeleted: 0,
  migrationsChanged: 0,
  providersRead: 0,
  providersReadByHost: 0,
  reread: [],
});

export class IncrementalRecorder {
  private state: KeptState | undefined;
  private pendingFull: string | undefined;
  /** Hosts whose providers the next incremental cycle re-reads whatever their generation. */
  private pendingHosts = new Set<string>();
  private running = false;
  /** The last read of the per-server metric series, and the cycles since. */
  private serverMetrics: { metrics: LoadedMetrics; cyclesSince: number } | undefined;
  /** Servers as built last cycle: one Nova reports unchanged is not built again. */
  private memo = new SnapshotMemo();
  private readonly opts: IncrementalOptions & typeof DEFAULTS;

  constructor(
    private readonly session: CloudSession,
    options: IncrementalOptions = {},
  ) {
    this.opts = { ...DEFAULTS, ...options };
    for (const k of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
      const v = this.opts[k];
      if (!(Number.isFinite(v) && v >= 0)) {
        throw new RangeError(`IncrementalRecorder option ${k}: expected a number >= 0, got ${String(v)}`);
      }
    }
  }

  /** The next cycle reads everything (e.g. after the control loop found the data contradictory). */
  requestFullRead(reason: string): void {
    this.pendingFull ??= reason;
  }

  /**
   * The next cycle re-reads these hosts' inventories and usages whatever their provider
   * generation says (e.g. the hosts a contradictory data-health verdict named).
   */
  requestHostReads(hosts: Iterable<string>): void {
    for (const h of hosts) this.pendingHosts.add(h);
  }

  /** Forgets everything: the next cycle is a first cycle. */
  reset(): void {
    this.state = undefined;
    this.serverMetrics = undefined;
    this.memo = new SnapshotMemo();
  }

  private nowMs(): number {
    return (this.opts.now ?? (() => new Date()))().getTime();
  }

  /** Why the coming cycle must read in full, or undefined when an incremental one will do. */
  private fullReasonBefore(): string | undefined {
    const st = this.state;
    if (!st) return 'first cycle';
    if (this.pendingFull) return this.pendingFull;
    const o = this.opts;
    const now = this.nowMs();
    if (st.cyclesSinceFull + 1 >= o.fullEveryCycles) return `every ${o.fullEveryCycles} cycles`;
    if (now - st.fullAtMs >= o.fullEveryMs) return `every ${Math.round(o.fullEveryMs / 1000)} s`;
    if (now - st.readStartMs >= o.maxGapMs)
      return `the previous read is more than ${Math.round(o.maxGapMs / 1000)} s old`;
    return undefined;
  }

  /**
   * Records once: in full when due (see `fullReason`), else only what changed. One cycle at a
   * time; the snapshot shares objects with the kept state, so treat it as read-only.
   */
  async cycle(): Promise<CycleResult> {
    if (this.running) throw new Error('IncrementalRecorder.cycle: the previous cycle has not finished');
    this.running = true;
    try {
      return await this.runCycle();
    } finally {
      this.running = false;
    }
  }

  private async runCycle(): Promise<CycleResult> {
    const t0 = performance.now();
    const stats = this.session.stats;
    const calls0 = stats.total;
    const byService0 = new Map(stats.byService);
    let full = false;
    let fullReason = this.fullReasonBefore();
    let changes = noChanges();
    if (fullReason === undefined) {
      try {
        changes = await this.incremental();
      } catch (e) {
        if (!(e instanceof NeedFullRead)) throw e;
        fullReason = e.message;
      }
    }
    if (fullReason !== undefined) {
      // Taken now: a request made while this read runs is for the next cycle.
      const taken = this.pendingFull;
      const hosts = this.pendingHosts;
      this.pendingFull = undefined;
      this.pendingHosts = new Set();
      try {
        await this.fullRead();
      } catch (e) {
        this.pendingFull ??= taken;
        for (const h of hosts) this.pendingHosts.add(h);
        throw e;
      }
      full = true;
    }
    const st = this.state as KeptState;
    const reads: CloudReads = {
      services: st.services,
      aggregates: st.aggregates,
      hypervisors: st.hypervisors,
      servers: [...st.servers.values()],
      groups: st.groups,
      migrations: [...st.migrations.values()],
      sriov: st.sriov,
      providers: st.providers,
      placement: st.placement,
    };
    const t1 = performance.now();
    const built = buildSnapshot(this.session, reads, this.opts, [...st.readWarnings], this.memo);
    const t2 = performance.now();
    const kept = this.serverMetrics;
    const serversDue =
      full || kept === undefined || kept.cyclesSince + 1 >= Math.max(1, this.opts.serverMetricsEveryCycles);
    await addLoads(this.session, built, this.opts, serversDue ? undefined : kept.metrics);
    const metrics = built.result.metrics;
    if (metrics !== undefined) {
      if (serversDue) {
        this.serverMetrics = { metrics, cyclesSince: 0 };
        if (!full && this.opts.serverMetricsEveryCycles > 1) changes.reread.push('server metrics');
      } else if (kept !== undefined) kept.cyclesSince++;
    }
    const t3 = performance.now();
    const callsByService: Record<string, number> = {};
    for (const [svc, n] of stats.byService) {
      const d = n - (byService0.get(svc) ?? 0);
      if (d > 0) callsByService[svc] = d;
    }
    return {
      ...built.result,
      full,
      fullReason,
      callCount: stats.total - calls0,
      callsByService,
      seconds: (t3 - t0) / 1000,
      timings: {
        readSeconds: (t1 - t0) / 1000,
        buildSeconds: (t2 - t1) / 1000,
        metricsSeconds: (t3 - t2) / 1000,
      },
      changes,
      hostsLeftOut: leftOut(st.services, built.result.snapshot.hosts),
    };
  }

  /** Reads everything, as `recordSnapshot` does, and keeps it (plus the still-`accepted` migrations). */
  private async fullRead(): Promise<void> {
    const { nova, placement } = this.session;
    await Promise.all([nova.negotiate(), placement.negotiate()]);
    const startMs = this.nowMs();
    const readWarnings: string[] = [];
    const [services, aggregates, hypervisors, servers, groups, migrations, sriov, providers] =
      await Promise.all([
        nova.listServices('nova-compute'),
        nova.listAggregates(),
        nova.listHypervisors(),
        nova.listServers(),
        nova.listServerGroups(true),
        this.readMigrations(historySince(new Date(startMs), this.opts.historyDays)),
        readSriov(this.session, this.opts, readWarnings),
        placement.listResourceProviders(),
      ]);
    const wanted = wantedProviders(services, providers, hypervisors);
    const data = await readProviders(this.session, [...wanted]);
    this.state = {
      services,
      aggregates,
      hypervisors,
      servers: new Map(servers.map((s) => [s.id, s])),
      groups,
      migrations: migrations.merged,
      sriov,
      providers,
      placement: data,
      readGeneration: new Map(providers.filter((p) => wanted.has(p.uuid)).map((p) => [p.uuid, p.generation])),
      readStartMs: startMs,
      fullAtMs: startMs,
      cyclesSinceFull: 0,
      cyclesSinceSlow: 0,
      readWarnings,
    };
  }

  /**
   * Live migrations: first those still `accepted` (a fresh record has no updated_at, so
   * `changes-since` does not show it yet), then those changed since `since`.
   */
  private async readMigrations(
    since: string,
  ): Promise<{ fresh: NovaMigration[]; changed: NovaMigration[]; merged: Map<number, NovaMigration> }> {
    const { nova } = this.session;
    const fresh = await nova.listMigrations({
      status: FRESH_MIGRATION_STATUS,
      migrationType: 'live-migration',
    });
    const changed = await nova.listMigrations({ changesSince: since, migrationType: 'live-migration' });
    const merged = new Map<number, NovaMigration>();
    for (const m of [...fresh, ...changed]) merged.set(m.id, m);
    return { fresh, changed, merged };
  }

  /** One incremental cycle: reads first, then folds them into the kept state (all or nothing). */
  private async incremental(): Promise<CycleChanges> {
    const st = this.state as KeptState;
    const { nova, placement } = this.session;
    const startMs = this.nowMs();
    const since = novaInstant(st.readStartMs - this.opts.overlapSeconds * 1000);
    const [services, aggregates, providers, changedServers, migrations] = await Promise.all([
      nova.listServices('nova-compute'),
      nova.listAggregates(),
      placement.listResourceProviders(),
      nova.listServers({ changesSince: since }),
      this.readMigrations(since),
    ]);

    // Compute hosts or providers appeared or went away: the host mapping (hypervisors) is stale.
    if (!sameSet(new Set(services.map((s) => s.host)), new Set(st.services.map((s) => s.host))))
      throw new NeedFullRead('the set of compute hosts changed');
    if (!sameSet(new Set(providers.map((p) => p.uuid)), new Set(st.providers.map((p) => p.uuid))))
      throw new NeedFullRead('the set of resource providers changed');

    const migrationsNow = new Map(st.migrations);
    const migrationChanges = applyMigrationChanges(migrationsNow, migrations.fresh, migrations.changed);
    if (migrationChanges.lost.length > 0) {
      throw new NeedFullRead(
        `live migration ${migrationChanges.lost[0]} left "accepted" unseen by changes-since (clock skew beyond ${this.opts.overlapSeconds} s?)`,
      );
    }

    const knew = (id: string) => st.servers.has(id);
    const newServers = changedServers.some((s) => !knew(s.id) && s.status !== DELETED_STATUS);
    const slowDue = st.cyclesSinceSlow + 1 >= this.opts.slowEveryCycles;
    const reread: string[] = [];
    const readWarnings: string[] = [];
    // A server joins its group and gets its ports at boot: new servers are when those change.
    const [groups, sriov] = await Promise.all([
      newServers || slowDue ? nova.listServerGroups(true) : undefined,
      newServers || slowDue ? readSriov(this.session, this.opts, readWarnings) : undefined,
    ]);
    if (groups) reread.push('server groups');
    if (newServers || slowDue) reread.push('ports');

    const wanted = wantedProviders(services, providers, st.hypervisors);
    const byGeneration = providersToRead(providers, st.readGeneration, wanted);
    // Placement leaves a provider's generation alone when an allocation is removed from it (a
    // cancelled migration's destination claim, a completed one's source claim): the hosts of
    // every migration listed this cycle (started, ended or cancelled, within the overlap) and
    // the hosts asked for are read whatever their generation.
    const named = new Set(this.pendingHosts);
    for (const m of migrations.merged.values()) {
      if (m.sourceCompute) named.add(m.sourceCompute);
      if (m.destCompute) named.add(m.destCompute);
    }
    const byHost = providersOfHosts(named, providers, st.hypervisors, wanted).filter(
      (uuid) => !byGeneration.includes(uuid),
    );
    const toRead = [...byGeneration, ...byHost];
    const data = await readProviders(this.session, toRead);
    this.pendingHosts = new Set([...this.pendingHosts].filter((h) => !named.has(h)));

    // Every read succeeded: fold them in.
    const serverChanges = applyServerChanges(st.servers, changedServers);
    st.services = services;
    st.aggregates = aggregates;
    st.providers = providers;
    st.migrations = migrationsNow;
    pruneMigrations(st.migrations, Date.parse(historySince(new Date(startMs), this.opts.historyDays)));
    if (groups) st.groups = groups;
    if (newServers || slowDue) {
      st.sriov = sriov;
      st.readWarnings = readWarnings;
      st.cyclesSinceSlow = 0;
    } else {
      st.cyclesSinceSlow++;
    }
    const generationOf = new Map(providers.map((p) => [p.uuid, p.generation]));
    for (const [uuid, d] of data) {
      st.placement.set(uuid, d);
      st.readGeneration.set(uuid, generationOf.get(uuid) as number);
    }
    st.readStartMs = startMs;
    st.cyclesSinceFull++;
    return {
      serversAdded: serverChanges.added.length,
      serversUpdated: serverChanges.updated.length,
      serversDeleted: serverChanges.deleted.length,
      migrationsChanged: migrationChanges.changed.length,
      providersRead: toRead.length,
      providersReadByHost: byHost.length,
      reread,
    };
  }
}

function leftOut(services: NovaService[], hosts: { name: string }[]): string[] {
  const recorded = new Set(hosts.map((h) => h.name));
  return [...new Set(services.map((s) => s.host))].filter((h) => !recorded.has(h)).sort();
}

/** The compute-node providers (among `wanted`) of the named hosts. */
function providersOfHosts(
  hosts: ReadonlySet<string>,
  providers: ResourceProvider[],
  hypervisors: NovaHypervisor[],
  wanted: ReadonlySet<string>,
): string[] {
  if (hosts.size === 0) return [];
  const rpOfHost = mapProvidersToHosts(providers, hypervisors);
  const out = new Set<string>();
  for (const h of hosts) {
    const rp = rpOfHost.get(h);
    if (rp && wanted.has(rp.uuid)) out.add(rp.uuid);
  }
  return [...out];
}

/** The providers a snapshot uses: the compute-node provider of each nova-compute host. */
function wantedProviders(
  services: NovaService[],
  providers: ResourceProvider[],
  hypervisors: NovaHypervisor[],
): Set<string> {
  const rpOfHost = mapProvidersToHosts(providers, hypervisors);
  const out = new Set<string>();
  for (const s of services) {
    const rp = rpOfHost.get(s.host);
    if (rp) out.add(rp.uuid);
  }
  return out;
}
