// The simulated cloud: Nova's hosts, services, aggregates, flavors, servers, server groups and
// migrations, plus Placement, built from a snapshot. Lists are kept in the order Nova returns
// them, with maps for marker lookups, so a page costs the page, not the cloud.
import type { Snapshot } from '../model/snapshot.js';
import { DEFAULT_POLICY } from '../policy/defaults.js';
import type { CostModelPolicy } from '../policy/types.js';
import { CinderState } from './cinder-state.js';
import { SimClock } from './clock.js';
import { EventQueue } from './event-queue.js';
import { keystoneId, stableUuid } from './ids.js';
import { generatedLoadModel, type LoadModel, type ServerLoad } from './load.js';
import { PlacementState, type ResourceAmounts, type ResourceProvider } from './placement-state.js';

export interface SimFlavor {
  id: string;
  intId: number;
  name: string;
  vcpus: number;
  ram: number;
  disk: number;
  extraSpecs: Record<string, string>;
  /** false for a flavor created private (POST /flavors); absent: public. */
  isPublic?: boolean;
  /** Projects a private flavor is open to (os-flavor-access). */
  projects?: string[];
}

/** The trait nova-compute keeps on the provider of a disabled service (synchronously, on the API call). */
export const COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED';

/** What Nova does on PUT /os-services: the service status and its provider's COMPUTE_STATUS_DISABLED trait. */
export function setServiceStatus(h: SimHost, status: 'enabled' | 'disabled', reason: string | null): void {
  h.status = status;
  h.disabledReason = status === 'disabled' ? reason : null;
  const has = h.rp.traits.has(COMPUTE_STATUS_DISABLED);
  if (status === 'disabled' && !has) h.rp.traits.add(COMPUTE_STATUS_DISABLED);
  else if (status === 'enabled' && has) h.rp.traits.delete(COMPUTE_STATUS_DISABLED);
  else return;
  h.rp.generation++;
}

export interface SimHost {
  name: string;
  index: number;
  serviceUuid: string;
  serviceIntId: number;
  nodeUuid: string;
  hostIp: string;
  az: string;
  aggregates: string[];
  /** The service stopped reporting (state down), without being forced down. */
  down: boolean;
  forcedDown: boolean;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  serviceUpdatedMs: number;
  rp: ResourceProvider;
  maxConcurrentLiveMigrations: number;
  /** nova.conf cpu_allocation_ratio: nova-compute rewrites Placement's VCPU ratio to this. */
  ratioPin: { ratio: number; periodSeconds: number } | null;
  /** Order indexes of the servers on this host, ascending (Nova's list order). */
  servers: number[];
  running: Set<SimMigration>;
  queue: SimMigration[];
  /** Hypervisor overhead counted on top of the guests. */
  baseLoad: ServerLoad;
}

export interface SimServer {
  uuid: string;
  /** Position in Nova's default order (newest first). */
  order: number;
  name: string;
  projectId: string;
  userId: string;
  host: string;
  flavor: SimFlavor;
  status: string;
  taskState: string | null;
  vmState: string;
  powerState: number;
  createdMs: number;
  updatedMs: number;
  metadata: Record<string, string>;
  sharedStorage: boolean;
  sriov: boolean;
  dirtyRateMBps: number | undefined;
  fixedLoad: { cpu?: number | undefined; memoryMB?: number | undefined } | undefined;
  instanceName: string;
  migration: SimMigration | null;
  /** The fault Nova records on a server in ERROR (a boot the scheduler could not place). */
  fault?: { code: number; message: string; createdMs: number };
}

export interface SimGroup {
  uuid: string;
  name: string;
  policy: string;
  rules: Record<string, number>;
  members: string[];
  projectId: string;
  userId: string;
}

export interface SimAggregate {
  id: number;
  uuid: string;
  name: string;
  az: string | null;
  hosts: string[];
  metadata: Record<string, string>;
  createdMs: number;
}

