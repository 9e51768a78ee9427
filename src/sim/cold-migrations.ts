// Cold migrations as Nova runs them (POST /servers/{id}/action {"migrate": ...}, a resize to the
// same flavor): the API asks the conductor synchronously, so a destination the scheduler refuses
// is a 400 with nothing changed; then the server goes RESIZE (resize_prep, resize_migrating with
// the guest powered off, resize_migrated, resize_finish) and waits in VERIFY_RESIZE on the
// destination, with the source allocation still held by the migration record, until
// confirmResize drops it (Nova's confirm window, resize_confirm_window, is off by default).
// The migration record goes pre-migrating, migrating, post-migrating, finished, confirming,
// confirmed; os-migrations shows it with migration_type "migration".
import { estimateMigrationSeconds } from '../planner/cost-model.js';
import { stableUuid } from './ids.js';
import { addGhost, destinationProblem, NO_VALID_HOST } from './migrations.js';
import {
  ADMIN_USER,
  addMigration,
  type SimCloud,
  SimError,
  type SimMigration,
  type SimServer,
} from './model.js';

export interface ColdMigrateRequest {
  serverUuid: string;
  /** Destination host (microversion 2.56 and later); null: the scheduler picks. */
  host: string | null;
  userId?: string;
}

/** Seconds each short step (prep, finish, confirm) takes; the copy takes the cost model's time. */
const STEP_SECONDS = 1;

function step(
  cloud: SimCloud,
  m: SimMigration,
  status: SimMigration['status'],
  taskState: string | null,
): void {
  m.status = status;
  m.updatedMs = cloud.nowMs();
  m.server.taskState = taskState;
  m.server.updatedMs = m.updatedMs;
}

/** POST /servers/{id}/action migrate. Refusals throw SimError and change nothing. */
export function startColdMigration(cloud: SimCloud, req: ColdMigrateRequest): SimMigration {
  cloud.sync();
  const s = cloud.requireServer(req.serverUuid);
  if (s.taskState !== null)
    throw new SimError(409, `Cannot 'migrate' instance ${s.uuid} while it is in task_state ${s.taskState}`);
  if (s.vmState !== 'active' && s.vmState !== 'stopped')
    throw new SimError(409, `Cannot 'migrate' instance ${s.uuid} while it is in vm_state ${s.vmState}`);
  if (req.host !== null && !cloud.hostsByName.has(req.host))
    throw new SimError(400, `Compute host ${req.host} could not be found.`);
  const source = cloud.requireHost(s.host);
  if (cloud.serviceState(source) === 'down')
    throw new SimError(409, `Compute service of ${source.name} is unavailable at this time.`);
  const dest =
    req.host !== null
      ? cloud.requireHost(req.host)
      : cloud.hosts
          .filter((h) => h.name !== s.host && h.az === source.az && destinationProblem(cloud, s, h) === null)
          .sort(
            (a, b) =>
              cloud.placement.capacity(b.rp, 'MEMORY_MB') -
              cloud.placement.usageOf(b.rp, 'MEMORY_MB') -
              (cloud.placement.capacity(a.rp, 'MEMORY_MB') - cloud.placement.usageOf(a.rp, 'MEMORY_MB')),
          )[0];
  // The API call waits for the scheduler: a refusal is the API's answer.
  if (dest === undefined) throw new SimError(400, NO_VALID_HOST);
  const refusal = destinationProblem(cloud, s, dest);
  if (refusal !== null) throw new SimError(400, refusal.message);

  const now = cloud.nowMs();
  const id = (cloud.migrations.at(-1)?.id ?? 0) + 1;
  const m: SimMigration = {
    type: 'migration',
    coldFrom: s.vmState === 'stopped' ? 'stopped' : 'active',
    id,
    uuid: stableUuid(cloud.seed, 'migration', id),
    server: s,
    source: s.host,
    dest: dest.name,
    requestedHost: req.host,
    status: 'pre-migrating',
    createdMs: now,
    updatedMs: now,
    projectId: s.projectId,
    userId: req.userId ?? ADMIN_USER,
    flavorIntId: s.flavor.intId,
    durationSeconds: estimateMigrationSeconds({ ramMB: s.flavor.ram, dirtyRateMBps: 0 }, cloud.costModel),
    runStartedMs: null,
    runEndsMs: null,
    epoch: 0,
  };
  addMigration(cloud, m);
  // As for a live migration: the source claim moves to the migration record, the instance claims
  // the destination, and both hosts hold the resources until the confirm.
  cloud.placement.moveAllocations(s.uuid, m.uuid);
  cloud.placement.setAllocations(
    s.uuid,
    new Map([[dest.nodeUuid, cloud.resourcesOf(s)]]),
    s.projectId,
    s.userId,
  );
  s.status = 'RESIZE';
  s.migration = m;
  step(cloud, m, 'pre-migrating', 'resize_prep');
  const epoch = m.epoch;
  const live = () => m.epoch === epoch;
  let t = now + STEP_SECONDS * 1000;
  cloud.at(t, () => {
    if (!live()) return;
    step(cloud, m, 'migrating', 'resize_migrating');
    s.powerState = 4;
  });
  t += Math.max(STEP_SECONDS, m.durationSeconds) * 1000;
  cloud.at(t, () => {
    if (!live()) return;
    step(cloud, m, 'post-migrating', 'resize_migrated');
    cloud.relocate(s, dest.name);
    addGhost(cloud, m.source, s.uuid);
  });
  t += STEP_SECONDS * 1000;
  cloud.at(t, () => {
    if (!live()) return;
    step(cloud, m, 'post-migrating', 'resize_finish');
  });
  t += STEP_SECONDS * 1000;
  cloud.at(t, () => {
    if (!live()) return;
    step(cloud, m, 'finished', null);
    s.vmState = 'resized';
    s.status = 'VERIFY_RESIZE';
    s.powerState = m.coldFrom === 'stopped' ? 4 : 1;
  });
  return m;
}

function resizeMigration(s: SimServer, action: string): SimMigration {
  if (s.vmState !== 'resized' || s.migration === null || s.migration.type !== 'migration')
    throw new SimError(409, `Cannot '${action}' instance ${s.uuid} while it is in vm_state ${s.vmState}`);
  return s.migration;
}

/** POST /servers/{id}/action confirmResize: drops the source claim; the server is back to ACTIVE/SHUTOFF. */
export function confirmResize(cloud: SimCloud, serverUuid: string): void {
  cloud.sync();
  const s = cloud.requireServer(serverUuid);
  const m = resizeMigration(s, 'confirmResize');
  m.status = 'confirming';
  m.updatedMs = cloud.nowMs();
  const epoch = ++m.epoch;
  cloud.at(cloud.nowMs() + STEP_SECONDS * 1000, () => {
    if (m.epoch !== epoch) return;
    cloud.placement.setAllocations(m.uuid, new Map(), m.projectId, m.userId);
    m.status = 'confirmed';
    m.updatedMs = cloud.nowMs();
    s.vmState = m.coldFrom === 'stopped' ? 'stopped' : 'active';
    s.status = m.coldFrom === 'stopped' ? 'SHUTOFF' : 'ACTIVE';
    s.migration = null;
    s.updatedMs = m.updatedMs;
  });
}
