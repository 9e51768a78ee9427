// Synthetic clusters for tests, benchmarks, the simulator and the README example. Same options,
// same snapshot, byte for byte: every choice comes from one seeded generator.
import type { Flavor, Host, Server, ServerGroup, Snapshot } from '../model/snapshot.js';
import { SNAPSHOT_FORMAT } from '../model/snapshot.js';
import { createRng, type Rng } from '../util/rng.js';
import {
  FLAVOR_CATALOG,
  type FlavorSpec,
  HOST_MODELS,
  PINNING_EXTRA_SPECS,
  TASK_STATES,
} from './synth-catalog.js';
import { findHost, type GroupPlan, HostFill, placeGroup, placeRest } from './synth-placement.js';
import { flavorsForDensity, type HostSize, sizeHosts } from './synth-sizing.js';

export interface SynthOptions {
  hosts: number;
  servers: number;
  groups: number;
  seed: number;
  /** Number of host aggregates ("agg-1", ...); 0 or absent: no aggregates. */
  aggregates?: number;
  /** Hosts with nova-compute disabled for maintenance (up, to be drained). */
  disabled?: number;
}

const GROUP_POLICIES = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'] as const;
const GROUP_SIZES = [2, 3, 4, 5, 6, 7, 8];
const GROUP_SIZE_WEIGHTS = [0.3, 0.25, 0.15, 0.1, 0.08, 0.07, 0.05];
const GROUP_APPS = ['web', 'api', 'db', 'cache', 'mq', 'etl', 'search', 'auth'];

/** Shares of servers that cannot be moved, each for one reason (formats.md, guarantee 5). */
const SHARES = {
  pinned: 0.04,
  localDisk: 0.03,
  sriov: 0.02,
  excluded: 0.01,
  shutoff: 0.015,
  taskState: 0.005,
};
const HOT_HOST_SHARE = 0.08;