export const MIGRATION_STATUSES = [
  'accepted',
  'queued',
  'preparing',
  'running',
  'completed',
  'failed',
  'cancelled',
  'error',
  // Cold migration (migration_type "migration"): pre-migrating, migrating, post-migrating,
  // finished (the server waits in VERIFY_RESIZE), then confirming and confirmed.
  'pre-migrating',
  'migrating',
  'post-migrating',
  'finished',
  'confirming',
  'confirmed',
] as const;
export type MigrationStatus = (typeof MIGRATION_STATUSES)[number];

export interface SimMigration {
  id: number;
  uuid: string;
  /** os-migrations' migration_type: a live migration, or a cold one (resize to the same flavor). */
  type: 'live-migration' | 'migration';
  /** Cold migration: the vm_state the server had (and gets back on confirm). */
  coldFrom?: 'active' | 'stopped';
  server: SimServer;
  source: string;
  /** The destination once the scheduler chose or confirmed it. */
  dest: string | null;
  /** The host the API call asked for; null: the scheduler picks. */
  requestedHost: string | null;
  status: MigrationStatus;
  createdMs: number;
  /** null until the record first changes (Nova's updated_at). */
  updatedMs: number | null;
  projectId: string;
  userId: string;
  flavorIntId: number;
  /** Total seconds from the cost model (scheduling, pre-copy, switch-over). */
  durationSeconds: number;
  runStartedMs: number | null;
  runEndsMs: number | null;
  /** Bumped whenever the planned end changes, so stale events do nothing. */
  epoch: number;
  /**
   * Soft-deleted with its server (Nova's instance_destroy): gone from os-migrations, and no
   * longer a marker for paging.
   */
  deleted?: boolean;
}

export interface SimTiming {
  /**
   * Seconds from the API call to the conductor's destination check and claims. Until then the
   * record is `accepted` with `updated_at` null, so `changes-since` queries do not see it.
   */
  scheduleSeconds: number;
  /** Seconds in "preparing" (pre_live_migration on the destination), at most this. */
  prepareSeconds: number;
  /** Seconds an abort of a running migration takes to take effect. */
  abortSeconds: number;
  /** Seconds an abort of a queued migration (2.65+) takes to show as cancelled. */
  queuedAbortSeconds: number;
  /** Seconds a forced completion takes to finish. */
  forceCompleteSeconds: number;
  /**
   * Seconds the server is already ACTIVE on the destination without task state while its
   * migration still says running (and the source claim is still held).
   */
  completionLagSeconds: number;
  /**
   * Seconds the scheduler keeps counting a migrated server on the host it left, or a failed one
   * on the destination it did not reach (nova-compute's scheduler_instance_sync_interval,
   * 120 s): its anti-affinity filter refuses that host to the server's group siblings meanwhile.
   */
  schedulerSyncSeconds: number;
  /** Seconds a pause or unpause takes (task_state pausing/unpausing until then). */
  pauseSeconds: number;
  /** When > 0, every migration stays "running" this long instead of the cost model's time (like the lab's live_migration_seconds). */
  holdSeconds: number;
  /** Seconds a volume made by `POST /volumes` stays `creating`. */
  volumeCreateSeconds: number;
  /** Seconds a deleted server's volumes stay `detaching`, still attached, before they are `available`. */
  volumeDetachSeconds: number;
  /** Seconds a volume (and its snapshots, with cascade) stays `deleting` before it is gone. */
  volumeDeleteSeconds: number;
}

export interface SimOptions {
  clock?: SimClock;
  load?: LoadModel;
  costModel?: CostModelPolicy;
  timing?: Partial<SimTiming>;
  /** Default nova.conf max_concurrent_live_migrations for hosts the snapshot gives none. */
  maxConcurrentLiveMigrations?: number;
  /**
   * Fill `memory_*_bytes` of in-progress migrations as libvirt does (default false: null, as
   * the lab's fake driver leaves them).
   */
  migrationProgress?: boolean;
}

export const ADMIN_PROJECT = keystoneId('project', 'admin');
export const ADMIN_USER = keystoneId('user', 'admin');
export const NOVA_MAX_LIMIT = 1000;

