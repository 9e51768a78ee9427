// Sizes synthetic hosts so that a given demand lands at a chosen Placement allocation level:
// 50 hosts for 5,000 servers get big machines, 5,000 hosts for 30,000 servers small ones.
import type { FlavorSpec, HostModel } from './synth-catalog.js';

export interface HostSize {
  cores: number;
  reservedCores: number;
  memMB: number;
  reservedMemMB: number;
  diskGB: number;
}

export interface Demand {
  vcpus: number;
  ramMB: number;
  diskGB: number;
}

/** Allocation is never planned above this fraction of Placement capacity (cluster-wide, per class). */
export const MAX_ALLOCATION = 0.8;

const MIN_CORES = 4;
const MIN_MEM_MB = 16384;
const MIN_DISK_GB = 200;

/**
 * The flavors a cluster of this density would offer: none so large that a typical host holds
 * fewer than two of them (a 32-vCPU flavor on 16-core hosts cannot be placed, let alone moved).
 */
export function flavorsForDensity(
  catalog: readonly FlavorSpec[],
  models: readonly HostModel[],
  serversPerHost: number,
  targetCpu: number,
  targetMem: number,
): FlavorSpec[] {
  let allowed = [...catalog];
  // The typical host, relative to the mean: mixes of large and small models spread around it.
  const meanCpuWeight = weightedMean(models, (m) => m.coreWeight * m.vcpuRatio);
  const typicalCpu = weightedMedian(models, (m) => (m.coreWeight * m.vcpuRatio) / meanCpuWeight);
  const typicalMem = weightedMedian(models, (m) => m.memShape);
  for (let round = 0; round < 8; round++) {
    const meanV = weightedMean(allowed, (f) => f.flavor.vcpus);
    const meanM = weightedMean(allowed, (f) => f.flavor.ramMB);
    const maxV = Math.max(2, (0.5 * typicalCpu * serversPerHost * meanV) / targetCpu);
    const maxM = Math.max(2 * MIN_MEM_MB, (0.5 * typicalMem * serversPerHost * meanM) / targetMem);
    const next = allowed.filter(
      (f) => f.flavor.vcpus <= 2 || (f.flavor.vcpus <= maxV && f.flavor.ramMB <= maxM),
    );
    if (next.length === allowed.length) break;
    allowed = next;
  }
  return allowed;
}

/**
 * One size per host, from its model, scaled so that demand / capacity is close to the targets
 * (fractions of Placement capacity) and never above MAX_ALLOCATION. Hosts are never smaller than
 * MIN_CORES / MIN_MEM_MB, so a sparse cluster ends up less allocated than the target.
 */
export function sizeHosts(
  models: readonly HostModel[],
  demand: Demand,
  target: { cpu: number; mem: number; disk: number },
): HostSize[] {
  const coresFor = (k: number): number[] => models.map((m) => ladderCores(k * m.coreWeight));
  const reservedCoresOf = (cores: number, m: HostModel): number => (cores >= 16 ? m.reservedCores : 0);
  const kCpu = solveScale(demand.vcpus, target.cpu, (k) =>
    coresFor(k).reduce((s, c, i) => {
      const m = models[i] as HostModel;
      return s + (c - reservedCoresOf(c, m)) * m.vcpuRatio;
    }, 0),
  );
  const cores = coresFor(kCpu);

  // Memory and disk follow each host's VCPU capacity, shaped by its model, so that no model is
  // full in one resource while idle in another.
  const capV = cores.map((c, i) => {
    const m = models[i] as HostModel;
    return (c - reservedCoresOf(c, m)) * m.vcpuRatio;
  });
  const memFor = (k: number, i: number): number => {
    const m = models[i] as HostModel;
    return ladderMem((k * (capV[i] as number) * m.memShape) / m.memRatio);
  };
  const reservedMemOf = (mem: number, m: HostModel): number =>
    Math.min(m.reservedMemMB, Math.floor(mem / 8 / 512) * 512);
  const kMem = solveScale(demand.ramMB, target.mem, (k) =>
    models.reduce((s, m, i) => {
      const mem = memFor(k, i);
      return s + (mem - reservedMemOf(mem, m)) * m.memRatio;
    }, 0),
  );
  const diskFor = (k: number, i: number): number =>
    ladderDisk(k * (capV[i] as number) * (models[i] as HostModel).diskShape);
  const kDisk = solveScale(demand.diskGB, target.disk, (k) =>
    models.reduce((s, _m, i) => s + diskFor(k, i), 0),
  );

  return models.map((m, i) => {
    const c = cores[i] as number;
    const mem = memFor(kMem, i);
    return {
      cores: c,
      reservedCores: reservedCoresOf(c, m),
      memMB: mem,
      reservedMemMB: reservedMemOf(mem, m),
      diskGB: diskFor(kDisk, i),
    };
  });
}

/** A scale k with demand / capacity(k) near the target and at most MAX_ALLOCATION. */
function solveScale(demand: number, target: number, capacity: (k: number) => number): number {
  if (demand <= 0) return 0;
  // Start from the slope at large scale, where the hardware floors no longer matter.
  let k = demand / target / Math.max(capacity(1e6) / 1e6, 1e-9);
  for (let i = 0; i < 12; i++) {
    const u = demand / capacity(k);
    if (Math.abs(u - target) < 0.01) break;
    k *= u / target;
  }
  // Hardware sizes come in steps; the last step may overshoot, so walk up until it fits.
  while (demand / capacity(k) > MAX_ALLOCATION) k *= 1.02;
  return k;
}

function ladderCores(x: number): number {
  if (x < MIN_CORES) return MIN_CORES;
  if (x < 32) return 2 * Math.round(x / 2);
  if (x < 128) return 4 * Math.round(x / 4);
  return 8 * Math.round(x / 8);
}

function ladderMem(mb: number): number {
  if (mb < MIN_MEM_MB) return MIN_MEM_MB;
  if (mb < 65536) return 4096 * Math.round(mb / 4096);
  if (mb < 524288) return 16384 * Math.round(mb / 16384);
  return 65536 * Math.round(mb / 65536);
}

function ladderDisk(gb: number): number {
  if (gb < MIN_DISK_GB) return MIN_DISK_GB;
  if (gb < 2000) return 10 * Math.round(gb / 10);
  return 100 * Math.round(gb / 100);
}

function weightedMean<T extends { weight: number }>(items: readonly T[], value: (t: T) => number): number {
  let sum = 0;
  let w = 0;
  for (const it of items) {
    sum += it.weight * value(it);
    w += it.weight;
  }
  return w > 0 ? sum / w : 0;
}

function weightedMedian<T extends { weight: number }>(items: readonly T[], value: (t: T) => number): number {
  const sorted = items.map((it) => ({ v: value(it), w: it.weight })).sort((a, b) => a.v - b.v);
  const total = sorted.reduce((s, x) => s + x.w, 0);
  let acc = 0;
  for (const x of sorted) {
    acc += x.w;
    if (acc >= total / 2) return x.v;
  }
  return sorted[sorted.length - 1]?.v ?? 1;
}
