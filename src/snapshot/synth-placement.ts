// Places synthetic servers onto sized hosts: server groups first (some deliberately violated),
// then everyone else, largest first, never beyond Placement capacity.
import type { Flavor } from '../model/snapshot.js';
import type { Rng } from '../util/rng.js';

/** Per-host capacity and what has been placed, in flat arrays: 100,000 servers must stay cheap. */
export class HostFill {
  readonly usedV: Float64Array;
  readonly usedM: Float64Array;
  readonly usedD: Float64Array;
  /** Room kept free so that a violated affinity group can be repaired in place. */
  readonly keptV: Float64Array;
  readonly keptM: Float64Array;

  /**
   * capV/capM/capD: Placement capacity, (total - reserved) * ratio. softV/softM: the fill level
   * random placement aims for on each host, below capacity, so hosts differ in how full they are.
   */
  constructor(
    readonly capV: Float64Array,
    readonly capM: Float64Array,
    readonly capD: Float64Array,
    readonly softV: Float64Array,
    readonly softM: Float64Array,
  ) {
    const n = capV.length;
    this.usedV = new Float64Array(n);
    this.usedM = new Float64Array(n);
    this.usedD = new Float64Array(n);
    this.keptV = new Float64Array(n);
    this.keptM = new Float64Array(n);
  }

  /** Whether vcpus/ram/disk more fit on host h, up to its soft fill level or its full capacity. */
  fits(h: number, vcpus: number, ramMB: number, diskGB: number, soft: boolean): boolean {
    const limV = soft ? (this.softV[h] as number) : (this.capV[h] as number);
    const limM = soft ? (this.softM[h] as number) : (this.capM[h] as number);
    return (
      (this.usedV[h] as number) + (this.keptV[h] as number) + vcpus <= limV &&
      (this.usedM[h] as number) + (this.keptM[h] as number) + ramMB <= limM &&
      (this.usedD[h] as number) + diskGB <= (this.capD[h] as number)
    );
  }

  add(h: number, f: Flavor): void {
    this.usedV[h] = (this.usedV[h] as number) + f.vcpus;
    this.usedM[h] = (this.usedM[h] as number) + f.ramMB;
    this.usedD[h] = (this.usedD[h] as number) + f.diskGB;
  }

  keep(h: number, f: Flavor): void {
    this.keptV[h] = (this.keptV[h] as number) + f.vcpus;
    this.keptM[h] = (this.keptM[h] as number) + f.ramMB;
  }
}

/** Random hosts weighed per server: enough to even hosts out, few enough to stay cheap. */
const PROBES = 6;

export interface GroupPlan {
  policy: 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';
  maxPerHost?: number;
  /** Server indices; may shrink when a host cannot take them all (dropped ones join the rest). */
  members: number[];
  /** Hard groups only: placed so that the planner has a repair to make. */
  violated: boolean;
  /** Enabled hosts the group lives on (one aggregate). */
  hosts: readonly number[];
}

/**
 * Finds a host in `candidates` that satisfies `ok`, first by random probes, then by a scan from
 * a random offset (so the scan does not always favour the first hosts). -1 when none does.
 */
export function findHost(
  candidates: readonly number[],
  ok: (h: number) => boolean,
  rng: Rng,
  probes = 16,
): number {
  const n = candidates.length;
  if (n === 0) return -1;
  for (let i = 0; i < probes; i++) {
    const h = candidates[Math.floor(rng.next() * n)] as number;
    if (ok(h)) return h;
  }
  const start = Math.floor(rng.next() * n);
  for (let i = 0; i < n; i++) {
    const h = candidates[(start + i) % n] as number;
    if (ok(h)) return h;
  }
  return -1;
}

/** Places one group's members (hostOf[i] = host index); members that fit nowhere are dropped from it. */
export function placeGroup(
  g: GroupPlan,
  flavors: readonly Flavor[],
  fill: HostFill,
  hostOf: Int32Array,
  rng: Rng,
): void {
  const together = g.policy === 'affinity' || (g.policy === 'soft-affinity' && rng.next() < 0.5);
  if (together) placeTogether(g, flavors, fill, hostOf, rng);
  else if (g.policy === 'soft-affinity') placeEach(g.members, g.hosts, flavors, fill, hostOf, rng);
  else placeApart(g, flavors, fill, hostOf, rng);
}

function placeTogether(
  g: GroupPlan,
  flavors: readonly Flavor[],
  fill: HostFill,
  hostOf: Int32Array,
  rng: Rng,
): void {
  let host = -1;
  while (g.members.length >= 2) {
    const sum = sumFlavors(g.members, flavors);
    host = findHost(g.hosts, (h) => fill.fits(h, sum.vcpus, sum.ramMB, sum.diskGB, true), rng);
    if (host < 0)
      host = findHost(g.hosts, (h) => fill.fits(h, sum.vcpus, sum.ramMB, sum.diskGB, false), rng, 0);
    if (host >= 0) break;
    g.members.pop();
  }
  if (host < 0) {
    throw new RangeError(
      'synthetic cluster too small: no host can take even two members of an affinity group; use more hosts or fewer servers',
    );
  }
  for (const m of g.members) {
    fill.add(host, flavors[m] as Flavor);
    hostOf[m] = host;
  }
  if (!g.violated) return;
  // Split off about a third; the rest stays the majority and keeps room to take them back.
  const split = g.members.slice(g.members.length - Math.max(1, Math.floor(g.members.length / 3)));
  for (const m of split) {
    const f = flavors[m] as Flavor;
    const other = findHost(g.hosts, (h) => h !== host && fill.fits(h, f.vcpus, f.ramMB, f.diskGB, true), rng);
    if (other < 0) continue;
    fill.add(other, f);
    fill.usedV[host] = (fill.usedV[host] as number) - f.vcpus;
    fill.usedM[host] = (fill.usedM[host] as number) - f.ramMB;
    fill.usedD[host] = (fill.usedD[host] as number) - f.diskGB;
    fill.keep(host, f);
    hostOf[m] = other;
  }
}