export function synthesizeSnapshot(opts: SynthOptions): Snapshot {
  validate(opts);
  const H = opts.hosts;
  const S = opts.servers;
  const K = opts.aggregates ?? 0;
  const D = opts.disabled ?? 0;
  const rng = createRng(opts.seed);

  const target = { cpu: 0.6 + 0.15 * rng.next(), mem: 0.58 + 0.15 * rng.next(), disk: 0.45 };
  const models = Array.from({ length: H }, () =>
    rng.weighted(
      HOST_MODELS,
      HOST_MODELS.map((m) => m.weight),
    ),
  );
  const offered = flavorsForDensity(FLAVOR_CATALOG, HOST_MODELS, S / H, target.cpu, target.mem);
  const pickFlavor = weightedPicker(offered);
  const flavors: Flavor[] = Array.from({ length: S }, () => pickFlavor(rng));

  const demand = { vcpus: 0, ramMB: 0, diskGB: 0 };
  for (const f of flavors) {
    demand.vcpus += f.vcpus;
    demand.ramMB += f.ramMB;
    demand.diskGB += f.diskGB;
  }
  const sizes = sizeHosts(models, demand, target);

  const layout = hostLayout(H, K, D, opts.seed);
  const fill = newFill(sizes, models, target, rng);
  const hostOf = new Int32Array(S).fill(-1);

  const order = shuffled(S, rng);
  const groups = planGroups(opts.groups, order, layout, rng);
  for (const g of groups) placeGroup(g.plan, flavors, fill, hostOf, rng);

  const traits = assignTraits(S, groups, flavors, rng);
  placeRest(flavors, fill, hostOf, rng);

  const projects = Array.from({ length: Math.min(500, Math.max(2, Math.ceil(S / 40))) }, () => hexId(rng));
  const pickProject = zipfPicker(projects.length);
  const serverIds = Array.from({ length: S }, () => uuid(rng));
  const serverNames = Array.from({ length: S }, (_, i) => `vm-${pad(i + 1, S)}`);
  const serverProject = Array.from({ length: S }, () => projects[pickProject(rng)] as string);
  const serverGroups: ServerGroup[] = groups.map((g) => {
    const project = projects[pickProject(rng)] as string;
    g.plan.members.forEach((m, k) => {
      serverNames[m] = `${g.name}-${k + 1}`;
      serverProject[m] = project;
    });
    return {
      id: uuid(rng),
      name: g.name,
      policy: g.plan.policy,
      ...(g.plan.maxPerHost === undefined ? {} : { rules: { max_server_per_host: g.plan.maxPerHost } }),
      members: g.plan.members.map((m) => serverIds[m] as string),
      projectId: project,
    };
  });

  const loads = synthLoads(sizes, flavors, hostOf, traits.status, layout.disabled, rng);
  const hostNames = Array.from({ length: H }, (_, i) => `compute-${pad(i + 1, H)}`);

  const hosts: Host[] = sizes.map((size, h) => {
    const model = models[h] as (typeof HOST_MODELS)[number];
    const agg = layout.aggregateOf[h] as number;
    return {
      name: hostNames[h] as string,
      availabilityZone: layout.azOf(agg),
      aggregates: K > 0 ? [`agg-${agg + 1}`] : [],
      service: layout.disabled.has(h)
        ? { state: 'up', status: 'disabled', forcedDown: false, disabledReason: 'maintenance' }
        : { state: 'up', status: 'enabled', forcedDown: false },
      inventory: {
        VCPU: { total: size.cores, reserved: size.reservedCores, allocationRatio: model.vcpuRatio },
        MEMORY_MB: { total: size.memMB, reserved: size.reservedMemMB, allocationRatio: model.memRatio },
        DISK_GB: { total: size.diskGB, reserved: 0, allocationRatio: 1 },
      },
      usage: {
        VCPU: fill.usedV[h] as number,
        MEMORY_MB: fill.usedM[h] as number,
        DISK_GB: fill.usedD[h] as number,
      },
      load: { cpu: loads.hostCpu[h] as number, memoryMB: loads.hostMem[h] as number },
    };
  });

  const servers: Server[] = flavors.map((flavor, i) => {
    const status = traits.status[i] as string;
    const server: Server = {
      id: serverIds[i] as string,
      name: serverNames[i] as string,
      projectId: serverProject[i] as string,
      host: hostNames[hostOf[i] as number] as string,
      status,
      taskState: traits.taskState[i] ?? null,
      flavor,
      sharedStorage: !traits.localDisk.has(i),
      sriov: traits.sriov.has(i),
    };
    if (traits.excluded.has(i)) server.metadata = { 'aicerine:exclude': 'true' };
    server.load = { cpu: loads.serverCpu[i] as number, memoryMB: loads.serverMem[i] as number };
    return server;
  });

  return {
    format: SNAPSHOT_FORMAT,
    takenAt: takenAtFor(opts.seed),
    source: `synthetic:${opts.seed}`,
    hosts,
    servers,
    serverGroups,
  };
}

/**
 * The largest cluster synth makes (docs/snapshots.md, "Limits"): beyond it the JSON text nears what
 * one V8 string holds (about 500 bytes a server) and a request is more likely a typo than a wish.
 */
export const SYNTH_LIMITS = { hosts: 20_000, servers: 250_000 } as const;

/** A synth option out of its range; `option` is the option's name (hosts, disabled...). */
export class SynthOptionError extends RangeError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`synthetic snapshot: ${message}`);
    this.name = 'SynthOptionError';
  }
}

function validate(o: SynthOptions): void {
  const need = (option: string, ok: boolean, msg: string): void => {
    if (!ok) throw new SynthOptionError(option, msg);
  };
  const K = o.aggregates ?? 0;
  const D = o.disabled ?? 0;
  need(
    'hosts',
    Number.isInteger(o.hosts) && o.hosts >= 1 && o.hosts <= SYNTH_LIMITS.hosts,
    `hosts must be an integer 1..${SYNTH_LIMITS.hosts}, got ${o.hosts}`,
  );
  need(
    'servers',
    Number.isInteger(o.servers) && o.servers >= 0 && o.servers <= SYNTH_LIMITS.servers,
    `servers must be an integer 0..${SYNTH_LIMITS.servers}, got ${o.servers}`,
  );
  need(
    'groups',
    Number.isInteger(o.groups) && o.groups >= 0,
    `groups must be a non-negative integer, got ${o.groups}`,
  );
  need(
    'seed',
    Number.isInteger(o.seed) && o.seed >= 0 && o.seed <= 0xffffffff,
    `seed must be an integer 0..4294967295, got ${o.seed}`,
  );
  need(
    'aggregates',
    Number.isInteger(K) && K >= 0 && K <= o.hosts,
    `aggregates must be an integer 0..hosts (${o.hosts}), got ${K}`,
  );
  need(
    'disabled',
    Number.isInteger(D) && D >= 0 && D < o.hosts,
    `disabled must be an integer 0..hosts-1 (${o.hosts - 1}), got ${D}`,
  );
  need(
    'groups',
    o.groups * 2 <= o.servers,
    `${o.groups} groups of at least 2 servers need at least ${o.groups * 2} servers`,
  );
}

