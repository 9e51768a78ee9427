// Live migrations as Nova runs them: the API accepts, the conductor checks the destination and
// moves the source allocation to the migration record (so both hosts hold the claim), the
// source compute queues it behind max_concurrent_live_migrations, then preparing, running,
// and completed, failed or cancelled; the claims are settled at the end.
import { estimateMigrationSeconds } from '../planner/cost-model.js';
import { stableUuid } from './ids.js';
import {
  ADMIN_USER,
  addMigration,
  type MigrationStatus,
  type SimCloud,
  SimError,
  type SimHost,
  type SimMigration,
  type SimServer,
} from './model.js';

export interface LiveMigrateRequest {
  serverUuid: string;
  /** Destination host; null: the scheduler picks one. */
  host: string | null;
  userId?: string;
}

const FINAL: ReadonlySet<MigrationStatus> = new Set(['completed', 'failed', 'cancelled', 'error']);

export function isFinal(m: SimMigration): boolean {
  return FINAL.has(m.status);
}

/** POST /servers/{id}/action os-migrateLive. Synchronous checks throw SimError; the rest runs on the clock. */
export function startLiveMigration(cloud: SimCloud, req: LiveMigrateRequest): SimMigration {
  cloud.sync();
  const s = cloud.requireServer(req.serverUuid);
  if (s.taskState !== null) {
    throw new SimError(
      409,
      `Cannot 'os-migrateLive' instance ${s.uuid} while it is in task_state ${s.taskState}`,
    );
  }
  if (s.vmState !== 'active' && s.vmState !== 'paused') {
    throw new SimError(
      409,
      `Cannot 'os-migrateLive' instance ${s.uuid} while it is in vm_state ${s.vmState}`,
    );
  }
  if (req.host !== null && !cloud.hostsByName.has(req.host)) {
    throw new SimError(400, `Compute host ${req.host} could not be found.`);
  }
  const source = cloud.requireHost(s.host);
  if (cloud.serviceState(source) === 'down') {
    throw new SimError(409, `Compute service of ${source.name} is unavailable at this time.`);
  }
  const now = cloud.nowMs();
  const id = (cloud.migrations.at(-1)?.id ?? 0) + 1;
  const m: SimMigration = {
    id,
    uuid: stableUuid(cloud.seed, 'migration', id),
    server: s,
    source: s.host,
    dest: null,
    requestedHost: req.host,
    status: 'accepted',
    createdMs: now,
    updatedMs: null,
    projectId: s.projectId,
    userId: req.userId ?? ADMIN_USER,
    flavorIntId: s.flavor.intId,
    durationSeconds: estimateMigrationSeconds(
      { ramMB: s.flavor.ram, dirtyRateMBps: s.dirtyRateMBps },
      cloud.costModel,
    ),
    runStartedMs: null,
    runEndsMs: null,
    epoch: 0,
  };
  addMigration(cloud, m);
  s.taskState = 'migrating';
  s.status = 'MIGRATING';
  s.updatedMs = now;
  s.migration = m;
  cloud.at(now + cloud.timing.scheduleSeconds * 1000, () => schedule(cloud, m));
  return m;
}

function setStatus(cloud: SimCloud, m: SimMigration, status: MigrationStatus): void {
  m.status = status;
  m.updatedMs = cloud.nowMs();
}

function clearTask(cloud: SimCloud, s: SimServer): void {
  s.taskState = null;
  s.status = s.vmState === 'paused' ? 'PAUSED' : 'ACTIVE';
  s.updatedMs = cloud.nowMs();
  s.migration = null;
}

/** Conductor: pick or check the destination, then claim on it (scheduler + Placement). */
function schedule(cloud: SimCloud, m: SimMigration): void {
  const s = m.server;
  const need = cloud.resourcesOf(s);
  const reject = (why: string): void => {
    setStatus(cloud, m, 'error');
    clearTask(cloud, s);
    cloud.lastErrors.set(m.id, why);
  };
  let dest: SimHost | undefined;
  if (m.requestedHost !== null) {
    dest = cloud.hostsByName.get(m.requestedHost);
    const why = dest
      ? destinationProblem(cloud, s, dest)
      : `Compute host ${m.requestedHost} could not be found.`;
    if (why) {
      reject(why);
      return;
    }
  } else {
    dest = pickDestination(cloud, s);
    if (!dest) {
      reject('No valid host was found. There are not enough hosts available.');
      return;
    }
  }
  m.dest = (dest as SimHost).name;
  const target = dest as SimHost;
  // Nova moves the instance's source allocation to the migration record and claims the
  // destination for the instance: from here both hosts hold the resources.
  cloud.placement.moveAllocations(s.uuid, m.uuid);
  cloud.placement.setAllocations(s.uuid, new Map([[target.nodeUuid, need]]), s.projectId, s.userId);
  setStatus(cloud, m, 'queued');
  const src = cloud.requireHost(m.source);
  src.queue.push(m);
  pump(cloud, src);
}