function placeApart(
  g: GroupPlan,
  flavors: readonly Flavor[],
  fill: HostFill,
  hostOf: Int32Array,
  rng: Rng,
): void {
  // How many members start stacked on one host: for a violated hard group one more than its
  // rule allows; soft groups and "2 per host" groups sometimes share a host legitimately.
  let stacked = 1;
  if (g.violated) stacked = (g.maxPerHost ?? 1) + 1;
  else if ((g.policy === 'soft-anti-affinity' || g.maxPerHost === 2) && rng.next() < 0.5) stacked = 2;
  stacked = Math.min(stacked, g.members.length);

  const taken = new Set<number>();
  const head = g.members.slice(0, stacked);
  const sum = sumFlavors(head, flavors);
  let host = findHost(g.hosts, (h) => fill.fits(h, sum.vcpus, sum.ramMB, sum.diskGB, true), rng);
  if (host < 0)
    host = findHost(g.hosts, (h) => fill.fits(h, sum.vcpus, sum.ramMB, sum.diskGB, false), rng, 0);
  if (host >= 0) {
    for (const m of head) {
      fill.add(host, flavors[m] as Flavor);
      hostOf[m] = host;
    }
    taken.add(host);
  }
  const rest = host >= 0 ? g.members.slice(stacked) : g.members;
  for (const m of rest) {
    const f = flavors[m] as Flavor;
    let h = findHost(g.hosts, (c) => !taken.has(c) && fill.fits(c, f.vcpus, f.ramMB, f.diskGB, true), rng);
    if (h < 0)
      h = findHost(g.hosts, (c) => !taken.has(c) && fill.fits(c, f.vcpus, f.ramMB, f.diskGB, false), rng, 0);
    if (h < 0) continue;
    fill.add(h, f);
    hostOf[m] = h;
    taken.add(h);
  }
  dropUnplaced(g, hostOf);
}

function placeEach(
  members: readonly number[],
  hosts: readonly number[],
  flavors: readonly Flavor[],
  fill: HostFill,
  hostOf: Int32Array,
  rng: Rng,
): void {
  for (const m of members) {
    const f = flavors[m] as Flavor;
    let h = findHost(hosts, (c) => fill.fits(c, f.vcpus, f.ramMB, f.diskGB, true), rng, 8);
    if (h < 0) h = findHost(hosts, (c) => fill.fits(c, f.vcpus, f.ramMB, f.diskGB, false), rng, 0);
    if (h < 0) continue;
    fill.add(h, f);
    hostOf[m] = h;
  }
}

function dropUnplaced(g: GroupPlan, hostOf: Int32Array): void {
  g.members = g.members.filter((m) => (hostOf[m] as number) >= 0);
}

/**
 * Places every server not yet placed, largest first (so big flavors find empty hosts): the best
 * of a few random hosts, judged by how far each would be past its soft fill level, so hosts end
 * up spread around their own levels; when none of them has room, the next host that has.
 */
export function placeRest(flavors: readonly Flavor[], fill: HostFill, hostOf: Int32Array, rng: Rng): void {
  const todo: number[] = [];
  for (let i = 0; i < hostOf.length; i++) if ((hostOf[i] as number) < 0) todo.push(i);
  todo.sort((a, b) => {
    const fa = flavors[a] as Flavor;
    const fb = flavors[b] as Flavor;
    return fb.vcpus - fa.vcpus || fb.ramMB - fa.ramMB || a - b;
  });
  const n = fill.capV.length;
  let cursor = 0;
  for (const i of todo) {
    const f = flavors[i] as Flavor;
    let h = -1;
    let best = Number.POSITIVE_INFINITY;
    for (let p = 0; p < PROBES; p++) {
      const c = Math.floor(rng.next() * n);
      if (!fill.fits(c, f.vcpus, f.ramMB, f.diskGB, false)) continue;
      const score = Math.max(
        ((fill.usedV[c] as number) + (fill.keptV[c] as number) + f.vcpus) / (fill.softV[c] as number),
        ((fill.usedM[c] as number) + (fill.keptM[c] as number) + f.ramMB) / (fill.softM[c] as number),
      );
      if (score < best) {
        best = score;
        h = c;
      }
    }
    // Next fit keeps the fallback linear overall: the cursor only moves past hosts that are full.
    for (let k = 0; k < n && h < 0; k++) {
      const c = (cursor + k) % n;
      if (fill.fits(c, f.vcpus, f.ramMB, f.diskGB, false)) {
        h = c;
        cursor = c;
      }
    }
    if (h < 0) {
      throw new RangeError(
        `synthetic cluster too small: no host has room for a ${f.name} (${f.vcpus} vCPU, ${f.ramMB} MiB); use more hosts or fewer servers`,
      );
    }
    fill.add(h, f);
    hostOf[i] = h;
  }
}

function sumFlavors(members: readonly number[], flavors: readonly Flavor[]): Flavor {
  const s = { name: '', vcpus: 0, ramMB: 0, diskGB: 0 };
  for (const m of members) {
    const f = flavors[m] as Flavor;
    s.vcpus += f.vcpus;
    s.ramMB += f.ramMB;
    s.diskGB += f.diskGB;
  }
  return s;
}