interface Layout {
  /** Aggregate index per host (0 when there are no aggregates). */
  aggregateOf: Int32Array;
  /** Enabled hosts per aggregate index. */
  enabledIn: number[][];
  disabled: Set<number>;
  azOf(agg: number): string;
}

/** Hosts in contiguous blocks per aggregate; one AZ per aggregate; disabled hosts spread evenly. */
function hostLayout(H: number, K: number, D: number, seed: number): Layout {
  const aggCount = Math.max(1, K);
  const aggregateOf = new Int32Array(H);
  for (let h = 0; h < H; h++) aggregateOf[h] = Math.floor((h * aggCount) / H);
  const disabled = new Set<number>();
  for (let k = 0; k < D; k++) disabled.add((Math.floor(((k + 0.5) * H) / D) + seed) % H);
  const enabledIn: number[][] = Array.from({ length: aggCount }, () => []);
  for (let h = 0; h < H; h++) if (!disabled.has(h)) enabledIn[aggregateOf[h] as number]?.push(h);
  const azCount = K <= 2 ? 1 : Math.min(3, Math.ceil(K / 2));
  return {
    aggregateOf,
    enabledIn,
    disabled,
    azOf: (agg) => (azCount === 1 ? 'nova' : `az-${(agg % azCount) + 1}`),
  };
}

function newFill(
  sizes: readonly HostSize[],
  models: readonly (typeof HOST_MODELS)[number][],
  target: { cpu: number; mem: number },
  rng: Rng,
): HostFill {
  const H = sizes.length;
  const capV = new Float64Array(H);
  const capM = new Float64Array(H);
  const capD = new Float64Array(H);
  const softV = new Float64Array(H);
  const softM = new Float64Array(H);
  sizes.forEach((s, h) => {
    const m = models[h] as (typeof HOST_MODELS)[number];
    capV[h] = (s.cores - s.reservedCores) * m.vcpuRatio;
    capM[h] = (s.memMB - s.reservedMemMB) * m.memRatio;
    capD[h] = s.diskGB;
    // Aim a little above the cluster target on average so random placement rarely needs the fallback.
    const offset = -0.12 + 0.32 * rng.next();
    softV[h] = (capV[h] as number) * clamp(target.cpu + offset, 0.3, 0.95);
    softM[h] = (capM[h] as number) * clamp(target.mem + offset, 0.3, 0.95);
  });
  return new HostFill(capV, capM, capD, softV, softM);
}

interface NamedGroup {
  name: string;
  plan: GroupPlan;
}

/** Groups take members from the front of a shuffled order, so no server is in two groups. */
function planGroups(G: number, order: Int32Array, layout: Layout, rng: Rng): NamedGroup[] {
  const S = order.length;
  const aggs = layout.enabledIn.map((_, i) => i).filter((i) => (layout.enabledIn[i] as number[]).length > 0);
  const aggWeights = aggs.map((i) => (layout.enabledIn[i] as number[]).length);
  const out: NamedGroup[] = [];
  let cursor = 0;
  for (let gi = 0; gi < G; gi++) {
    const policy = GROUP_POLICIES[gi % 4] as GroupPlan['policy'];
    const cycle = Math.floor(gi / 4);
    const maxPerHost = policy === 'anti-affinity' ? (cycle % 2 === 0 ? 1 : 2) : undefined;
    const hard = policy === 'affinity' || policy === 'anti-affinity';
    const hosts = layout.enabledIn[rng.weighted(aggs, aggWeights)] as number[];
    // A split affinity group needs a clear majority; a stacked anti-affinity group one member too many.
    const minViolated = policy === 'affinity' ? 3 : (maxPerHost ?? 1) + 1;
    const planViolated = hard && cycle % 3 === 0;
    let size = rng.weighted(GROUP_SIZES, GROUP_SIZE_WEIGHTS);
    if (planViolated) size = Math.max(size, minViolated);
    if (policy === 'anti-affinity') size = Math.min(size, Math.max(2, hosts.length * (maxPerHost ?? 1)));
    size = Math.min(size, S - cursor - 2 * (G - gi - 1));
    const violated = planViolated && size >= minViolated;
    const members = Array.from(order.subarray(cursor, cursor + size));
    cursor += size;
    const plan: GroupPlan = { policy, members, violated, hosts };
    if (maxPerHost !== undefined) plan.maxPerHost = maxPerHost;
    const app = GROUP_APPS[gi % GROUP_APPS.length] as string;
    out.push({ name: `${app}-${pad(gi + 1, G)}`, plan });
  }
  return out;
}