function destinationProblem(cloud: SimCloud, s: SimServer, dest: SimHost): string | null {
  if (dest.name === s.host) {
    return `Unable to migrate instance (${s.uuid}) to current host (${s.host}).`;
  }
  if (cloud.serviceState(dest) === 'down' || dest.status === 'disabled') {
    return `Compute service of ${dest.name} is unavailable at this time.`;
  }
  if (!cloud.placement.fits(dest.rp, cloud.resourcesOf(s))) {
    return `Unable to migrate instance (${s.uuid}) to host (${dest.name}): not enough resources.`;
  }
  const g = cloud.groupOfServer.get(s.uuid);
  if (g && g.policy === 'anti-affinity') {
    const max = g.rules.max_server_per_host ?? 1;
    let onDest = 0;
    for (const member of g.members) {
      if (member !== s.uuid && cloud.serversByUuid.get(member)?.host === dest.name) onDest++;
    }
    if (onDest >= max) return 'No valid host was found. ServerGroupAntiAffinityFilter rejected the host.';
  }
  if (g && g.policy === 'affinity') {
    const others = g.members.filter((u) => u !== s.uuid).map((u) => cloud.serversByUuid.get(u)?.host);
    if (others.length > 0 && !others.includes(dest.name)) {
      return 'No valid host was found. ServerGroupAffinityFilter rejected the host.';
    }
  }
  return null;
}

function pickDestination(cloud: SimCloud, s: SimServer): SimHost | undefined {
  const source = cloud.hostsByName.get(s.host);
  let best: SimHost | undefined;
  let bestFree = -Infinity;
  for (const h of cloud.hosts) {
    if (h.name === s.host || (source && h.az !== source.az)) continue;
    if (destinationProblem(cloud, s, h) !== null) continue;
    // Nova's default RAMWeigher: the host with the most free memory wins.
    const free = cloud.placement.capacity(h.rp, 'MEMORY_MB') - cloud.placement.usageOf(h.rp, 'MEMORY_MB');
    if (free > bestFree) {
      best = h;
      bestFree = free;
    }
  }
  return best;
}

/** Source compute: start queued migrations while slots are free. */
function pump(cloud: SimCloud, host: SimHost): void {
  while (host.running.size < host.maxConcurrentLiveMigrations && host.queue.length > 0) {
    const m = host.queue.shift() as SimMigration;
    if (m.status !== 'queued') continue;
    host.running.add(m);
    setStatus(cloud, m, 'preparing');
    const prepare = Math.min(cloud.timing.prepareSeconds, m.durationSeconds * 0.2);
    const epoch = m.epoch;
    cloud.at(cloud.nowMs() + prepare * 1000, () => {
      if (m.epoch !== epoch || m.status !== 'preparing') return;
      const hold = cloud.timing.holdSeconds;
      beginRunning(cloud, m, hold > 0 ? hold : m.durationSeconds - prepare - cloud.timing.scheduleSeconds);
    });
  }
}

function beginRunning(cloud: SimCloud, m: SimMigration, seconds: number): void {
  setStatus(cloud, m, 'running');
  const now = cloud.nowMs();
  m.runStartedMs = now;
  const fails = cloud.failAllMigrations || cloud.failServers.has(m.server.uuid);
  // An injected failure shows up partway through the copy, as a libvirt error would.
  const runSeconds = Math.max(0.1, fails ? seconds / 3 : seconds);
  m.runEndsMs = now + runSeconds * 1000;
  const epoch = ++m.epoch;
  cloud.at(m.runEndsMs, () => {
    if (m.epoch !== epoch || m.status !== 'running') return;
    if (fails) finishRolledBack(cloud, m, 'failed');
    else finishCompleted(cloud, m);
  });
}

