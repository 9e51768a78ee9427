// Servers appearing and going away while the simulator runs: a delete as Nova's API does it
// (the record stays, marked deleted, for `changes-since` readers) and a boot placed directly on
// a named host (the control endpoint's shortcut, not Nova's scheduler). Both keep Nova's list
// order (newest first) and every index in step.
import { stableUuid } from './ids.js';
import { abandonLiveMigration } from './migrations.js';
import {
  ADMIN_PROJECT,
  ADMIN_USER,
  type SimCloud,
  SimError,
  type SimFlavor,
  type SimServer,
} from './model.js';

export interface NewServer {
  name: string;
  host: string;
  /** A flavor of the cloud, or a size the simulator finds or makes a flavor for. */
  flavor:
    | SimFlavor
    | { name: string; vcpus: number; ramMB: number; diskGB: number; extraSpecs?: Record<string, string> };
  userId?: string;
  uuid?: string;
  projectId?: string;
  /** Boots from a volume (shared storage) when true, else from the image. */
  sharedStorage?: boolean;
  metadata?: Record<string, string>;
  /** A server group uuid the server joins at boot. */
  group?: string;
}

function shiftOrders(list: number[], from: number, by: number): void {
  for (let i = 0; i < list.length; i++) if ((list[i] as number) >= from) list[i] = (list[i] as number) + by;
}

/** Moves every host and project index entry at or after `from` by `by` (O(servers), fine for a few changes). */
function shiftIndexes(cloud: SimCloud, from: number, by: number): void {
  for (const h of cloud.hosts) shiftOrders(h.servers, from, by);
  for (const list of cloud.serversByProject.values()) shiftOrders(list, from, by);
}

/** Each server's order is its position in Nova's list again, from `from` on. */
function renumber(cloud: SimCloud, from: number): void {
  for (let i = from; i < cloud.servers.length; i++) (cloud.servers[i] as SimServer).order = i;
}

function flavorFor(cloud: SimCloud, f: NewServer['flavor']): SimFlavor {
  if ('intId' in f) return f;
  const specs = f.extraSpecs ?? {};
  const key = `${f.name}|${f.vcpus}|${f.ramMB}|${f.diskGB}|${JSON.stringify(Object.entries(specs).sort())}`;
  const existing = cloud.flavors.get(key);
  if (existing) return existing;
  let id = f.name;
  for (let i = 2; [...cloud.flavors.values()].some((x) => x.id === id); i++) id = `${f.name}-${i}`;
  const intId = Math.max(0, ...[...cloud.flavors.values()].map((x) => x.intId)) + 1;
  const flavor: SimFlavor = {
    id,
    intId,
    name: f.name,
    vcpus: f.vcpus,
    ram: f.ramMB,
    disk: f.diskGB,
    extraSpecs: { ...specs },
  };
  cloud.flavors.set(key, flavor);
  return flavor;
}

/**
 * DELETE /servers/{id}: the server's claims are released, it leaves its host, project and group,
 * its record stays as DELETED (Nova soft-deletes the row), listed only to `changes-since`, and
 * its Cinder volumes are detached.
 */
export function deleteServer(cloud: SimCloud, uuid: string): SimServer {
  cloud.sync();
  const s = cloud.requireServer(uuid);
  if (s.migration !== null) {
    if (s.migration.type !== 'live-migration') {
      // The simulator deletes servers mid-move only for live migrations.
      throw new SimError(409, `Cannot 'delete' instance ${uuid} while it is in task_state ${s.taskState}`);
    }
    // Nova deletes a server in any task state; its live migration stops with it.
    abandonLiveMigration(cloud, s.migration);
  }
  // Nova's instance_destroy soft-deletes every migration record of the server.
  for (const m of cloud.migrationsOfServer.get(uuid) ?? []) {
    m.deleted = true;
    m.updatedMs = cloud.nowMs();
  }
  const order = s.order;
  cloud.placement.setAllocations(s.uuid, new Map(), s.projectId, s.userId);
  const h = cloud.hostsByName.get(s.host);
  if (h) h.servers.splice(h.servers.indexOf(order), 1);
  const byProject = cloud.serversByProject.get(s.projectId);
  if (byProject) byProject.splice(byProject.indexOf(order), 1);
  cloud.servers.splice(order, 1);
  cloud.serversByUuid.delete(uuid);
  shiftIndexes(cloud, order + 1, -1);
  renumber(cloud, order);
  const g = cloud.groupOfServer.get(uuid);
  if (g) {
    g.members = g.members.filter((m) => m !== uuid);
    cloud.groupOfServer.delete(uuid);
  }
  s.status = 'DELETED';
  s.vmState = 'deleted';
  s.taskState = null;
  s.powerState = 0;
  s.updatedMs = cloud.nowMs();
  cloud.deletedServers.push(s);
  // Nova's compute detaches the volumes while tearing the server down (here after the server is
  // already gone, since the simulator deletes at once).
  cloud.cinder.serverDeleted(uuid);
  return s;
}

/** A new ACTIVE server on a named host, claimed in Placement; it is the newest in Nova's order. */
export function createServer(cloud: SimCloud, req: NewServer): SimServer {
  cloud.sync();
  const h = cloud.requireHost(req.host);
  const flavor = flavorFor(cloud, req.flavor);
  const need = { VCPU: flavor.vcpus, MEMORY_MB: flavor.ram, DISK_GB: flavor.disk };
  if (!cloud.placement.fits(h.rp, need)) {
    throw new SimError(409, `No valid host was found. Host ${req.host} has not enough resources.`);
  }
  const group = req.group === undefined ? undefined : cloud.groupsByUuid.get(req.group);
  if (req.group !== undefined && !group)
    throw new SimError(404, `Instance group ${req.group} could not be found.`);
  const seq = cloud.servers.length + cloud.deletedServers.length + 1;
  const uuid = req.uuid ?? stableUuid(cloud.seed, 'server', seq, req.name);
  if (cloud.serversByUuid.has(uuid)) throw new SimError(409, `Instance ${uuid} already exists.`);
  const now = cloud.nowMs();
  const projectId = req.projectId ?? group?.projectId ?? cloud.servers[0]?.projectId ?? ADMIN_PROJECT;
  const s: SimServer = {
    uuid,
    order: 0,
    name: req.name,
    projectId,
    userId: req.userId ?? ADMIN_USER,
    host: h.name,
    flavor,
    status: 'ACTIVE',
    taskState: null,
    vmState: 'active',
    powerState: 1,
    createdMs: now,
    updatedMs: now,
    metadata: { ...(req.metadata ?? {}) },
    sharedStorage: req.sharedStorage ?? true,
    sriov: false,
    dirtyRateMBps: undefined,
    fixedLoad: undefined,
    instanceName: `instance-${seq.toString(16).padStart(8, '0')}`,
    migration: null,
  };
  shiftIndexes(cloud, 0, 1);
  cloud.servers.unshift(s);
  renumber(cloud, 0);
  cloud.serversByUuid.set(uuid, s);
  h.servers.unshift(0);
  const byProject = cloud.serversByProject.get(projectId);
  if (byProject) byProject.unshift(0);
  else cloud.serversByProject.set(projectId, [0]);
  cloud.projects.add(projectId);
  cloud.placement.setAllocations(uuid, new Map([[h.nodeUuid, need]]), projectId, s.userId);
  if (group) {
    group.members.push(uuid);
    cloud.groupOfServer.set(uuid, group);
  }
  return s;
}