interface Traits {
  status: string[];
  taskState: (string | undefined)[];
  localDisk: Set<number>;
  sriov: Set<number>;
  excluded: Set<number>;
}

/**
 * Marks a few % of servers as not movable, each for one reason, and gives pinned ones a flavor
 * variant with the pinning extra spec. Members of violated groups stay movable so that every
 * planted violation can be repaired.
 */
function assignTraits(S: number, groups: readonly NamedGroup[], flavors: Flavor[], rng: Rng): Traits {
  const status = new Array<string>(S).fill('ACTIVE');
  const taskState = new Array<string | undefined>(S).fill(undefined);
  const traits: Traits = { status, taskState, localDisk: new Set(), sriov: new Set(), excluded: new Set() };
  const keepMovable = new Set<number>();
  for (const g of groups) if (g.plan.violated) for (const m of g.plan.members) keepMovable.add(m);
  const pool = Array.from(shuffled(S, rng)).filter((i) => !keepMovable.has(i));
  const count = (share: number): number => (pool.length >= 20 ? Math.max(1, Math.round(share * S)) : 0);
  let next = 0;
  const take = (n: number): number[] => {
    const out = pool.slice(next, next + n);
    next += out.length;
    return out;
  };

  const variants = new Map<string, Flavor>();
  take(pool.length >= 20 ? Math.max(PINNING_EXTRA_SPECS.length, Math.round(SHARES.pinned * S)) : 0).forEach(
    (i, k) => {
      const kind = PINNING_EXTRA_SPECS[
        k % PINNING_EXTRA_SPECS.length
      ] as (typeof PINNING_EXTRA_SPECS)[number];
      const base = flavors[i] as Flavor;
      const name = `${base.name}.${kind.suffix}`;
      let v = variants.get(name);
      if (v === undefined) {
        v = { ...base, name, extraSpecs: { ...kind.extraSpecs } };
        variants.set(name, v);
      }
      flavors[i] = v;
    },
  );
  for (const i of take(count(SHARES.localDisk))) traits.localDisk.add(i);
  for (const i of take(count(SHARES.sriov))) traits.sriov.add(i);
  for (const i of take(count(SHARES.excluded))) traits.excluded.add(i);
  for (const i of take(count(SHARES.shutoff))) status[i] = 'SHUTOFF';
  take(count(SHARES.taskState)).forEach((i, k) => {
    taskState[i] = TASK_STATES[k % TASK_STATES.length];
  });
  return traits;
}

interface Loads {
  serverCpu: Float64Array;
  serverMem: Float64Array;
  hostCpu: Float64Array;
  hostMem: Float64Array;
}

/**
 * Heavy-tailed per-server load (most servers idle, a few busy), a few hot hosts, and the host
 * total = its servers plus hypervisor overhead, kept below what the hardware physically has.
 */
