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
  /**
   * The API waits for the conductor's destination check and answers its refusal with a 400, as
   * Nova does below microversion 2.34 (from 2.34 it checks in the background: 202, then `error`).
   */
  synchronousChecks?: boolean;
}

/** The first compute microversion at which os-migrateLive runs its destination checks asynchronously. */
export const ASYNC_LIVE_MIGRATE_CHECKS = { major: 2, minor: 34 } as const;

/**
 * What Nova's API says for a destination a scheduler filter refuses (same host, down service,
 * affinity); the filter's own reason goes to the scheduler's log only.
 */
export const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';
/**
 * What it says when Placement has no candidate at all: a disabled host (its provider carries
 * COMPUTE_STATUS_DISABLED) or one without room. The empty reason leaves the trailing space.
 */
export const NO_VALID_HOST_PLACEMENT = 'No valid host was found. ';

interface Refusal {
  /** For /sim/migrations: why, in words. */
  reason: string;
  /** What Nova's API answers (400 below 2.34). */
  message: string;
}

const FINAL: ReadonlySet<MigrationStatus> = new Set(['completed', 'failed', 'cancelled', 'error']);

/** Whether the record is final (Nova changes it no more). */
export function isFinalMigration(m: Pick<SimMigration, 'status'>): boolean {
  return FINAL.has(m.status);
}

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
    type: 'live-migration',
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
  if (req.synchronousChecks) {
    // The API call blocks on the conductor: the record is saved checked (or refused) at once.
    const refusal = schedule(cloud, m);
    if (refusal !== null) throw new SimError(400, refusal);
    return m;
  }
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

/**
 * Conductor: pick or check the destination, then claim on it (scheduler + Placement).
 * Returns the error Nova's API would show for a refusal (null: accepted).
 */
