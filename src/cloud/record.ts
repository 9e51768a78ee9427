// Records a snapshot (aicerine-snapshot/1) of a live cloud from list endpoints only: the
// number of API calls grows with the number of hosts and pages, never with the number of servers.
import {
  type Host,
  type Inventory,
  type MigrationRecord,
  SERVER_GROUP_POLICIES,
  type Server,
  type ServerGroup,
  type ServerGroupPolicy,
  SNAPSHOT_FORMAT,
  type Snapshot,
} from '../model/snapshot.js';
import { mapLimit } from './concurrency.js';
import { isCloudError } from './errors.js';
import type {
  NovaAggregate,
  NovaHypervisor,
  NovaMigration,
  NovaServer,
  NovaServerGroup,
  NovaService,
} from './openstack/nova.js';
import { FINAL_MIGRATION_STATUSES } from './openstack/nova.js';
import { listWithMarker } from './openstack/paging.js';
import type { PlacementInventory, ResourceProvider } from './openstack/placement.js';
import { type LoadedMetrics, type LoadTargets, loadMetrics, withServerMetrics } from './prometheus/loads.js';
import { DEFAULT_METRICS_POLICY, type MetricsPolicy } from './prometheus/policy.js';
import type { CloudSession } from './session.js';
import { SnapshotMemo } from './snapshot-memo.js';
import {
  DEFAULT_STORAGE_POLICY,
  decideStorage,
  type StorageDecision,
  type StoragePolicy,
} from './storage.js';

export interface RecordOptions {
  metricsPolicy?: MetricsPolicy;
  storage?: StoragePolicy;
  /** How far back os-migrations is read for migrationHistory. */
  historyDays?: number;
  /** Read Neutron ports for SR-IOV ("auto": when the catalog has a network service). */
  neutron?: 'auto' | 'never';
  source?: string;
  now?: () => Date;
  onProgress?: (step: string, done: number, total: number) => void;
}

export interface RecordResult {
  snapshot: Snapshot;
  /** Things left out or unknown, one line each. */
  warnings: string[];
  metrics: LoadedMetrics | undefined;
  /** Why each recorded server is (not) on shared storage. */
  storage: Map<string, StorageDecision>;
  /** Nova aggregates as read (metadata included), for `check`. */
  aggregates: NovaAggregate[];
  /** Live migrations of the history window as read, including those of deleted servers. */
  migrations: NovaMigration[];
  /** The compute-node resource provider of each recorded host. */
  providers: Map<string, ResourceProvider>;
  /** What loads were measured for (libvirt names included): the load profiles read their history. */
  loadTargets?: LoadTargets;
  /**
   * What the servers still building without a host claim in Placement (summed over the cloud):
   * the scheduler writes their allocations before Nova names their host, so for a few seconds a
   * host's usage holds flavors that no recorded server accounts for.
   */
  building: { servers: number; vcpus: number; ramMB: number };
}

/** vNIC types that bind a port to host hardware: such servers cannot be live-migrated freely. */
export const SRIOV_VNIC_TYPES = [
  'direct',
  'macvtap',
  'direct-physical',
  'virtio-forwarder',
  'vdpa',
  'remote-managed',
  'accelerator-direct',
  'accelerator-direct-physical',
];

const isPolicy = (p: string): p is ServerGroupPolicy =>
  (SERVER_GROUP_POLICIES as readonly string[]).includes(p);

/** Maps compute hosts to their root resource providers: hypervisor id is the RP uuid (2.53+), else the name. */
export function mapProvidersToHosts(
  providers: ResourceProvider[],
  hypervisors: NovaHypervisor[],
): Map<string, ResourceProvider> {
  const byUuid = new Map(providers.map((p) => [p.uuid, p]));
  const byName = new Map(providers.map((p) => [p.name, p]));
  const out = new Map<string, ResourceProvider>();
  for (const h of hypervisors) {
    const host = h.serviceHost ?? h.hypervisorHostname;
    const rp = byUuid.get(h.id) ?? byName.get(h.hypervisorHostname);
    if (rp && !out.has(host)) out.set(host, rp);
  }
  // Hosts whose hypervisor list was not readable still match on the provider name.
  for (const p of providers) if (p.parentProviderUuid === null && !out.has(p.name)) out.set(p.name, p);
  return out;
}

