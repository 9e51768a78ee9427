// A snapshot from Bitbrains VM series: the trace has real VM sizes and load but no hosts, so the
// VMs are placed on synthetic hosts, deterministically, and given the load of one chosen hour.
import type { Flavor, Host, Server, Snapshot } from '../model/snapshot.js';
import { SNAPSHOT_FORMAT } from '../model/snapshot.js';
import type { VmSeries } from '../traces/bitbrains.js';
import { createRng } from '../util/rng.js';

export interface BitbrainsImportOptions {
  /** Number of hosts; default: enough for about BITBRAINS_TARGET_ALLOCATION of Placement capacity. */
  hosts?: number;
  seed: number;
  /** Hours since the earliest series start; default 0. */
  at?: number;
}

/** One host model big enough for the largest Bitbrains VM (32 vCPU, 511 GiB). */
export const BITBRAINS_HOST = {
  cores: 48,
  vcpuRatio: 4,
  memMB: 786432,
  reservedMemMB: 8192,
  memRatio: 1,
} as const;

export const BITBRAINS_TARGET_ALLOCATION = 0.7;
/** The most hosts an import places VMs on (docs/snapshots.md): the full Rnd set needs about 60. */
export const BITBRAINS_MAX_HOSTS = 20_000;

/**
 * VMs become servers with a flavor of their provisioned size, placed first fit, largest first
 * (ties in seeded order), on hosts filled to the target allocation before any is filled further:
 * the first hosts end up full and the last ones light, which gives spread something to do.
 */
export function importBitbrains(series: readonly VmSeries[], opts: BitbrainsImportOptions): Snapshot {
  const at = opts.at ?? 0;
  if (!Number.isInteger(opts.seed) || opts.seed < 0 || opts.seed > 0xffffffff) {
    throw new RangeError(`bitbrains import: seed must be an integer 0..4294967295, got ${opts.seed}`);
  }
  if (
    opts.hosts !== undefined &&
    !(Number.isInteger(opts.hosts) && opts.hosts >= 1 && opts.hosts <= BITBRAINS_MAX_HOSTS)
  ) {
    throw new RangeError(
      `bitbrains import: hosts must be an integer 1..${BITBRAINS_MAX_HOSTS}, got ${opts.hosts}`,
    );
  }
  if (series.length === 0) throw new RangeError('bitbrains import: no VM series');
  const start = Math.min(...series.map((s) => s.startTs));
  const end = Math.max(...series.map((s) => s.startTs + s.stepSeconds * s.cpuCores.length));
  const hours = Math.ceil((end - start) / 3600);
  if (!Number.isInteger(at) || at < 0 || at >= hours) {
    throw new RangeError(`bitbrains import: --at must be an hour 0..${hours - 1} of the trace, got ${at}`);
  }

  const flavors = new Map<string, Flavor>();
  const flavorOf = series.map((s) => {
    const name = `bb-${s.cores}c-${s.memCapacityMB}m`;
    let f = flavors.get(name);
    if (f === undefined) {
      f = { name, vcpus: s.cores, ramMB: s.memCapacityMB, diskGB: 0, extraSpecs: {} };
      flavors.set(name, f);
    }
    return f;
  });

  const capV = BITBRAINS_HOST.cores * BITBRAINS_HOST.vcpuRatio;
  const capM = (BITBRAINS_HOST.memMB - BITBRAINS_HOST.reservedMemMB) * BITBRAINS_HOST.memRatio;
  const demandV = flavorOf.reduce((s, f) => s + f.vcpus, 0);
  const demandM = flavorOf.reduce((s, f) => s + f.ramMB, 0);
  const H =
    opts.hosts ??
    Math.max(1, Math.ceil(Math.max(demandV / capV, demandM / capM) / BITBRAINS_TARGET_ALLOCATION));
  if (!Number.isInteger(H) || H < 1)
    throw new RangeError(`bitbrains import: hosts must be a positive integer, got ${H}`);

  const rng = createRng(opts.seed);
  const tie = series.map(() => rng.next());
  const order = series
    .map((_, i) => i)
    .sort((a, b) => {
      const fa = flavorOf[a] as Flavor;
      const fb = flavorOf[b] as Flavor;
      return fb.vcpus - fa.vcpus || fb.ramMB - fa.ramMB || (tie[a] as number) - (tie[b] as number) || a - b;
    });
  const usedV = new Float64Array(H);
  const usedM = new Float64Array(H);
  const hostOf = new Int32Array(series.length);
  const fits = (h: number, f: Flavor, frac: number): boolean =>
    (usedV[h] as number) + f.vcpus <= capV * frac && (usedM[h] as number) + f.ramMB <= capM * frac;
  for (const i of order) {
    const f = flavorOf[i] as Flavor;
    let h = firstFit(H, (c) => fits(c, f, BITBRAINS_TARGET_ALLOCATION));
    if (h < 0) h = firstFit(H, (c) => fits(c, f, 1));
    if (h < 0) {
      throw new RangeError(
        `bitbrains import: ${H} hosts (${capV} vCPU, ${capM} MiB each) cannot hold these ${series.length} VMs ` +
          `(${demandV} vCPU, ${demandM} MiB); use more hosts`,
      );
    }
    usedV[h] = (usedV[h] as number) + f.vcpus;
    usedM[h] = (usedM[h] as number) + f.ramMB;
    hostOf[i] = h;
  }

  const names = Array.from(
    { length: H },
    (_, h) => `bb-host-${String(h + 1).padStart(Math.max(2, String(H).length), '0')}`,
  );
  const t = start + at * 3600;
  const loadCpu = new Float64Array(H);
  const loadMem = new Float64Array(H);
  const servers: Server[] = series.map((s, i) => {
    const h = hostOf[i] as number;
    // A VM that starts later, or ends earlier, than the chosen hour shows its nearest hour.
    const step = Math.min(s.cpuCores.length - 1, Math.max(0, Math.floor((t - s.startTs) / s.stepSeconds)));
    const cpu = round3(s.cpuCores[step] ?? 0);
    const mem = Math.round(s.memMB[step] ?? 0);
    loadCpu[h] = (loadCpu[h] as number) + cpu;
    loadMem[h] = (loadMem[h] as number) + mem;
    return {
      id: `bitbrains-${s.id}`,
      name: `vm-${s.id}`,
      projectId: 'bitbrains',
      host: names[h] as string,
      status: 'ACTIVE',
      taskState: null,
      flavor: flavorOf[i] as Flavor,
      sharedStorage: true,
      load: { cpu, memoryMB: mem },
    };
  });
  const hosts: Host[] = names.map((name, h) => ({
    name,
    availabilityZone: 'nova',
    aggregates: [],
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: BITBRAINS_HOST.cores, reserved: 0, allocationRatio: BITBRAINS_HOST.vcpuRatio },
      MEMORY_MB: {
        total: BITBRAINS_HOST.memMB,
        reserved: BITBRAINS_HOST.reservedMemMB,
        allocationRatio: BITBRAINS_HOST.memRatio,
      },
    },
    usage: { VCPU: usedV[h] as number, MEMORY_MB: usedM[h] as number },
    load: { cpu: round3(loadCpu[h] as number), memoryMB: loadMem[h] as number },
  }));

  return {
    format: SNAPSHOT_FORMAT,
    takenAt: new Date(t * 1000).toISOString().replace('.000Z', 'Z'),
    source: 'trace:bitbrains',
    hosts,
    servers,
    serverGroups: [],
  };
}

function firstFit(n: number, ok: (h: number) => boolean): number {
  for (let h = 0; h < n; h++) if (ok(h)) return h;
  return -1;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
