// The simulated cloud's true state as a snapshot document: what a perfect `record` would see.
// Tests compare recorded snapshots against it.
import {
  type Host,
  type Server,
  type ServerGroup,
  SNAPSHOT_FORMAT,
  type Snapshot,
} from '../model/snapshot.js';
import type { SimCloud, SimServer } from './model.js';

export function exportSnapshot(cloud: SimCloud): Snapshot {
  cloud.sync();
  const t = cloud.clock.nowSeconds();
  const hosts: Host[] = cloud.hosts.map((h) => {
    const inventory: Host['inventory'] = {};
    const usage: Host['usage'] = {};
    for (const [rc, inv] of h.rp.inventories) {
      inventory[rc] = { total: inv.total, reserved: inv.reserved, allocationRatio: inv.allocation_ratio };
      usage[rc] = cloud.placement.usageOf(h.rp, rc);
    }
    const load = cloud.hostLoad(h, t);
    const host: Host = {
      name: h.name,
      availabilityZone: h.az,
      aggregates: [...h.aggregates],
      service: {
        state: cloud.serviceState(h),
        status: h.status,
        forcedDown: h.forcedDown,
        ...(h.disabledReason !== null ? { disabledReason: h.disabledReason } : {}),
      },
      inventory,
      usage,
      load: { cpu: load.cpu, memoryMB: load.memoryMB },
    };
    return host;
  });
  const servers: Server[] = cloud.servers.map((s: SimServer) => {
    const load = cloud.serverLoad(s, t);
    const out: Server = {
      id: s.uuid,
      name: s.name,
      projectId: s.projectId,
      host: s.host,
      status: s.status,
      taskState: s.taskState,
      flavor: {
        name: s.flavor.name,
        vcpus: s.flavor.vcpus,
        ramMB: s.flavor.ram,
        diskGB: s.flavor.disk,
        extraSpecs: { ...s.flavor.extraSpecs },
      },
      sharedStorage: s.sharedStorage,
      load: s.status === 'SHUTOFF' ? { cpu: 0, memoryMB: 0 } : { cpu: load.cpu, memoryMB: load.memoryMB },
    };
    if (s.sriov) out.sriov = true;
    if (s.dirtyRateMBps !== undefined) out.dirtyRateMBps = s.dirtyRateMBps;
    if (Object.keys(s.metadata).length > 0) out.metadata = { ...s.metadata };
    return out;
  });
  const serverGroups: ServerGroup[] = cloud.groups.map((g) => ({
    id: g.uuid,
    name: g.name,
    policy: g.policy as ServerGroup['policy'],
    ...(Object.keys(g.rules).length > 0 ? { rules: { ...g.rules } } : {}),
    members: [...g.members],
    projectId: g.projectId,
  }));
  const migrationHistory = cloud.migrations
    .filter((m) => m.status === 'completed' && m.dest !== null && !m.deleted)
    .map((m) => ({
      serverId: m.server.uuid,
      source: m.source,
      dest: m.dest as string,
      status: m.status,
      ramMB: m.server.flavor.ram,
      startedAt: new Date(m.createdMs).toISOString(),
      finishedAt: new Date(m.updatedMs ?? m.createdMs).toISOString(),
    }));
  return {
    format: SNAPSHOT_FORMAT,
    takenAt: new Date(cloud.nowMs()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    source: `simulator:${cloud.source}`,
    hosts,
    servers,
    serverGroups,
    ...(migrationHistory.length > 0 ? { migrationHistory } : {}),
  };
}