// Defaults from the lab (Nova 26 with its fake driver on 2 shared cores), see docs/simulator.md.
export const DEFAULT_TIMING: Readonly<SimTiming> = {
  scheduleSeconds: 1,
  prepareSeconds: 0.2,
  abortSeconds: 0.5,
  queuedAbortSeconds: 1.5,
  forceCompleteSeconds: 1,
  completionLagSeconds: 0.5,
  pauseSeconds: 0.5,
  schedulerSyncSeconds: 120,
  holdSeconds: 0,
  // Not measured: the lab has no Cinder. Long enough for a poll to see each state.
  volumeCreateSeconds: 2,
  volumeDetachSeconds: 1,
  volumeDeleteSeconds: 2,
};

/**
 * "scheduleSeconds=0.2" (one --timing flag): a SimTiming field and its seconds, checked like
 * PUT /sim/timing checks its body.
 */
export function parseTimingSpec(spec: string): Partial<SimTiming> {
  const m = /^([A-Za-z]+)=(.+)$/.exec(spec);
  const key = m?.[1] as keyof SimTiming | undefined;
  if (!m || key === undefined || !(key in DEFAULT_TIMING)) {
    throw new Error(
      `--timing ${spec}: expected KEY=SECONDS with KEY one of ${Object.keys(DEFAULT_TIMING).join(', ')}`,
    );
  }
  const seconds = Number(m[2]);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new Error(`--timing ${spec}: expected seconds >= 0, got ${JSON.stringify(m[2])}`);
  }
  return { [key]: seconds };
}

export class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class SimCloud {
  readonly clock: SimClock;
  readonly load: LoadModel;
  readonly costModel: CostModelPolicy;
  readonly timing: SimTiming;
  /** Whether in-progress migrations report memory_* progress (libvirt) or null (the lab's fake driver). */
  migrationProgress: boolean;
  readonly placement = new PlacementState();
  readonly events = new EventQueue();
  readonly source: string;
  readonly seed: string;

  readonly hosts: SimHost[] = [];
  readonly hostsByName = new Map<string, SimHost>();
  readonly hostsByServiceUuid = new Map<string, SimHost>();
  readonly hostsByNodeUuid = new Map<string, SimHost>();
  /** Newest first, as Nova lists them. */
  readonly servers: SimServer[] = [];
  readonly serversByUuid = new Map<string, SimServer>();
  readonly serversByProject = new Map<string, number[]>();
  /** Deleted servers, oldest deletion first: Nova keeps their rows and lists them to `changes-since`. */
  readonly deletedServers: SimServer[] = [];
  readonly flavors = new Map<string, SimFlavor>();
  readonly groups: SimGroup[] = [];
  readonly groupsByUuid = new Map<string, SimGroup>();
  readonly groupOfServer = new Map<string, SimGroup>();
  readonly aggregates: SimAggregate[] = [];
  /** Ascending id. */
  readonly migrations: SimMigration[] = [];
  readonly migrationsById = new Map<number, SimMigration>();
  readonly migrationsByUuid = new Map<string, SimMigration>();
  readonly migrationsOfServer = new Map<string, SimMigration[]>();
  readonly projects = new Set<string>();
  /** Cinder's volumes and snapshots (none unless seeded or created through `POST /volumes`). */
  readonly cinder: CinderState = new CinderState(this);

  /** Why a migration ended in "error" (the conductor's reason; Nova logs it, the API does not show it). */
  readonly lastErrors = new Map<number, string>();
  /**
   * The scheduler's stale instance view: host -> server uuid -> until (virtual ms). After a
   * live migration the scheduler still counts the server on the host it left (or, after a
   * failure, on the one it did not reach) until that compute's periodic instance sync.
   */
  readonly schedulerGhosts = new Map<string, Map<string, number>>();
  private eventTimeMs: number | null = null;

  /** Live migrations fail while true (like the lab's live_migration_fail file, empty). */
  failAllMigrations = false;
  /** Live migrations of these servers fail. */
  readonly failServers = new Set<string>();
  /**
   * Host -> how many of the next boots meet its nova-compute refreshing its provider tree just
   * before they are scheduled: like Nova's periodic update, the refresh puts
   * COMPUTE_STATUS_DISABLED back on the provider of a disabled service, whatever was lifted by
   * hand in between.
   */
  readonly providerRefreshBeforeBoots = new Map<string, number>();