function toMigrationRecord(m: NovaMigration, ramMB: number): MigrationRecord | undefined {
  if (!m.sourceCompute || !m.destCompute || !FINAL_MIGRATION_STATUSES.has(m.status)) return undefined;
  const iso = (t: string) => new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : `${t}Z`).toISOString();
  return {
    serverId: m.serverId,
    source: m.sourceCompute,
    dest: m.destCompute,
    status: m.status,
    ramMB,
    startedAt: iso(m.createdAt),
    finishedAt: iso(m.updatedAt ?? m.createdAt),
  };
}

async function sriovServers(session: CloudSession, warnings: string[]): Promise<Set<string> | undefined> {
  const network = session.service('network');
  try {
    await network.endpoint();
  } catch (e) {
    if (isCloudError(e, 'catalog')) {
      warnings.push(
        'no network service in the catalog: SR-IOV ports unknown, servers recorded without "sriov"',
      );
      return undefined;
    }
    throw e;
  }
  try {
    const ports = await listWithMarker((p, q) => network.get(p, q), '/v2.0/ports', 'ports', {
      'binding:vnic_type': SRIOV_VNIC_TYPES,
      fields: ['id', 'device_id', 'binding:vnic_type'],
    });
    const out = new Set<string>();
    for (const p of ports) {
      const dev = p && typeof p === 'object' ? (p as { device_id?: unknown }).device_id : undefined;
      if (typeof dev === 'string' && dev) out.add(dev);
    }
    return out;
  } catch (e) {
    if (isCloudError(e, 'auth') || isCloudError(e, 'http')) {
      warnings.push(`Neutron ports not readable (${e.message}): servers recorded without "sriov"`);
      return undefined;
    }
    throw e;
  }
}

/** What one reading of the cloud gave, before it becomes a snapshot: the raw API objects. */
export interface CloudReads {
  /** nova-compute services. */
  services: NovaService[];
  aggregates: NovaAggregate[];
  hypervisors: NovaHypervisor[];
  /** Servers in any order (`assembleSnapshot` sorts them). */
  servers: NovaServer[];
  groups: NovaServerGroup[];
  /** Live migrations in any order, in-progress ones included. */
  migrations: NovaMigration[];
  /** Servers with an SR-IOV port, or undefined when Neutron was not read. */
  sriov: Set<string> | undefined;
  providers: ResourceProvider[];
  /** Inventories and usages by resource provider uuid. */
  placement: Map<string, ProviderData>;
}

export interface ProviderData {
  inventories: Record<string, PlacementInventory>;
  usages: Record<string, number>;
}

