// An aggregate's balance kept move by move, for the checks that judge each move by what it buys
// (gain, worth) and by what its reason quotes (utilizations, means, imbalance). Same definitions
// as stats.ts (formats.md), but incremental: a move changes two hosts' loads, so each dimension
// keeps the count, sum and sum of squares of its utilizations and a move costs O(dimensions), which
// is what keeps a 30,000-move plan cheap. Sums are taken around the snapshot's mean so that the
// variance does not come out of a difference of two large numbers.
import type { Host, Server } from '../model/snapshot.js';
import type { DimensionDef } from '../policy/types.js';
import { serverLoad } from './stats.js';
import type { World } from './world.js';

function physicalCapacity(host: Host, dim: DimensionDef): number | undefined {
  const inv = host.inventory[dim.capacity];
  if (!inv) return undefined;
  const capacity = inv.total - inv.reserved;
  return capacity > 0 ? capacity : undefined;
}

/** formats.md: the hosts an aggregate's imbalance is taken over. */
export function isCounted(host: Host): boolean {
  return host.service.state === 'up' && host.service.status === 'enabled';
}

/** A variance below this (a stddev of 1e-6) is recomputed exactly rather than trusted to the sums. */
const NEAR_EVEN = 1e-12;

interface DimensionSums {
  n: number;
  ref: number;
  s1: number;
  s2: number;
}

export class AggregateBalance {
  /** Hosts counted in the imbalance: the `n` objective units are divided by. */
  readonly counted: number;
  readonly dims: readonly DimensionDef[];
  private readonly members: ReadonlySet<string>;
  private readonly countedNames: ReadonlySet<string>;
  private readonly loads = new Map<string, number[]>();
  /** Taken on first need: a caller that only reads the snapshot's utilizations never pays for them. */
  private sumsTaken: DimensionSums[] | undefined;

  constructor(
    private readonly world: World,
    aggregate: string,
    dims: readonly DimensionDef[],
  ) {
    this.dims = dims;
    const members = world.hostsIn(aggregate);
    const counted = members.filter(isCounted);
    this.members = new Set(members.map((h) => h.name));
    this.countedNames = new Set(counted.map((h) => h.name));
    this.counted = counted.length;
  }

  private get sums(): DimensionSums[] {
    this.sumsTaken ??= this.dims.map((_, d) => this.exactSums(d));
    return this.sumsTaken;
  }

  /** Two passes over the counted hosts: the sums without the rounding the updates have piled up. */
  private exactSums(d: number): DimensionSums {
    const utils: number[] = [];
    for (const name of this.countedNames) {
      const u = this.utilization(name, d);
      if (u !== undefined) utils.push(u);
    }
    const ref = utils.length === 0 ? 0 : utils.reduce((s, u) => s + u, 0) / utils.length;
    let s1 = 0;
    let s2 = 0;
    for (const u of utils) {
      s1 += u - ref;
      s2 += (u - ref) ** 2;
    }
    return { n: utils.length, ref, s1, s2 };
  }

  /**
   * Population variance of dimension d. Near zero the updates' rounding (about 1e-17 each) would
   * show through the square root as a stddev of 1e-9, enough to make a move that changes nothing
   * look like a gain; there the sums are taken again exactly. Only a nearly even aggregate pays that
   * O(hosts), and one whose utilizations are all exactly equal (a dimension nobody loads) never does.
   */
  private variance(d: number): number {
    const sums = this.sums;
    let s = sums[d]!;
    if (s.n === 0) return 0;
    let m = s.s1 / s.n;
    let v = s.s2 / s.n - m * m;
    if (v < NEAR_EVEN && (s.s1 !== 0 || s.s2 !== 0)) {
      s = this.exactSums(d);
      sums[d] = s;
      m = s.s1 / s.n;
      v = s.s2 / s.n - m * m;
    }
    return Math.max(0, v);
  }

  isMember(host: string): boolean {
    return this.members.has(host);
  }

  isCounted(host: string): boolean {
    return this.countedNames.has(host);
  }

  /** Index of a dimension by its plan name, or -1. */
  dimension(name: string): number {
    return this.dims.findIndex((d) => d.name === name);
  }

  private loadsOf(name: string): number[] | undefined {
    const known = this.loads.get(name);
    if (known) return known;
    const host = this.world.hosts.get(name);
    if (!host) return undefined;
    const servers = this.world.serversOn.get(name) ?? [];
    const loads = this.dims.map(
      (dim) => host.load?.[dim.load] ?? servers.reduce((s, server) => s + serverLoad(server, dim), 0),
    );
    this.loads.set(name, loads);
    return loads;
  }

  /** Load over physical capacity now; undefined for a host without that capacity or unknown. */
  utilization(name: string, d: number): number | undefined {
    const host = this.world.hosts.get(name);
    const dim = this.dims[d];
    if (!host || !dim) return undefined;
    const capacity = physicalCapacity(host, dim);
    const load = this.loadsOf(name)?.[d];
    return capacity === undefined || load === undefined ? undefined : load / capacity;
  }

  /** Plain mean of the counted hosts' utilizations of dimension d. */
  mean(d: number): number {
    const s = this.sums[d];
    return !s || s.n === 0 ? 0 : s.ref + s.s1 / s.n;
  }

  imbalance(): number {
    let total = 0;
    this.dims.forEach((dim, d) => {
      total += dim.weight * Math.sqrt(this.variance(d));
    });
    return total;
  }

  /** The server leaves `from` and arrives on `to`, fully (the step-order replay of formats.md). */
  apply(server: Server, from: string, to: string): void {
    // The server as this balance's world has it: a forecast objective's carries its peak loads.
    const own = this.world.servers.get(server.id) ?? server;
    this.shift(from, own, -1);
    this.shift(to, own, 1);
  }

  private shift(name: string, server: Server, sign: 1 | -1): void {
    const sums = this.sums;
    const loads = this.loadsOf(name);
    if (!loads) return;
    this.dims.forEach((dim, d) => {
      const before = this.utilization(name, d);
      loads[d]! += sign * serverLoad(server, dim);
      const after = this.utilization(name, d);
      const s = sums[d]!;
      if (!this.countedNames.has(name) || before === undefined || after === undefined) return;
      s.s1 += after - before;
      s.s2 += (after - s.ref) ** 2 - (before - s.ref) ** 2;
    });
  }
}

/**
 * The balance an aggregate's moves are judged on: the forecast objective when the plan says it
 * planned on the forecast (limits.objectives), else current load with the checker's dimensions.
 */
export function objectiveBalance(
  world: World,
  aggregate: string,
  limits: {
    dimensions: readonly DimensionDef[];
    objectives: ReadonlyMap<string, { world: World; dims: DimensionDef[] }>;
  },
): AggregateBalance {
  const o = limits.objectives.get(aggregate);
  return o
    ? new AggregateBalance(o.world, aggregate, o.dims)
    : new AggregateBalance(world, aggregate, limits.dimensions);
}
