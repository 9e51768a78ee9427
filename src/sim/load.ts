// Server load over virtual time. Each server is mapped to one utilization series by a hash of
// its id, so the mapping is stable across runs; the series' shares are scaled to the flavor.
import { hash32 } from './ids.js';

/** One VM's utilization history (the shape src/traces/bitbrains.ts produces). */
export interface LoadSeries {
  cores: number;
  memCapacityMB: number;
  stepSeconds: number;
  cpuCores: Float32Array;
  memMB: Float32Array;
}

export interface LoadSubject {
  id: string;
  vcpus: number;
  ramMB: number;
  /** Load given by a snapshot; used by the "static" model. */
  fixed?: { cpu?: number | undefined; memoryMB?: number | undefined } | undefined;
}

export interface ServerLoad {
  cpu: number;
  memoryMB: number;
}

export interface LoadModel {
  readonly kind: 'trace' | 'generated' | 'static' | 'daily';
  /** Short human description for logs and docs (e.g. "bitbrains: 480 series"). */
  readonly description: string;
  serverLoad(subject: LoadSubject, tSeconds: number): ServerLoad;
}

// A hypervisor sees guest memory the guest has touched once, not what it uses now: a guest
// rarely gives memory back. We count a floor of the flavor plus the trace's share of the rest.
const MEMORY_FLOOR = 0.3;

export function traceLoadModel(series: readonly LoadSeries[]): LoadModel {
  const usable = series.filter((s) => s.cores >= 1 && s.memCapacityMB >= 256 && s.cpuCores.length >= 2);
  if (usable.length === 0)
    throw new RangeError('trace load model: no usable series (cores >= 1, >= 2 samples)');
  return {
    kind: 'trace',
    description: `trace: ${usable.length} series`,
    serverLoad(subject, t) {
      const h = hash32(subject.id);
      const s = usable[h % usable.length] as LoadSeries;
      const n = s.cpuCores.length;
      const pos = t / s.stepSeconds + ((h >>> 8) % n);
      const i0 = Math.floor(pos) % n;
      const i1 = (i0 + 1) % n;
      const f = pos - Math.floor(pos);
      const cpu = lerp(s.cpuCores[i0] ?? 0, s.cpuCores[i1] ?? 0, f);
      const mem = lerp(s.memMB[i0] ?? 0, s.memMB[i1] ?? 0, f);
      const cpuShare = clamp01(cpu / s.cores);
      const memShare = clamp01(mem / s.memCapacityMB);
      return {
        cpu: round3(cpuShare * subject.vcpus),
        memoryMB: Math.round(subject.ramMB * (MEMORY_FLOOR + (1 - MEMORY_FLOOR) * memShare)),
      };
    },
  };
}

/**
 * Load without a trace: a heavy-tailed per-server level with a working-week shape (weeklyFactor)
 * and hourly noise,
 * all derived from the server id and the hour, so it is reproducible.
 */
export function generatedLoadModel(): LoadModel {
  return {
    kind: 'generated',
    description: 'generated: daily cycle with heavy-tailed levels',
    serverLoad: generatedLoad,
  };
}

/** Loads as recorded in a snapshot; servers without one fall back to generated load. */
export function staticLoadModel(): LoadModel {
  return {
    kind: 'static',
    description: 'static: loads from the snapshot',
    serverLoad(subject, t) {
      const g = generatedLoad(subject, t);
      return {
        cpu: subject.fixed?.cpu ?? g.cpu,
        memoryMB: subject.fixed?.memoryMB ?? g.memoryMB,
      };
    },
  };
}

/** The hashes a server's generated load is drawn from, and its noise hash of the last hour asked. */
interface Draws {
  h: number;
  peakHour: number;
  hour: number;
  noiseHash: number;
}