/** The start of the migration history window, as Nova's `changes-since` wants it. */
export function historySince(now: Date, historyDays = 30): string {
  return new Date(now.getTime() - historyDays * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Reads inventories and usages of these providers, 16 at a time. */
export async function readProviders(
  session: CloudSession,
  uuids: readonly string[],
): Promise<Map<string, ProviderData>> {
  const { placement } = session;
  const data = await mapLimit([...uuids], 16, async (uuid) => {
    const [inv, usages] = await Promise.all([placement.getInventories(uuid), placement.getUsages(uuid)]);
    return { inventories: inv.inventories, usages };
  });
  return new Map(uuids.map((u, i) => [u, data[i] as ProviderData]));
}

/** SR-IOV ports, unless turned off: `undefined` (with a warning) when Neutron is not there. */
export async function readSriov(
  session: CloudSession,
  opts: RecordOptions,
  warnings: string[],
): Promise<Set<string> | undefined> {
  return opts.neutron === 'never' ? undefined : sriovServers(session, warnings);
}

export async function recordSnapshot(session: CloudSession, opts: RecordOptions = {}): Promise<RecordResult> {
  const now = opts.now ?? (() => new Date());
  const warnings: string[] = [];
  const steps = [
    'versions',
    'services',
    'aggregates',
    'hypervisors',
    'servers',
    'server groups',
    'migrations',
    'ports',
    'placement',
    'metrics',
  ];
  let done = 0;
  const step = (name: string) => opts.onProgress?.(name, done++, steps.length);
  const { nova, placement } = session;

  step('versions');
  await Promise.all([nova.negotiate(), placement.negotiate()]);
  step('services');
  const services = await nova.listServices('nova-compute');
  step('aggregates');
  const aggregates = await nova.listAggregates();
  step('hypervisors');
  const hypervisors = await nova.listHypervisors();
  step('servers');
  const servers = await nova.listServers();
  step('server groups');
  const groups = await nova.listServerGroups(true);
  step('migrations');
  const migrations = await nova.listMigrations({
    changesSince: historySince(now(), opts.historyDays),
    migrationType: 'live-migration',
  });
  step('ports');
  const sriov = await readSriov(session, opts, warnings);

  step('placement');
  const providers = await placement.listResourceProviders();
  const rpOfHost = mapProvidersToHosts(providers, hypervisors);
  const wanted = [...services]
    .sort((a, b) => a.host.localeCompare(b.host))
    .map((svc) => rpOfHost.get(svc.host)?.uuid)
    .filter((u): u is string => u !== undefined);
  const placementData = await readProviders(session, wanted);

  step('metrics');
  const reads: CloudReads = {
    services,
    aggregates,
    hypervisors,
    servers,
    groups,
    migrations,
    sriov,
    providers,
    placement: placementData,
  };
  const result = await assembleSnapshot(session, reads, opts, warnings);
  opts.onProgress?.('done', steps.length, steps.length);
  return result;
}

/** A snapshot built from what was read, before loads are measured, and what it kept. */
export interface BuiltSnapshot {
  result: RecordResult;
  /** What loads are measured for: the hosts and the servers the snapshot kept. */
  targets: LoadTargets;
  /** The memo it was built with (a fresh one for a one-off record). */
  memo: SnapshotMemo;
}

/**
 * Builds the snapshot from what was read, then measures loads from Prometheus (when the session
 * has it) for the hosts and servers it kept. The full and the incremental recorder both end
 * here, so they cannot disagree on what a reading means.
 */
export async function assembleSnapshot(
  session: CloudSession,
  reads: CloudReads,
  opts: RecordOptions,
  warnings: string[],
): Promise<RecordResult> {
  const built = buildSnapshot(session, reads, opts, warnings);
  await addLoads(session, built, opts);
  return built.result;
}

/** The snapshot of what was read (no loads yet): pure but for the clock and the source name. */
export function buildSnapshot(
  session: CloudSession,
  reads: CloudReads,
  opts: RecordOptions,
  warnings: string[],
  memo: SnapshotMemo = new SnapshotMemo(),
): BuiltSnapshot {
  const now = opts.now ?? (() => new Date());
  const { services, aggregates, hypervisors, groups, migrations, sriov, providers } = reads;
  const rpOfHost = mapProvidersToHosts(providers, hypervisors);
  const aggsOfHost = new Map<string, NovaAggregate[]>();
  for (const a of aggregates) for (const h of a.hosts) aggsOfHost.set(h, [...(aggsOfHost.get(h) ?? []), a]);

  const hosts: Host[] = [];
  const sortedServices = [...services].sort((a, b) => a.host.localeCompare(b.host));
  for (const svc of sortedServices) {
    const rp = rpOfHost.get(svc.host);
    const data = rp ? reads.placement.get(rp.uuid) : undefined;
    if (!data) {
      warnings.push(`host ${svc.host}: no Placement resource provider found; host and its servers left out`);
      continue;
    }
    const inventory: Record<string, Inventory> = {};
    for (const [rc, inv] of Object.entries(data.inventories)) {
      inventory[rc] = { total: inv.total, reserved: inv.reserved, allocationRatio: inv.allocationRatio };
    }
    if (!inventory.VCPU || !inventory.MEMORY_MB) {
      warnings.push(
        `host ${svc.host}: no VCPU or MEMORY_MB inventory in Placement; host and its servers left out`,
      );
      continue;
    }
    const hostAggs = aggsOfHost.get(svc.host) ?? [];
    const az = hostAggs.find((a) => a.availabilityZone)?.availabilityZone ?? svc.zone ?? 'nova';
    hosts.push({
      name: svc.host,
      availabilityZone: svc.zone && svc.zone !== 'internal' ? svc.zone : az,
      aggregates: hostAggs.map((a) => a.name).sort(),
      service: {
        state: svc.state,
        status: svc.status,
        forcedDown: svc.forcedDown,
        ...(svc.disabledReason ? { disabledReason: svc.disabledReason } : {}),
      },
      inventory,
      usage: { ...data.usages },
    });
  }
  const hostNames = new Set(hosts.map((h) => h.name));

  const servers: Server[] = [];
  const targets: LoadTargets = { hosts: hosts.map((h) => h.name), servers: [] };
  const storagePolicy = opts.storage ?? DEFAULT_STORAGE_POLICY;
  const stamp = memo.begin(aggregates, sriov, storagePolicy);
  let unplaced = 0;
  const building = { servers: 0, vcpus: 0, ramMB: 0 };
  for (const s of memo.sorted(reads.servers)) {
    if (!s.host) {
      unplaced++;
      if (s.status === 'BUILD') {
        building.servers++;
        building.vcpus += s.flavor.vcpus;
        building.ramMB += s.flavor.ramMB;
      }
      continue;
    }
    if (!hostNames.has(s.host)) {
      warnings.push(`server ${s.id}: on host ${s.host}, which is not recorded; left out`);
      continue;
    }
    // Nova reports it unchanged and nothing it depends on changed: the same object as before.
    const known = memo.servers.get(s.id);
    if (known !== undefined && known.nova === s) {
      known.stamp = stamp;
      servers.push(known.server);
      targets.servers.push(known.target);
      continue;
    }
    const storage = decideStorage(
      { imageId: s.imageId, flavorExtraSpecs: s.flavor.extraSpecs },
      aggsOfHost.get(s.host) ?? [],
      storagePolicy,
    );
    const server: Server = {
      id: s.id,
      name: s.name,
      projectId: s.projectId,
      host: s.host,
      status: s.status,
      taskState: s.taskState,
      flavor: {
        name: s.flavor.name,
        vcpus: s.flavor.vcpus,
        ramMB: s.flavor.ramMB,
        diskGB: s.flavor.diskGB,
        extraSpecs: s.flavor.extraSpecs,
      },
      sharedStorage: storage.shared,
    };
    if (sriov) server.sriov = sriov.has(s.id);
    if (Object.keys(s.metadata).length > 0) server.metadata = s.metadata;
    memo.built.push(servers.length);
    const target = { id: s.id, instanceName: s.instanceName, host: s.host };
    memo.servers.set(s.id, { nova: s, server, storage, target, stamp });
    memo.storage.set(s.id, storage);
    servers.push(server);
    targets.servers.push(target);
  }
  memo.end(stamp);
  if (unplaced) warnings.push(`${unplaced} servers have no host (building, shelved or failed): left out`);

  const serverGroups: ServerGroup[] = [];
  for (const g of [...groups].sort((a, b) => a.id.localeCompare(b.id))) {
    if (!isPolicy(g.policy)) {
      warnings.push(`server group ${g.id}: unknown policy "${g.policy}"; left out`);
      continue;
    }
    const group: ServerGroup = {
      id: g.id,
      name: g.name,
      policy: g.policy,
      members: g.members.filter((m) => memo.kept(m, stamp) !== undefined),
    };
    const max = Number(g.rules.max_server_per_host);
    if (g.policy === 'anti-affinity' && Number.isInteger(max) && max > 0)
      group.rules = { max_server_per_host: max };
    if (g.projectId) group.projectId = g.projectId;
    serverGroups.push(group);
  }

  const migrationHistory: MigrationRecord[] = [];
  for (const m of [...migrations].sort((a, b) => a.id - b.id)) {
    const ram = memo.kept(m.serverId, stamp)?.nova.flavor.ramMB;
    if (ram === undefined) continue;
    const rec = toMigrationRecord(m, ram);
    if (rec) migrationHistory.push(rec);
  }

  const snapshot: Snapshot = {
    format: SNAPSHOT_FORMAT,
    takenAt: now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z'),
    source: opts.source ?? `openstack:${session.config.name}`,
    hosts,
    servers,
    serverGroups,
  };
  if (migrationHistory.length > 0) snapshot.migrationHistory = migrationHistory;
  return {
    result: {
      snapshot,
      warnings,
      metrics: undefined,
      storage: memo.storage,
      aggregates,
      migrations,
      providers: rpOfHost,
      building,
    },
    targets,
    memo,
  };
}

const HOSTS_ONLY: ReadonlySet<'host' | 'server'> = new Set(['host']);

/**
 * Measures host and server loads from Prometheus, when the session has it, into the snapshot.
 * With `serverFiguresFrom`, only the host rules are queried and servers keep that earlier read's
 * figures (the incremental recorder reads per-server series on a slower cadence).
 */
export async function addLoads(
  session: CloudSession,
  built: BuiltSnapshot,
  opts: RecordOptions,
  serverFiguresFrom?: LoadedMetrics,
): Promise<void> {
  if (!session.prometheus) return;
  const now = opts.now ?? (() => new Date());
  const { snapshot, warnings } = built.result;
  const { hosts, servers } = snapshot;
  const targets = built.targets;
  built.result.loadTargets = targets;
  const fresh = await loadMetrics(
    session.prometheus,
    opts.metricsPolicy ?? DEFAULT_METRICS_POLICY,
    targets,
    now(),
    serverFiguresFrom === undefined ? undefined : HOSTS_ONLY,
  );
  const metrics = serverFiguresFrom === undefined ? fresh : withServerMetrics(fresh, serverFiguresFrom);
  for (const h of hosts) {
    const load = metrics.hostLoads.get(h.name);
    if (load) h.load = load;
  }
  // A server built in an earlier cycle is shared with that cycle's snapshot: a new load gives a
  // new object (kept in the memo), never a change in place. Given the same loads as the last
  // build, a server kept from it already carries its own: only the servers built afresh are
  // looked at.
  const memo = built.memo;
  const same = memo.loadsApplied !== undefined && memo.loadsApplied === metrics.serverLoads;
  memo.loadsApplied = metrics.serverLoads;
  const apply = (i: number) => {
    const s = servers[i]!;
    const load = metrics.serverLoads.get(s.id);
    if (s.load === load) return;
    const { load: _old, ...rest } = s;
    const next: Server = load === undefined ? rest : { ...rest, load };
    servers[i] = next;
    const entry = memo.servers.get(s.id);
    if (entry !== undefined && entry.server === s) entry.server = next;
  };
  if (same) for (const i of memo.built) apply(i);
  else for (let i = 0; i < servers.length; i++) apply(i);
  memo.loadsFinished();
  for (const p of metrics.health.problems) warnings.push(`metrics: ${p}`);
  built.result.metrics = metrics;
}