  constructor(snapshot: Snapshot, options: SimOptions = {}) {
    // Virtual time starts at wall time: clients stamp requests (changes-since) with their own clock.
    this.clock = options.clock ?? new SimClock();
    this.load = options.load ?? generatedLoadModel();
    this.costModel = options.costModel ?? DEFAULT_POLICY.costModel;
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.migrationProgress = options.migrationProgress ?? false;
    this.source = snapshot.source;
    this.seed = `${snapshot.source}|${snapshot.takenAt}`;
    buildFromSnapshot(this, snapshot, options.maxConcurrentLiveMigrations ?? 1);
  }

  /** Virtual now; while an event runs, the event's own time, so late processing changes nothing. */
  nowMs(): number {
    return this.eventTimeMs ?? this.clock.nowMs();
  }

  /** Runs every event due by now, each at its own time. Call before reading or changing state. */
  sync(): void {
    if (this.eventTimeMs !== null) return;
    const now = this.clock.nowMs();
    try {
      for (;;) {
        const e = this.events.popDue(now);
        if (!e) break;
        this.eventTimeMs = e.at;
        e.run();
      }
    } finally {
      this.eventTimeMs = null;
    }
  }

  /** Advances virtual time and runs what became due, in order. */
  advance(seconds: number): void {
    this.clock.advance(seconds);
    this.sync();
  }

  at(ms: number, run: () => void): void {
    this.events.push(ms, run);
  }

  serviceState(h: SimHost): 'up' | 'down' {
    return h.down || h.forcedDown ? 'down' : 'up';
  }

  serverLoad(s: SimServer, tSeconds = this.clock.nowSeconds()): ServerLoad {
    return this.load.serverLoad(
      { id: s.uuid, vcpus: s.flavor.vcpus, ramMB: s.flavor.ram, fixed: s.fixedLoad },
      tSeconds,
    );
  }

  hostLoad(h: SimHost, tSeconds = this.clock.nowSeconds()): ServerLoad {
    let cpu = h.baseLoad.cpu;
    let memoryMB = h.baseLoad.memoryMB;
    for (const order of h.servers) {
      const s = this.servers[order] as SimServer;
      if (s.status === 'SHUTOFF') continue;
      const l = this.serverLoad(s, tSeconds);
      cpu += l.cpu;
      memoryMB += l.memoryMB;
    }
    return { cpu: Math.round(cpu * 1000) / 1000, memoryMB: Math.round(memoryMB) };
  }

  requireHost(name: string): SimHost {
    const h = this.hostsByName.get(name);
    if (!h) throw new SimError(404, `Compute host ${name} could not be found.`);
    return h;
  }

  requireServer(uuid: string): SimServer {
    const s = this.serversByUuid.get(uuid);
    if (!s) throw new SimError(404, `Instance ${uuid} could not be found.`);
    return s;
  }

  /** Moves a server between hosts' indexes (the Nova host field follows). */
  relocate(s: SimServer, dest: string): void {
    const from = this.hostsByName.get(s.host);
    const to = this.requireHost(dest);
    if (from) removeSorted(from.servers, s.order);
    insertSorted(to.servers, s.order);
    s.host = dest;
  }

  /** Sets (or clears) nova.conf cpu_allocation_ratio on a host; nova-compute enforces it periodically. */
  pinCpuAllocationRatio(hostName: string, pin: { ratio: number; periodSeconds: number } | null): void {
    const h = this.requireHost(hostName);
    h.ratioPin = pin;
    if (!pin) return;
    const tick = (): void => {
      if (h.ratioPin !== pin) return;
      const inv = h.rp.inventories.get('VCPU');
      if (inv && inv.allocation_ratio !== pin.ratio) {
        inv.allocation_ratio = pin.ratio;
        h.rp.generation++;
      }
      this.at(this.nowMs() + pin.periodSeconds * 1000, tick);
    };
    // nova-compute's update_available_resource runs at start, then every period.
    tick();
  }

