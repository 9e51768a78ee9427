// The small simulated clouds the service tests run on: 32-core hosts with room for many 4-vCPU
// servers, so a host's load (not its capacity) decides what the planner does.
import type { Host, Server } from '../../src/model/snapshot.js';

export function serviceHost(name: string, aggregate: string, extra: Partial<Host> = {}): Host {
  return {
    name,
    availabilityZone: 'nova',
    aggregates: [aggregate],
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: 32, reserved: 0, allocationRatio: 4 },
      MEMORY_MB: { total: 131072, reserved: 0, allocationRatio: 1 },
      DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
    },
    usage: {},
    ...extra,
  };
}

/** Servers numbered from 1 for one world: vm-1, vm-2, ... with ids that sort the same way. */
export function serverFactory(): (hostName: string, cpu: number) => Server {
  let n = 0;
  return (hostName, cpu) => {
    n++;
    return {
      id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      name: `vm-${n}`,
      projectId: 'e0000000000000000000000000000001',
      host: hostName,
      status: 'ACTIVE',
      taskState: null,
      flavor: { name: 'f4', vcpus: 4, ramMB: 8192, diskGB: 20 },
      sharedStorage: true,
      load: { cpu, memoryMB: 6000 },
    };
  };
}