// A host's figure sums the loads of its servers, so one Prometheus query of host figures asks
// for every server's load: hashing each server's id (and building the strings to hash) on every
// ask made the simulator spend seconds per query at 100,000 servers. The hashes are pure
// functions of the id (and the hour), so keeping them changes no figure.
const draws = new Map<string, Draws>();

function drawsOf(id: string): Draws {
  let d = draws.get(id);
  if (d === undefined) {
    // Bounded: a long demo boots and deletes servers; forgetting all is only a recomputation.
    if (draws.size >= 1_000_000) draws.clear();
    d = { h: hash32(id), peakHour: 8 + (hash32(`${id}:peak`) % 12), hour: Number.NaN, noiseHash: 0 };
    draws.set(id, d);
  }
  return d;
}

/**
 * A working week's shape of one server, 0.4..1 (UTC): a bump around the server's own peak hour
 * (08:00..19:00, from its id, so servers peak at different hours) on weekdays, flatter and lower
 * on Saturday and Sunday. Forecasts learn this shape from history (issue 28).
 */
export function weeklyFactor(id: string, t: number): number {
  const peakHour = drawsOf(id).peakHour;
  const hourOfDay = (((t / 3600) % 24) + 24) % 24;
  let d = Math.abs(hourOfDay - peakHour);
  d = Math.min(d, 24 - d);
  const bump = Math.exp(-(d * d) / (2 * 3 * 3));
  // 1970-01-01 was a Thursday: day 0 = Thursday, so Saturday and Sunday are days 2 and 3.
  const weekday = Math.floor(t / 86400) % 7;
  const weekend = weekday === 2 || weekday === 3;
  return weekend ? 0.4 + 0.2 * bump : 0.4 + 0.6 * bump;
}

/**
 * Another model's load with the weekly shape on top: CPU follows the working day, memory does not
 * (a guest keeps what it touched). With `anchorSeconds`, the base model's loads are those at that
 * instant (a snapshot's loads, measured when it was taken): the running demo starts from exactly
 * its snapshot, and current load moves with the simulated clock from there (never above the
 * flavor's vCPUs). Without it, the base loads are each server's weekday peak.
 */
export function dailyLoadModel(base: LoadModel, anchorSeconds?: number): LoadModel {
  return {
    kind: 'daily',
    description: `${base.description}, with a working-week shape`,
    serverLoad(subject, t) {
      const l = base.serverLoad(subject, t);
      const f = weeklyFactor(subject.id, t);
      const scale = anchorSeconds === undefined ? f : f / weeklyFactor(subject.id, anchorSeconds);
      return { cpu: round3(Math.min(subject.vcpus, l.cpu * scale)), memoryMB: l.memoryMB };
    },
  };
}

function generatedLoad(subject: LoadSubject, t: number): ServerLoad {
  const d = drawsOf(subject.id);
  const h = d.h;
  const u1 = (h & 0xffff) / 0x10000;
  const u2 = ((h >>> 16) & 0xffff) / 0x10000;
  const level = 0.03 + 0.6 * u1 ** 3;
  const day = weeklyFactor(subject.id, t);
  const hour = Math.floor(t / 3600);
  if (d.hour !== hour) {
    d.hour = hour;
    d.noiseHash = hash32(`${subject.id}:${hour}`);
  }
  const noise = (d.noiseHash / 0xffffffff - 0.5) * 0.2;
  const cpuShare = clamp01(level * 1.5 * day * (1 + noise));
  const memShare = clamp01(0.2 + 0.6 * u2 * u1 + 0.05 * day);
  return {
    cpu: round3(cpuShare * subject.vcpus),
    memoryMB: Math.round(subject.ramMB * (MEMORY_FLOOR + (1 - MEMORY_FLOOR) * memShare)),
  };
}

function lerp(a: number, b: number, f: number): number {
  return a + (b - a) * f;
}

function clamp01(x: number): number {
  return x < 0 || Number.isNaN(x) ? 0 : Math.min(x, 1);
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