function synthLoads(
  sizes: readonly HostSize[],
  flavors: readonly Flavor[],
  hostOf: Int32Array,
  status: readonly string[],
  disabled: ReadonlySet<number>,
  rng: Rng,
): Loads {
  const H = sizes.length;
  const S = flavors.length;
  const hot = new Uint8Array(H);
  if (H >= 3) {
    const candidates = Array.from({ length: H }, (_, h) => h).filter((h) => !disabled.has(h));
    const nHot = Math.max(1, Math.round(HOT_HOST_SHARE * H));
    for (let k = 0; k < nHot; k++) {
      const h = findHost(candidates, (c) => hot[c] === 0, rng, 4);
      if (h >= 0) hot[h] = 1;
    }
  }
  const cpu = new Float64Array(S);
  const mem = new Float64Array(S);
  const sumCpu = new Float64Array(H);
  const sumMem = new Float64Array(H);
  const running = new Int32Array(H);
  for (let i = 0; i < S; i++) {
    const f = flavors[i] as Flavor;
    const h = hostOf[i] as number;
    const zCpu = rng.normal();
    const zMem = rng.normal();
    if (status[i] !== 'ACTIVE') continue;
    let cpuShare = Math.min(1, Math.exp(-2.3 + zCpu));
    let memShare = Math.min(0.97, 0.45 * Math.exp(0.45 * zMem));
    if (hot[h] === 1) {
      cpuShare = Math.min(1, 3 * cpuShare + 0.1);
      memShare = Math.min(0.97, 1.25 * memShare);
    }
    cpu[i] = f.vcpus * cpuShare;
    mem[i] = f.ramMB * memShare;
    sumCpu[h] = (sumCpu[h] as number) + (cpu[i] as number);
    sumMem[h] = (sumMem[h] as number) + (mem[i] as number);
    running[h] = (running[h] as number) + 1;
  }
  const overheadCpu = (h: number): number => 0.1 + 0.02 * (running[h] as number);
  const overheadMem = (h: number): number => 512 + 32 * (running[h] as number);
  // Overcommitted hosts could sum to more than the machine has; real guests would be throttled.
  const scaleCpu = new Float64Array(H).fill(1);
  const scaleMem = new Float64Array(H).fill(1);
  sizes.forEach((s, h) => {
    const physCpu = 0.95 * (s.cores - s.reservedCores) - overheadCpu(h);
    const physMem = 0.95 * (s.memMB - s.reservedMemMB) - overheadMem(h);
    if ((sumCpu[h] as number) > physCpu) scaleCpu[h] = Math.max(0, physCpu) / (sumCpu[h] as number);
    if ((sumMem[h] as number) > physMem) scaleMem[h] = Math.max(0, physMem) / (sumMem[h] as number);
  });
  const hostCpu = new Float64Array(H);
  const hostMem = new Float64Array(H);
  for (let i = 0; i < S; i++) {
    const h = hostOf[i] as number;
    cpu[i] = round3((cpu[i] as number) * (scaleCpu[h] as number));
    mem[i] = Math.floor((mem[i] as number) * (scaleMem[h] as number));
    hostCpu[h] = (hostCpu[h] as number) + (cpu[i] as number);
    hostMem[h] = (hostMem[h] as number) + (mem[i] as number);
  }
  for (let h = 0; h < H; h++) {
    hostCpu[h] = round3((hostCpu[h] as number) + overheadCpu(h));
    hostMem[h] = Math.round((hostMem[h] as number) + overheadMem(h));
  }
  return { serverCpu: cpu, serverMem: mem, hostCpu, hostMem };
}

function weightedPicker(specs: readonly FlavorSpec[]): (rng: Rng) => Flavor {
  const cumulative: number[] = [];
  let acc = 0;
  for (const s of specs) {
    acc += s.weight;
    cumulative.push(acc);
  }
  return (rng) => {
    const r = rng.next() * acc;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) > r) hi = mid;
      else lo = mid + 1;
    }
    return (specs[lo] as FlavorSpec).flavor;
  };
}

/** Project sizes follow a Zipf law: a few big tenants, a long tail of small ones. */
function zipfPicker(n: number): (rng: Rng) => number {
  const cumulative = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) {
    acc += 1 / (i + 1);
    cumulative[i] = acc;
  }
  return (rng) => {
    const r = rng.next() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) > r) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

function shuffled(n: number, rng: Rng): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const t = a[i] as number;
    a[i] = a[j] as number;
    a[j] = t;
  }
  return a;
}

function hex(rng: Rng, digits: number): string {
  let s = '';
  while (s.length < digits)
    s += Math.floor(rng.next() * 0x10000)
      .toString(16)
      .padStart(4, '0');
  return s.slice(0, digits);
}

function uuid(rng: Rng): string {
  const h = hex(rng, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Math.floor(rng.next() * 4)]}${h.slice(17, 20)}-${h.slice(20)}`;
}

function hexId(rng: Rng): string {
  return hex(rng, 32);
}

/** A fixed instant per seed, on the hour, within 2026. */
function takenAtFor(seed: number): string {
  const t = Date.UTC(2026, 0, 1) + (seed % (365 * 24)) * 3_600_000;
  return new Date(t).toISOString().replace('.000Z', 'Z');
}

function pad(n: number, of: number): string {
  return String(n).padStart(Math.max(2, String(of).length), '0');
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}