  resourcesOf(s: SimServer): ResourceAmounts {
    return { VCPU: s.flavor.vcpus, MEMORY_MB: s.flavor.ram, DISK_GB: s.flavor.disk };
  }
}

function buildFromSnapshot(cloud: SimCloud, snap: Snapshot, defaultMaxLm: number): void {
  const seed = cloud.seed;
  const now = cloud.nowMs();
  snap.hosts.forEach((sh, index) => {
    const nodeUuid = stableUuid(seed, 'node', sh.name);
    const rp = cloud.placement.addProvider(nodeUuid, sh.name);
    for (const [rc, inv] of Object.entries(sh.inventory)) {
      if (!inv) continue;
      rp.inventories.set(rc, {
        total: inv.total,
        reserved: inv.reserved,
        min_unit: 1,
        max_unit: inv.total,
        step_size: 1,
        allocation_ratio: inv.allocationRatio,
      });
    }
    for (const t of [
      'COMPUTE_NODE',
      'HW_CPU_X86_AVX2',
      'COMPUTE_NET_ATTACH_INTERFACE',
      'COMPUTE_VOLUME_EXTEND',
    ]) {
      rp.traits.add(t);
    }
    if (sh.service.status === 'disabled') rp.traits.add(COMPUTE_STATUS_DISABLED);
    rp.generation = 1;
    const h: SimHost = {
      name: sh.name,
      index,
      serviceUuid: stableUuid(seed, 'service', sh.name),
      serviceIntId: index + 3,
      nodeUuid,
      hostIp: `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${(index & 255) + 1}`,
      az: sh.availabilityZone,
      aggregates: [...sh.aggregates],
      down: sh.service.state === 'down' && !sh.service.forcedDown,
      forcedDown: sh.service.forcedDown,
      status: sh.service.status,
      disabledReason: sh.service.status === 'disabled' ? (sh.service.disabledReason ?? null) : null,
      serviceUpdatedMs: now,
      rp,
      maxConcurrentLiveMigrations: sh.maxConcurrentLiveMigrations ?? defaultMaxLm,
      ratioPin: null,
      servers: [],
      running: new Set(),
      queue: [],
      baseLoad: { cpu: 0, memoryMB: 0 },
    };
    cloud.hosts.push(h);
    cloud.hostsByName.set(h.name, h);
    cloud.hostsByServiceUuid.set(h.serviceUuid, h);
    cloud.hostsByNodeUuid.set(h.nodeUuid, h);
  });

  let flavorSeq = 1;
  const flavorFor = (f: Snapshot['servers'][number]['flavor']): SimFlavor => {
    const specs = f.extraSpecs ?? {};
    const key = `${f.name}|${f.vcpus}|${f.ramMB}|${f.diskGB}|${JSON.stringify(Object.entries(specs).sort())}`;
    const existing = cloud.flavors.get(key);
    if (existing) return existing;
    // The flavor id is its name, as in the lab; a second flavor of the same name gets a suffix.
    let id = f.name;
    for (let i = 2; [...cloud.flavors.values()].some((x) => x.id === id); i++) id = `${f.name}-${i}`;
    const flavor: SimFlavor = {
      id,
      intId: flavorSeq++,
      name: f.name,
      vcpus: f.vcpus,
      ram: f.ramMB,
      disk: f.diskGB,
      extraSpecs: { ...specs },
    };
    cloud.flavors.set(key, flavor);
    return flavor;
  };

  const n = snap.servers.length;
  snap.servers.forEach((ss, order) => {
    // Snapshot order is kept as Nova's list order: the first server is the newest.
    const createdMs = now - (order + 1) * 60_000 - 86_400_000;
    const s: SimServer = {
      uuid: ss.id,
      order,
      name: ss.name,
      projectId: ss.projectId,
      userId: ADMIN_USER,
      host: ss.host,
      flavor: flavorFor(ss.flavor),
      status: ss.status,
      taskState: ss.taskState,
      vmState: vmStateOf(ss.status),
      powerState: POWER_STATE[ss.status] ?? 1,
      createdMs,
      updatedMs: createdMs,
      metadata: { ...(ss.metadata ?? {}) },
      sharedStorage: ss.sharedStorage,
      sriov: ss.sriov ?? false,
      dirtyRateMBps: ss.dirtyRateMBps,
      fixedLoad: ss.load ? { cpu: ss.load.cpu, memoryMB: ss.load.memoryMB } : undefined,
      instanceName: `instance-${(n - order).toString(16).padStart(8, '0')}`,
      migration: null,
    };
    cloud.servers.push(s);
    cloud.serversByUuid.set(s.uuid, s);
    cloud.projects.add(s.projectId);
    const byProject = cloud.serversByProject.get(s.projectId);
    if (byProject) byProject.push(order);
    else cloud.serversByProject.set(s.projectId, [order]);
    const h = cloud.hostsByName.get(s.host);
    if (h) {
      h.servers.push(order);
      cloud.placement.setAllocations(
        s.uuid,
        new Map([[h.nodeUuid, cloud.resourcesOf(s)]]),
        s.projectId,
        s.userId,
      );
    }
  });

  // Usage a snapshot records beyond its servers (servers it left out, or claims in flight) is
  // kept as one opaque consumer per host, so Placement usages read back as recorded.
  for (const sh of snap.hosts) {
    const h = cloud.hostsByName.get(sh.name) as SimHost;
    const extra: ResourceAmounts = {};
    let any = false;
    for (const [rc, used] of Object.entries(sh.usage)) {
      const have = h.rp.usage.get(rc) ?? 0;
      if (used !== undefined && used > have) {
        extra[rc] = used - have;
        any = true;
      }
    }
    if (any) {
      cloud.placement.setAllocations(
        stableUuid(seed, 'other-consumer', sh.name),
        new Map([[h.nodeUuid, extra]]),
        ADMIN_PROJECT,
        ADMIN_USER,
      );
    }
    h.rp.generation = 1;
    if (sh.load) {
      // Static loads: what the snapshot measured beyond its servers is hypervisor overhead.
      let cpu = 0;
      let mem = 0;
      for (const order of h.servers) {
        const s = cloud.servers[order] as SimServer;
        const l = cloud.serverLoad(s);
        cpu += l.cpu;
        mem += l.memoryMB;
      }
      h.baseLoad =
        cloud.load.kind === 'static'
          ? {
              cpu: Math.max(0, (sh.load.cpu ?? cpu) - cpu),
              memoryMB: Math.max(0, (sh.load.memoryMB ?? mem) - mem),
            }
          : defaultBaseLoad(h);
    } else {
      h.baseLoad = defaultBaseLoad(h);
    }
  }

  snap.serverGroups.forEach((g) => {
    const group: SimGroup = {
      uuid: g.id,
      name: g.name,
      policy: g.policy,
      rules:
        g.policy === 'anti-affinity' && g.rules?.max_server_per_host
          ? { max_server_per_host: g.rules.max_server_per_host }
          : {},
      members: [...g.members],
      projectId: g.projectId ?? cloud.serversByUuid.get(g.members[0] ?? '')?.projectId ?? ADMIN_PROJECT,
      userId: ADMIN_USER,
    };
    cloud.groups.push(group);
    cloud.groupsByUuid.set(group.uuid, group);
    for (const m of group.members) cloud.groupOfServer.set(m, group);
  });

  const aggNames = new Map<string, string[]>();
  for (const h of cloud.hosts) {
    for (const a of h.aggregates) {
      let list = aggNames.get(a);
      if (!list) {
        list = [];
        aggNames.set(a, list);
      }
      list.push(h.name);
    }
  }
  let aggId = 1;
  const azCovered = new Set<string>();
  for (const [name, hosts] of aggNames) {
    const azs = new Set(hosts.map((n) => cloud.hostsByName.get(n)?.az));
    const only = azs.size === 1 ? [...azs][0] : undefined;
    const az = only && only !== 'nova' ? only : null;
    if (az) for (const hn of hosts) azCovered.add(hn);
    cloud.aggregates.push({
      id: aggId++,
      uuid: stableUuid(seed, 'aggregate', name),
      name,
      az,
      hosts,
      metadata: az ? { availability_zone: az } : {},
      createdMs: now - 86_400_000 * 30,
    });
  }
  // Hosts in a non-default zone that no named aggregate carries get a zone-only aggregate.
  const azHosts = new Map<string, string[]>();
  for (const h of cloud.hosts) {
    if (h.az === 'nova' || azCovered.has(h.name)) continue;
    let list = azHosts.get(h.az);
    if (!list) {
      list = [];
      azHosts.set(h.az, list);
    }
    list.push(h.name);
  }
  for (const [az, hosts] of azHosts) {
    cloud.aggregates.push({
      id: aggId++,
      uuid: stableUuid(seed, 'az-aggregate', az),
      name: `az-${az}`,
      az,
      hosts,
      metadata: { availability_zone: az },
      createdMs: now - 86_400_000 * 30,
    });
  }
  for (const a of cloud.aggregates) {
    for (const hn of a.hosts) cloud.hostsByName.get(hn)?.rp.aggregates.add(a.uuid);
  }

  let migId = 1;
  for (const m of snap.migrationHistory ?? []) {
    const s = cloud.serversByUuid.get(m.serverId);
    const startedMs = Date.parse(m.startedAt);
    const finishedMs = Date.parse(m.finishedAt);
    const mig: SimMigration = {
      type: 'live-migration',
      id: migId++,
      uuid: stableUuid(seed, 'migration', migId),
      server:
        s ??
        ({
          uuid: m.serverId,
          projectId: ADMIN_PROJECT,
          userId: ADMIN_USER,
          flavor: { intId: 0 },
        } as SimServer),
      source: m.source,
      dest: m.dest,
      requestedHost: m.dest,
      status: (MIGRATION_STATUSES as readonly string[]).includes(m.status)
        ? (m.status as MigrationStatus)
        : 'completed',
      createdMs: Number.isFinite(startedMs) ? startedMs : now,
      updatedMs: Number.isFinite(finishedMs) ? finishedMs : now,
      projectId: s?.projectId ?? ADMIN_PROJECT,
      userId: ADMIN_USER,
      flavorIntId: s?.flavor.intId ?? 0,
      durationSeconds: Number.isFinite(finishedMs - startedMs) ? (finishedMs - startedMs) / 1000 : 0,
      runStartedMs: null,
      runEndsMs: null,
      epoch: 0,
    };
    addMigration(cloud, mig);
  }
}