function finishCompleted(cloud: SimCloud, m: SimMigration): void {
  const s = m.server;
  cloud.relocate(s, m.dest as string);
  cloud.placement.setAllocations(m.uuid, new Map(), m.projectId, m.userId);
  setStatus(cloud, m, 'completed');
  clearTask(cloud, s);
  release(cloud, m);
}

function finishRolledBack(cloud: SimCloud, m: SimMigration, status: 'failed' | 'cancelled' | 'error'): void {
  const s = m.server;
  // Rollback: the instance's claim returns to the source, the migration record's goes away.
  cloud.placement.setAllocations(s.uuid, new Map(), s.projectId, s.userId);
  cloud.placement.moveAllocations(m.uuid, s.uuid);
  setStatus(cloud, m, status);
  clearTask(cloud, s);
  release(cloud, m);
}

function release(cloud: SimCloud, m: SimMigration): void {
  m.epoch++;
  const src = cloud.hostsByName.get(m.source);
  if (!src) return;
  src.running.delete(m);
  pump(cloud, src);
}

function requireServerMigration(
  cloud: SimCloud,
  serverUuid: string,
  migrationId: number,
  action: string,
): SimMigration {
  const s = cloud.requireServer(serverUuid);
  // Nova checks the instance's task state before it looks at the migration.
  if (s.taskState !== 'migrating') {
    throw new SimError(409, `Instance ${serverUuid} is in an invalid state for '${action}'`);
  }
  const m = cloud.migrationsById.get(migrationId);
  if (!m || m.server.uuid !== serverUuid) {
    throw new SimError(404, `Instance ${serverUuid} is not migrating or has no migration ${migrationId}`);
  }
  return m;
}

/** DELETE /servers/{id}/migrations/{mid}: running (or, from 2.65, queued) migrations can be aborted. */
export function abortMigration(
  cloud: SimCloud,
  serverUuid: string,
  migrationId: number,
  allowQueued: boolean,
): void {
  cloud.sync();
  const m = requireServerMigration(cloud, serverUuid, migrationId, 'abort live migration');
  const ok = m.status === 'running' || (allowQueued && m.status === 'queued');
  if (!ok) {
    throw new SimError(
      400,
      `Migration ${migrationId} state of instance ${serverUuid} is ${m.status}. Cannot abort live migration while the migration is in this state.`,
    );
  }
  if (m.status === 'queued') {
    const src = cloud.hostsByName.get(m.source);
    if (src) src.queue = src.queue.filter((q) => q !== m);
    finishRolledBack(cloud, m, 'cancelled');
    return;
  }
  const epoch = ++m.epoch;
  cloud.at(cloud.nowMs() + cloud.timing.abortSeconds * 1000, () => {
    if (m.epoch !== epoch || m.status !== 'running') return;
    finishRolledBack(cloud, m, 'cancelled');
  });
}

/** POST /servers/{id}/migrations/{mid}/action force_complete: only a running migration. */
export function forceCompleteMigration(cloud: SimCloud, serverUuid: string, migrationId: number): void {
  cloud.sync();
  const m = requireServerMigration(cloud, serverUuid, migrationId, 'force_complete');
  if (m.status !== 'running') {
    throw new SimError(
      400,
      `Migration ${migrationId} state of instance ${serverUuid} is ${m.status}. Cannot force complete while the migration is in this state.`,
    );
  }
  const end = cloud.nowMs() + cloud.timing.forceCompleteSeconds * 1000;
  if (m.runEndsMs !== null && m.runEndsMs <= end) return;
  m.runEndsMs = end;
  const epoch = ++m.epoch;
  cloud.at(end, () => {
    if (m.epoch !== epoch || m.status !== 'running') return;
    finishCompleted(cloud, m);
  });
}

/** Progress of a running migration, for GET /servers/{id}/migrations memory_* fields. */
export function memoryProgress(
  cloud: SimCloud,
  m: SimMigration,
): { total: number; processed: number; remaining: number } {
  const total = m.server.flavor.ram * 1024 * 1024;
  if (m.status !== 'running' || m.runStartedMs === null || m.runEndsMs === null) {
    return {
      total,
      processed: m.status === 'completed' ? total : 0,
      remaining: m.status === 'completed' ? 0 : total,
    };
  }
  const f = Math.min(
    1,
    Math.max(0, (cloud.nowMs() - m.runStartedMs) / Math.max(1, m.runEndsMs - m.runStartedMs)),
  );
  const processed = Math.round(total * f);
  return { total, processed, remaining: total - processed };
}
