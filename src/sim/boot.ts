// A boot through Nova's scheduler, as Zed does it: Placement first (resources that fit, the
// flavor's `trait:X=required` traits, COMPUTE_STATUS_DISABLED forbidden on every request, and
// only the forced host's provider when one is forced), then the filters (ComputeFilter: enabled
// and up; the requested zone), which a forced host (`availability_zone: "zone:host"`) skips.
// A request no host passes leaves a server in ERROR with Nova's "No valid host was found."
// fault; a placed one is BUILD (spawning) for `bootSeconds`, then ACTIVE.
import { stableUuid } from './ids.js';
import {
  COMPUTE_STATUS_DISABLED,
  type SimCloud,
  type SimFlavor,
  type SimHost,
  type SimServer,
  setServiceStatus,
} from './model.js';
import { createServer } from './server-lifecycle.js';

export interface BootRequest {
  name: string;
  flavor: SimFlavor;
  projectId: string;
  userId: string;
  /** Requested zone ("nova"), or null. */
  zone: string | null;
  /** The forced host of `zone:host` (admin only; the API checks the policy). */
  forcedHost: string | null;
  metadata: Record<string, string>;
}

/** Seconds a placed boot stays in BUILD (the lab's fake driver takes a few). */
export const BOOT_SECONDS = 2;

export const NO_VALID_HOST = 'No valid host was found. ';

function requiredTraits(f: SimFlavor): string[] {
  return Object.entries(f.extraSpecs)
    .filter(([k, v]) => k.startsWith('trait:') && v === 'required')
    .map(([k]) => k.slice('trait:'.length));
}

/** Placement's allocation candidates for the request. */
function candidates(cloud: SimCloud, req: BootRequest): SimHost[] {
  const need = { VCPU: req.flavor.vcpus, MEMORY_MB: req.flavor.ram, DISK_GB: req.flavor.disk };
  const traits = requiredTraits(req.flavor);
  const pool = req.forcedHost === null ? cloud.hosts : cloud.hosts.filter((h) => h.name === req.forcedHost);
  return pool.filter(
    (h) =>
      !h.rp.traits.has(COMPUTE_STATUS_DISABLED) &&
      traits.every((t) => h.rp.traits.has(t)) &&
      cloud.placement.fits(h.rp, need),
  );
}

/** The filters a forced host skips. */
function passesFilters(cloud: SimCloud, h: SimHost, req: BootRequest): boolean {
  if (h.status !== 'enabled' || cloud.serviceState(h) !== 'up') return false;
  return req.zone === null || h.az === req.zone;
}

export function bootServer(cloud: SimCloud, req: BootRequest): SimServer {
  cloud.sync();
  for (const [name, boots] of cloud.providerRefreshBeforeBoots) {
    const h = cloud.hostsByName.get(name);
    if (h) setServiceStatus(h, h.status, h.disabledReason);
    if (boots > 1) cloud.providerRefreshBeforeBoots.set(name, boots - 1);
    else cloud.providerRefreshBeforeBoots.delete(name);
  }
  const passing = candidates(cloud, req).filter(
    (h) => req.forcedHost !== null || passesFilters(cloud, h, req),
  );
  const host = passing.sort((a, b) => a.servers.length - b.servers.length || a.index - b.index)[0];
  if (!host) return failedBoot(cloud, req);
  const s = createServer(cloud, {
    name: req.name,
    host: host.name,
    flavor: req.flavor,
    projectId: req.projectId,
    userId: req.userId,
    sharedStorage: false,
    metadata: req.metadata,
  });
  s.status = 'BUILD';
  s.vmState = 'building';
  s.taskState = 'spawning';
  s.powerState = 0;
  cloud.at(cloud.nowMs() + BOOT_SECONDS * 1000, () => {
    if (s.status !== 'BUILD') return;
    s.status = 'ACTIVE';
    s.vmState = 'active';
    s.taskState = null;
    s.powerState = 1;
    s.updatedMs = cloud.nowMs();
  });
  return s;
}

/** The server Nova keeps after the scheduler found no host: ERROR, no host, the fault. */
function failedBoot(cloud: SimCloud, req: BootRequest): SimServer {
  const now = cloud.nowMs();
  const seq = cloud.servers.length + cloud.deletedServers.length + 1;
  const s: SimServer = {
    uuid: stableUuid(cloud.seed, 'server', seq, req.name),
    order: 0,
    name: req.name,
    projectId: req.projectId,
    userId: req.userId,
    host: '',
    flavor: req.flavor,
    status: 'ERROR',
    taskState: null,
    vmState: 'error',
    powerState: 0,
    createdMs: now,
    updatedMs: now,
    metadata: { ...req.metadata },
    sharedStorage: false,
    sriov: false,
    dirtyRateMBps: undefined,
    fixedLoad: undefined,
    instanceName: `instance-${seq.toString(16).padStart(8, '0')}`,
    migration: null,
    fault: { code: 500, message: NO_VALID_HOST, createdMs: now },
  };
  // Newest first, like every other server; no host lists it.
  for (const h of cloud.hosts)
    for (let i = 0; i < h.servers.length; i++) h.servers[i] = (h.servers[i] as number) + 1;
  for (const list of cloud.serversByProject.values())
    for (let i = 0; i < list.length; i++) list[i] = (list[i] as number) + 1;
  cloud.servers.unshift(s);
  for (let i = 0; i < cloud.servers.length; i++) (cloud.servers[i] as SimServer).order = i;
  cloud.serversByUuid.set(s.uuid, s);
  const byProject = cloud.serversByProject.get(req.projectId);
  if (byProject) byProject.unshift(0);
  else cloud.serversByProject.set(req.projectId, [0]);
  cloud.projects.add(req.projectId);
  return s;
}