export function addMigration(cloud: SimCloud, m: SimMigration): void {
  cloud.migrations.push(m);
  cloud.migrationsById.set(m.id, m);
  cloud.migrationsByUuid.set(m.uuid, m);
  const list = cloud.migrationsOfServer.get(m.server.uuid);
  if (list) list.push(m);
  else cloud.migrationsOfServer.set(m.server.uuid, [m]);
}

function defaultBaseLoad(h: SimHost): ServerLoad {
  const cores = h.rp.inventories.get('VCPU')?.total ?? 0;
  const mem = h.rp.inventories.get('MEMORY_MB');
  const reserved = mem ? Math.min(mem.reserved, mem.total) : 0;
  // nova-compute, libvirt and the host OS: a slice of a core and the memory reserved for them.
  return { cpu: Math.round(cores * 0.01 * 1000) / 1000 + 0.2, memoryMB: reserved > 0 ? reserved : 2048 };
}

/** Nova's power_state codes by server status (1 running). */
const POWER_STATE: Readonly<Record<string, number>> = { SHUTOFF: 4, PAUSED: 3, SUSPENDED: 7 };

function vmStateOf(status: string): string {
  switch (status) {
    case 'SHUTOFF':
      return 'stopped';
    case 'PAUSED':
      return 'paused';
    case 'SUSPENDED':
      return 'suspended';
    case 'ERROR':
      return 'error';
    default:
      return 'active';
  }
}

export function insertSorted(arr: number[], v: number): void {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((arr[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  arr.splice(lo, 0, v);
}

export function removeSorted(arr: number[], v: number): void {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((arr[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  if (arr[lo] === v) arr.splice(lo, 1);
}

/** First index in a sorted array holding a value greater than v. */
export function upperBound(arr: readonly number[], v: number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((arr[mid] as number) <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
