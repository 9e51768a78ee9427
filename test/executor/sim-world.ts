// A simulated cloud served over HTTP, the real OpenStack clients on it, and an executor wired to
// both with an in-memory journal and recording sinks. Time is the simulator's virtual clock; the
// executor's waits are shortened by the simulator's speed.

import { Actuator } from '../../src/cloud/actuator.js';
import { openSession } from '../../src/cloud/session.js';
import type { LockService } from '../../src/coordination/locks.js';
import { Executor, type ExecutorDeps } from '../../src/executor/index.js';
import type { ExecutionJournal, PlannedMove } from '../../src/executor/journal.js';
import { MemoryJournal } from '../../src/executor/memory-journal.js';
import { OpenStackExecutorCloud } from '../../src/executor/openstack-cloud.js';
import type {
  AuditEntry,
  Clock,
  CostSample,
  ExecutorCloud,
  QuarantineEntry,
  WaveGainCheck,
} from '../../src/executor/ports.js';
import { type ExecutorSettingsInput, resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';
import type { Host, Server, Snapshot } from '../../src/model/snapshot.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud, type SimMigration, type SimTiming } from '../../src/sim/model.js';

export const PROJECT = 'e0000000000000000000000000000001';

export function host(name: string, extra: Partial<Host> = {}): Host {
  return {
    name,
    availabilityZone: 'nova',
    aggregates: ['agg'],
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: 64, reserved: 0, allocationRatio: 4 },
      MEMORY_MB: { total: 262144, reserved: 512, allocationRatio: 1 },
      DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
    },
    usage: {},
    ...extra,
  };
}

export const serverId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function server(n: number, hostName: string, ramMB = 4096, extra: Partial<Server> = {}): Server {
  return {
    id: serverId(n),
    name: `vm-${n}`,
    projectId: PROJECT,
    host: hostName,
    status: 'ACTIVE',
    taskState: null,
    flavor: { name: `f${ramMB}`, vcpus: 2, ramMB, diskGB: 20 },
    sharedStorage: true,
    load: { cpu: 1, memoryMB: ramMB / 2 },
    ...extra,
  };
}

export function snapshot(hosts: Host[], servers: Server[]): Snapshot {
  return {
    format: 'aicerine-snapshot/1',
    takenAt: '2026-11-30T20:00:00Z',
    source: 'executor-test',
    hosts,
    servers,
    serverGroups: [],
  };
}

export function move(
  step: number,
  wave: number,
  n: number,
  from: string,
  to: string,
  extra: Partial<PlannedMove> = {},
): PlannedMove {
  return {
    step,
    wave,
    serverId: serverId(n),
    serverName: `vm-${n}`,
    from,
    to,
    estimatedSeconds: 10,
    ...extra,
  };
}

export interface World {
  cloud: SimCloud;
  sim: SimServerHandle;
  executorCloud: ExecutorCloud;
  clock: Clock;
  speed: number;
  close(): Promise<void>;
}

export interface WorldOptions {
  speed?: number;
  timing?: Partial<SimTiming>;
  faultSeed?: number;
  /** Per-request client timeout (wall ms). */
  timeoutMs?: number;
}

export async function openWorld(snap: Snapshot, opts: WorldOptions = {}): Promise<World> {
  const speed = opts.speed ?? 20;
  const cloud = new SimCloud(snap, {
    clock: new SimClock({ speed }),
    load: staticLoadModel(),
    ...(opts.timing ? { timing: opts.timing } : {}),
  });
  const sim = await startSimServer({ cloud, password: 'secret', faultSeed: opts.faultSeed ?? 1 });
  const common = {
    config: simAdminConfig(sim.authUrl, 'secret', 'executor test (simulator)'),
    timeoutMs: opts.timeoutMs ?? 5000,
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
    breaker: { consecutiveFailures: 1000, halfOpenAfterMs: 100 },
  };
  // Opened for their roles, so every executor test also proves that it reads with the reader
  // and writes with the actuator only.
  const reader = await openSession({ ...common, credential: { kind: 'reader', label: 'reader (test)' } });
  const actuator = await Actuator.open({ ...common, credential: { label: 'actuator (test)' } });
  return {
    cloud,
    sim,
    executorCloud: new OpenStackExecutorCloud(reader, actuator),
    clock: simClock(cloud, speed),
    speed,
    close: () => sim.close(),
  };
}

export function simClock(cloud: SimCloud, speed: number): Clock {
  return {
    now: () => cloud.clock.nowMs(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms / speed))),
  };
}

export interface Recorded {
  quarantined: QuarantineEntry[];
  costs: CostSample[];
  audit: AuditEntry[];
}

export function makeExecutor(
  world: Pick<World, 'executorCloud' | 'clock'>,
  opts: {
    settings?: ExecutorSettingsInput;
    journal?: ExecutionJournal;
    timeoutFor?: (m: PlannedMove) => number;
    slots?: MigrationSlots;
    /** The host locks shared with operator tasks (the service always gives them). */
    hostLocks?: LockService;
    /** The re-check before each later wave (the service wires its own). */
    waveCheck?: WaveGainCheck;
  } = {},
): { executor: Executor; journal: ExecutionJournal; recorded: Recorded; deps: ExecutorDeps } {
  const settings = resolveExecutorSettings({
    pollSeconds: 2,
    settleSeconds: 2,
    ...opts.settings,
    retry: { backoffBaseSeconds: 5, backoffMaxSeconds: 60, ...opts.settings?.retry },
  });
  const journal = opts.journal ?? new MemoryJournal();
  const recorded: Recorded = { quarantined: [], costs: [], audit: [] };
  const deps: ExecutorDeps = {
    journal,
    cloud: world.executorCloud,
    clock: world.clock,
    settings,
    slots: opts.slots ?? new MigrationSlots(settings.limits),
    timeoutFor: opts.timeoutFor ?? (() => 600),
    quarantine: { quarantine: async (e) => void recorded.quarantined.push(e) },
    costs: { record: async (s) => void recorded.costs.push(s) },
    audit: { record: async (a) => void recorded.audit.push(a) },
    ...(opts.hostLocks ? { hostLocks: opts.hostLocks } : {}),
    ...(opts.waveCheck ? { waveCheck: opts.waveCheck } : {}),
  };
  return { executor: new Executor(deps), journal, recorded, deps };
}

export const noStop = () => false;

/** Migrations the simulator ran, per server uuid. */
export function migrationsByServer(cloud: SimCloud): Map<string, SimMigration[]> {
  cloud.sync();
  const out = new Map<string, SimMigration[]>();
  for (const m of cloud.migrations) {
    const list = out.get(m.server.uuid) ?? [];
    list.push(m);
    out.set(m.server.uuid, list);
  }
  return out;
}

/** Most migrations in flight at once (simulator's records), per key. */
export function maxOverlap(
  migrations: SimMigration[],
  key: (m: SimMigration) => string,
): Map<string, number> {
  const events: { t: number; d: number; k: string }[] = [];
  for (const m of migrations) {
    const end = m.updatedMs ?? Number.POSITIVE_INFINITY;
    events.push({ t: m.createdMs, d: 1, k: key(m) }, { t: end, d: -1, k: key(m) });
  }
  // Ends before starts at the same instant: a slot freed and taken at once is not an overlap.
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  const cur = new Map<string, number>();
  const max = new Map<string, number>();
  for (const e of events) {
    const n = (cur.get(e.k) ?? 0) + e.d;
    cur.set(e.k, n);
    max.set(e.k, Math.max(max.get(e.k) ?? 0, n));
  }
  return max;
}