function schedule(cloud: SimCloud, m: SimMigration): string | null {
  const s = m.server;
  const need = cloud.resourcesOf(s);
  const reject = (r: Refusal): string => {
    setStatus(cloud, m, 'error');
    clearTask(cloud, s);
    cloud.lastErrors.set(m.id, r.reason);
    return r.message;
  };
  let dest: SimHost | undefined;
  if (m.requestedHost !== null) {
    dest = cloud.hostsByName.get(m.requestedHost);
    const gone = `Compute host ${m.requestedHost} could not be found.`;
    const why = dest ? destinationProblem(cloud, s, dest) : { reason: gone, message: gone };
    if (why) return reject(why);
  } else {
    dest = pickDestination(cloud, s);
    if (!dest) return reject({ reason: 'no host in the zone passes the checks', message: NO_VALID_HOST });
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
  return null;
}

export function destinationProblem(cloud: SimCloud, s: SimServer, dest: SimHost): Refusal | null {
  const filter = (reason: string): Refusal => ({ reason, message: NO_VALID_HOST });
  const placement = (reason: string): Refusal => ({ reason, message: NO_VALID_HOST_PLACEMENT });
  if (dest.status === 'disabled') {
    return placement(`Compute service of ${dest.name} is disabled (COMPUTE_STATUS_DISABLED).`);
  }
  if (!cloud.placement.fits(dest.rp, cloud.resourcesOf(s))) {
    return placement(`Unable to migrate instance (${s.uuid}) to host (${dest.name}): not enough resources.`);
  }
  if (dest.name === s.host) {
    return filter(`Unable to migrate instance (${s.uuid}) to current host (${s.host}).`);
  }
  if (cloud.serviceState(dest) === 'down') {
    return filter(`ComputeFilter: compute service of ${dest.name} is down.`);
  }
  const g = cloud.groupOfServer.get(s.uuid);
  // The anti-affinity filter counts the scheduler's view of the host's instances, stale entries
  // included; a server it already sees there passes (Nova's move-operation exception).
  const seen = schedulerView(cloud, dest.name);
  if (g && g.policy === 'anti-affinity' && !seen.has(s.uuid)) {
    const max = g.rules.max_server_per_host ?? 1;
    let onDest = 0;
    let ghosts = 0;
    for (const member of g.members) {
      if (member === s.uuid) continue;
      if (cloud.serversByUuid.get(member)?.host === dest.name) onDest++;
      else if (seen.has(member)) ghosts++;
    }
    if (onDest + ghosts >= max) {
      return filter(
        ghosts > 0
          ? `ServerGroupAntiAffinityFilter rejected the host: the scheduler still counts ${ghosts} moved group member(s) there until the host's instance sync.`
          : 'ServerGroupAntiAffinityFilter rejected the host.',
      );
    }
  }
  if (g && g.policy === 'affinity') {
    const others = g.members.filter((u) => u !== s.uuid).map((u) => cloud.serversByUuid.get(u)?.host);
    if (others.length > 0 && !others.includes(dest.name)) {
      return filter('ServerGroupAffinityFilter rejected the host.');
    }
  }
  return null;
}

/** Servers the scheduler still believes are on a host although they left it (expired ones dropped). */
function schedulerView(cloud: SimCloud, host: string): ReadonlySet<string> {
  const ghosts = cloud.schedulerGhosts.get(host);
  if (!ghosts) return new Set();
  const now = cloud.nowMs();
  for (const [uuid, until] of ghosts) if (until <= now) ghosts.delete(uuid);
  if (ghosts.size === 0) cloud.schedulerGhosts.delete(host);
  return new Set(ghosts.keys());
}

export function addGhost(cloud: SimCloud, host: string | null, serverUuid: string): void {
  const seconds = cloud.timing.schedulerSyncSeconds;
  if (host === null || seconds <= 0) return;
  const ghosts = cloud.schedulerGhosts.get(host) ?? new Map<string, number>();
  ghosts.set(serverUuid, cloud.nowMs() + seconds * 1000);
  cloud.schedulerGhosts.set(host, ghosts);
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
  // An injected failure shows up when the copy would have ended, as the lab's fake driver fails
  // a held migration only after its hold.
  m.runEndsMs = now + Math.max(0.1, seconds) * 1000;
  const epoch = ++m.epoch;
  cloud.at(m.runEndsMs, () => {
    if (m.epoch !== epoch || m.status !== 'running') return;
    if (cloud.failAllMigrations || cloud.failServers.has(m.server.uuid)) finishRolledBack(cloud, m, 'failed');
    else finishCompleted(cloud, m);
  });
}

/**
 * The guest runs on the destination: Nova's post_live_migration_at_destination moves the
 * instance and clears its task state, then the source compute refreshes its resources and only
 * after that saves the migration as completed and drops its source claim. For that while the
 * server looks done and its migration still says running.
 */
function finishCompleted(cloud: SimCloud, m: SimMigration): void {
  const s = m.server;
  cloud.relocate(s, m.dest as string);
  clearTask(cloud, s);
  addGhost(cloud, m.source, s.uuid);
  const epoch = ++m.epoch;
  cloud.at(cloud.nowMs() + cloud.timing.completionLagSeconds * 1000, () => {
    if (m.epoch !== epoch) return;
    setStatus(cloud, m, 'completed');
    cloud.placement.setAllocations(m.uuid, new Map(), m.projectId, m.userId);
    release(cloud, m);
  });
}

function finishRolledBack(cloud: SimCloud, m: SimMigration, status: 'failed' | 'cancelled' | 'error'): void {
  const s = m.server;
  // Rollback: one move puts the migration record's source claim back on the instance,
  // replacing (and so dropping) its destination claim.
  cloud.placement.moveAllocations(m.uuid, s.uuid);
  // Measured on the lab: a failed move leaves the scheduler counting the server on the
  // destination; after an abort (two runs) a sibling could go there at once.
  if (status === 'failed') addGhost(cloud, m.dest, s.uuid);
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
    throw new SimError(404, `Migration ${migrationId} not found for instance ${serverUuid}`);
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
  const queued = m.status === 'queued';
  if (queued) {
    // The source compute drops it from its waiting list at once; the record and the claims
    // catch up later (about 2 s on the lab).
    const src = cloud.hostsByName.get(m.source);
    if (src) src.queue = src.queue.filter((q) => q !== m);
  }
  const epoch = ++m.epoch;
  const seconds = queued ? cloud.timing.queuedAbortSeconds : cloud.timing.abortSeconds;
  cloud.at(cloud.nowMs() + seconds * 1000, () => {
    if (m.epoch !== epoch || m.status !== (queued ? 'queued' : 'running')) return;
    finishRolledBack(cloud, m, 'cancelled');
  });
}

/**
 * The server of a live migration in flight is deleted (Nova allows it in any task state): the
 * migration stops where it is, the source compute's slot and the migration's claims are freed.
 * The record is left for the caller to soft-delete with the server's other records.
 */
export function abandonLiveMigration(cloud: SimCloud, m: SimMigration): void {
  m.epoch++;
  const src = cloud.hostsByName.get(m.source);
  if (src) src.queue = src.queue.filter((q) => q !== m);
  cloud.placement.setAllocations(m.uuid, new Map(), m.projectId, m.userId);
  m.server.migration = null;
  release(cloud, m);
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
