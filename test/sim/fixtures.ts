// Small hand-made clouds for the simulator's tests: every number is visible here.
import type { Host, Server, Snapshot } from '../../src/model/snapshot.js';
import { SimClock } from '../../src/sim/clock.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud, type SimOptions } from '../../src/sim/model.js';

export const PROJECT = 'p0000000000000000000000000000001';

export function host(name: string, extra: Partial<Host> = {}): Host {
  return {
    name,
    availabilityZone: 'nova',
    aggregates: ['gold'],
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: 16, reserved: 0, allocationRatio: 4 },
      MEMORY_MB: { total: 65536, reserved: 512, allocationRatio: 1 },
      DISK_GB: { total: 1000, reserved: 0, allocationRatio: 1 },
    },
    usage: {},
    ...extra,
  };
}

export function server(n: number, hostName: string, ramMB = 8192, extra: Partial<Server> = {}): Server {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
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

export function snapshot(hosts: Host[], servers: Server[], extra: Partial<Snapshot> = {}): Snapshot {
  return {
    format: 'aicerine-snapshot/1',
    takenAt: '2026-11-29T14:00:00Z',
    source: 'test',
    hosts,
    servers,
    serverGroups: [],
    ...extra,
  };
}

/** A cloud on a frozen clock: only advance() moves time. */
export function frozenCloud(snap: Snapshot, options: SimOptions = {}): SimCloud {
  return new SimCloud(snap, {
    clock: new SimClock({ speed: 0, startMs: Date.parse('2026-11-29T14:00:00Z') }),
    load: staticLoadModel(),
    ...options,
  });
}

export function usage(cloud: SimCloud, hostName: string, rc = 'MEMORY_MB'): number {
  const h = cloud.hostsByName.get(hostName);
  if (!h) throw new Error(`no host ${hostName}`);
  return cloud.placement.usageOf(h.rp, rc);
}
