// The planner's indexed, incrementally updated view of a snapshot. Every move is applied in
// O(dimensions + group size) and can be undone; nothing here rescans the cluster.
import type { Host, Server, ServerGroupPolicy, Snapshot } from '../model/snapshot.js';
import { objectiveBar } from '../policy/threshold.js';
import type { DimensionDef, Policy } from '../policy/types.js';
import { estimateMigrationSeconds } from './cost-model.js';
import { whyNotMigratable } from './migratable.js';

export const UNASSIGNED = '_unassigned_';
/** Resource classes whose Placement capacity the planner enforces: VCPU, MEMORY_MB, DISK_GB. */
export const RCS = ['VCPU', 'MEMORY_MB', 'DISK_GB'] as const;
export type RcIndex = 0 | 1 | 2;

export interface HostRec {
  readonly index: number;
  readonly name: string;
  readonly az: string;
  readonly aggregate: number;
  readonly up: boolean;
  /** Up, enabled and not forced down: may receive servers and counts in the imbalance. */
  readonly usable: boolean;
  /** Up but disabled: its servers are to be evacuated. */
  readonly draining: boolean;
  readonly disabledReason: string | null;
  readonly maxOutgoing: number;
  /** Placement capacity per RC: (total - reserved) * allocationRatio; Infinity when not inventoried. */
  readonly cap: Float64Array;
  /** Physical capacity per dimension (total - reserved of the dimension's capacity class). */
  readonly phys: Float64Array;
}

export interface ServerRec {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  readonly origin: number;
  readonly alloc: Float64Array;
  readonly load: Float64Array;
  readonly group: number;
  /** null when the server may be live-migrated. */
  readonly immovable: string | null;
  readonly estSeconds: number;
  readonly ramMB: number;
  /**
   * What an optional move of this server must buy, in objective units (imbalance × hosts): the
   * policy's worth threshold for its cost (src/policy/threshold.ts); Infinity at level 1.
   */
  readonly bar: number;
}

export interface GroupRec {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  readonly policy: ServerGroupPolicy;
  readonly maxPerHost: number;
  readonly members: number[];
  /** host index -> members there */
  readonly count: Map<number, number>;
}

export interface AggregateRec {
  readonly index: number;
  readonly name: string;
  readonly hosts: number[];
  /** Hosts counted in the imbalance (usable). */
  readonly counted: number[];
}

export interface AppliedMove {
  server: number;
  from: number;
  to: number;
}

export class ClusterState {
  readonly dims: DimensionDef[];
  readonly hosts: HostRec[] = [];
  readonly servers: ServerRec[] = [];
  readonly groups: GroupRec[] = [];
  readonly aggregates: AggregateRec[] = [];
  readonly hostByName = new Map<string, number>();
  readonly serverById = new Map<string, number>();
  /** Current host of each server. */
  readonly at: Int32Array;
  /** Servers on each host. */
  readonly on: Set<number>[] = [];
  /** Placement usage per host per RC (index host * 3 + rc). */
  readonly used: Float64Array;
  /** Load per host per dimension (index host * D + d). */
  readonly load: Float64Array;
  /** Per aggregate per dimension: sum of utilizations and of their squares over counted hosts. */
  readonly s1: Float64Array;
  readonly s2: Float64Array;
  readonly moved: Uint8Array;
  /** Moves of the plan so far out of and into each host. */
  readonly sent: Int32Array;
  readonly received: Int32Array;
  /**
   * While true, a host that has sent may not receive and one that has received may not send
   * (constraints/one-way.ts): what optional moves are held to, so no host is a source and a
   * destination of one plan outside a declared exchange.
   */
  oneWay = false;
  private readonly history: AppliedMove[] = [];
  /** Reused by imbalanceAfter, which runs once per candidate destination. */
  private readonly scratch: Float64Array;

  constructor(snapshot: Snapshot, policy: Policy) {
    this.dims = policy.dimensions;
    const D = this.dims.length;
    this.scratch = new Float64Array(2 * D);
    const planned = plannedAggregates(snapshot, policy);
    const aggIndex = new Map<string, number>();
    for (const name of planned) {
      aggIndex.set(name, this.aggregates.length);
      this.aggregates.push({ index: this.aggregates.length, name, hosts: [], counted: [] });
    }
    const hosts = [...snapshot.hosts].sort((a, b) => cmp(a.name, b.name));
    this.used = new Float64Array(hosts.length * 3);
    this.load = new Float64Array(hosts.length * D);
    this.sent = new Int32Array(hosts.length);
    this.received = new Int32Array(hosts.length);
    for (const h of hosts) {
      const agg = hostAggregate(h, aggIndex) ?? this.addUnassigned(aggIndex);
      const rec = makeHostRec(h, this.hosts.length, agg, this.dims);
      this.hosts.push(rec);
      this.hostByName.set(h.name, rec.index);
      this.on.push(new Set());
      const aggRec = this.aggregates[agg]!;
      aggRec.hosts.push(rec.index);
      if (rec.usable) aggRec.counted.push(rec.index);
      RCS.forEach((rc, r) => {
        this.used[rec.index * 3 + r] = h.usage[rc] ?? 0;
      });
    }

    const servers = [...snapshot.servers].sort((a, b) => cmp(a.id, b.id));
    this.at = new Int32Array(servers.length);
    this.moved = new Uint8Array(servers.length);
    const groupOfServer = new Map<string, number>();
    const groups = [...snapshot.serverGroups].sort((a, b) => cmp(a.id, b.id));
    groups.forEach((g, gi) => {
      for (const m of g.members) groupOfServer.set(m, gi);
    });
    for (const v of servers) {
      const host = this.hostByName.get(v.host);
      if (host === undefined) throw new Error(`server ${v.id} is on unknown host ${v.host}`);
      const rec = makeServerRec(v, this.servers.length, host, groupOfServer.get(v.id) ?? -1, this, policy);
      this.servers.push(rec);
      this.serverById.set(v.id, rec.index);
      this.at[rec.index] = host;
      this.on[host]!.add(rec.index);
    }
    groups.forEach((g, gi) => {
      const members = g.members
        .map((m) => this.serverById.get(m))
        .filter((m): m is number => m !== undefined);
      const count = new Map<number, number>();
      for (const m of members) {
        const h = this.at[m]!;
        count.set(h, (count.get(h) ?? 0) + 1);
      }
      this.groups.push({
        index: gi,
        id: g.id,
        name: g.name,
        policy: g.policy,
        maxPerHost: g.rules?.max_server_per_host ?? 1,
        members,
        count,
      });
    });

    // Host load: measured when the snapshot has it, else the sum of its servers' loads.
    hosts.forEach((h, hi) => {
      this.dims.forEach((dim, d) => {
        const measured = h.load?.[dim.load];
        let value = measured;
        if (value === undefined) {
          value = 0;
          for (const s of this.on[hi]!) value += this.servers[s]!.load[d]!;
        }
        this.load[hi * D + d] = value;
      });
    });
    this.s1 = new Float64Array(this.aggregates.length * D);
    this.s2 = new Float64Array(this.aggregates.length * D);
    for (const agg of this.aggregates) {
      for (const h of agg.counted) {
        for (let d = 0; d < D; d++) {
          const u = this.util(h, d);
          this.s1[agg.index * D + d]! += u;
          this.s2[agg.index * D + d]! += u * u;
        }
      }
    }
  }

  private addUnassigned(aggIndex: Map<string, number>): number {
    const existing = aggIndex.get(UNASSIGNED);
    if (existing !== undefined) return existing;
    const index = this.aggregates.length;
    aggIndex.set(UNASSIGNED, index);
    this.aggregates.push({ index, name: UNASSIGNED, hosts: [], counted: [] });
    return index;
  }

  get D(): number {
    return this.dims.length;
  }

  util(host: number, d: number): number {
    const phys = this.hosts[host]!.phys[d]!;
    return phys > 0 ? this.load[host * this.D + d]! / phys : 0;
  }

  /** Remaining Placement capacity of a host for a resource class. */
  free(host: number, rc: RcIndex): number {
    return this.hosts[host]!.cap[rc]! - this.used[host * 3 + rc]!;
  }

  /** Weighted imbalance of an aggregate: sum over dimensions of weight * population stddev. */
  imbalance(agg: number): number {
    const n = this.aggregates[agg]!.counted.length;
    if (n === 0) return 0;
    let total = 0;
    for (let d = 0; d < this.D; d++) {
      total += this.dims[d]!.weight * stddev(this.s1[agg * this.D + d]!, this.s2[agg * this.D + d]!, n);
    }
    return total;
  }

  /**
   * Imbalance of the aggregate if `server` moved to `to`, without applying it: O(dimensions).
   */
  imbalanceAfter(server: number, to: number): number {
    this.sumsWithoutServer(server, this.scratch);
    return this.imbalanceWithArrival(this.scratch, server, to);
  }

  /**
   * The running sums of the server's aggregate with the server taken off its host, into
   * `out` (s1 for each dimension, then s2). With imbalanceWithArrival this splits a move's
   * evaluation so a search over many destinations for one server pays for the source once.
   */
  sumsWithoutServer(server: number, out: Float64Array): void {
    const from = this.at[server]!;
    const h = this.hosts[from]!;
    const D = this.D;
    const l = this.servers[server]!.load;
    for (let d = 0; d < D; d++) {
      let s1 = this.s1[h.aggregate * D + d]!;
      let s2 = this.s2[h.aggregate * D + d]!;
      const p = h.phys[d]!;
      if (h.usable && p > 0) {
        const u = this.load[from * D + d]! / p;
        const nu = u - l[d]! / p;
        s1 += nu - u;
        s2 += nu * nu - u * u;
      }
      out[d] = s1;
      out[D + d] = s2;
    }
  }

  /** Imbalance given sums from sumsWithoutServer, once the server arrives on `to`. */
  imbalanceWithArrival(sums: Float64Array, server: number, to: number): number {
    const h = this.hosts[to]!;
    const D = this.D;
    const n = this.aggregates[h.aggregate]!.counted.length;
    if (n === 0) return 0;
    const l = this.servers[server]!.load;
    let total = 0;
    for (let d = 0; d < D; d++) {
      let s1 = sums[d]!;
      let s2 = sums[D + d]!;
      const p = h.phys[d]!;
      if (h.usable && p > 0) {
        const u = this.load[to * D + d]! / p;
        const nu = u + l[d]! / p;
        s1 += nu - u;
        s2 += nu * nu - u * u;
      }
      const mean = s1 / n;
      total += this.dims[d]!.weight * Math.sqrt(Math.max(0, s2 / n - mean * mean));
    }
    return total;
  }

  apply(server: number, to: number): void {
    const from = this.at[server]!;
    this.move(server, from, to);
    this.moved[server] = 1;
    this.sent[from]!++;
    this.received[to]!++;
    this.history.push({ server, from, to });
  }

  /** Undoes the last `count` applied moves (for tentative units such as a host drain). */
  undo(count: number): void {
    for (let i = 0; i < count; i++) {
      const last = this.history.pop();
      if (last === undefined) return;
      this.move(last.server, last.to, last.from);
      this.moved[last.server] = 0;
      this.sent[last.from]!--;
      this.received[last.to]!--;
    }
  }

  get applied(): readonly AppliedMove[] {
    return this.history;
  }

  /** Adds (sign 1) or removes (sign -1) a server's allocation and load on a host, with the sums. */
  private shift(s: ServerRec, host: number, sign: number): void {
    const D = this.D;
    const h = this.hosts[host]!;
    for (let r = 0; r < 3; r++) this.used[host * 3 + r]! += sign * s.alloc[r]!;
    for (let d = 0; d < D; d++) {
      const before = this.util(host, d);
      this.load[host * D + d]! += sign * s.load[d]!;
      if (h.usable) {
        const after = this.util(host, d);
        this.s1[h.aggregate * D + d]! += after - before;
        this.s2[h.aggregate * D + d]! += after * after - before * before;
      }
    }
  }

  private move(server: number, from: number, to: number): void {
    const s = this.servers[server]!;
    // Replays of whole plans in the improvement stage call this most: no allocation here.
    this.shift(s, from, -1);
    this.shift(s, to, 1);
    this.on[from]!.delete(server);
    this.on[to]!.add(server);
    this.at[server] = to;
    if (s.group >= 0) {
      const count = this.groups[s.group]!.count;
      const c = (count.get(from) ?? 1) - 1;
      if (c === 0) count.delete(from);
      else count.set(from, c);
      count.set(to, (count.get(to) ?? 0) + 1);
    }
  }
}

export function stddev(s1: number, s2: number, n: number): number {
  const mean = s1 / n;
  return Math.sqrt(Math.max(0, s2 / n - mean * mean));
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function plannedAggregates(snapshot: Snapshot, policy: Policy): string[] {
  if (policy.aggregates.length > 0) return [...new Set(policy.aggregates)].sort(cmp);
  const names = new Set<string>();
  for (const h of snapshot.hosts) for (const a of h.aggregates) names.add(a);
  return [...names].sort(cmp);
}

// The snapshot is scoped first (policy/aggregate-scope.ts): a host is in at most one planned aggregate.
function hostAggregate(h: Host, aggIndex: Map<string, number>): number | undefined {
  const names = h.aggregates.filter((a) => aggIndex.has(a)).sort(cmp);
  return names.length > 0 ? aggIndex.get(names[0]!) : undefined;
}

function makeHostRec(h: Host, index: number, aggregate: number, dims: DimensionDef[]): HostRec {
  const cap = new Float64Array(3);
  RCS.forEach((rc, r) => {
    const inv = h.inventory[rc];
    cap[r] = inv === undefined ? Number.POSITIVE_INFINITY : (inv.total - inv.reserved) * inv.allocationRatio;
  });
  const phys = new Float64Array(dims.length);
  dims.forEach((dim, d) => {
    const inv = h.inventory[dim.capacity];
    phys[d] = inv === undefined ? 0 : Math.max(0, inv.total - inv.reserved);
  });
  const up = h.service.state === 'up' && !h.service.forcedDown;
  return {
    index,
    name: h.name,
    az: h.availabilityZone,
    aggregate,
    up,
    usable: up && h.service.status === 'enabled',
    draining: up && h.service.status === 'disabled',
    disabledReason: h.service.disabledReason ?? null,
    maxOutgoing: h.maxConcurrentLiveMigrations ?? 0,
    cap,
    phys,
  };
}

function makeServerRec(
  v: Server,
  index: number,
  host: number,
  group: number,
  state: ClusterState,
  policy: Policy,
): ServerRec {
  const load = new Float64Array(policy.dimensions.length);
  policy.dimensions.forEach((dim, d) => {
    load[d] = v.load?.[dim.load] ?? missingLoad(v, dim);
  });
  const alloc = new Float64Array([v.flavor.vcpus, v.flavor.ramMB, v.flavor.diskGB]);
  const estSeconds = estimateMigrationSeconds(
    { ramMB: v.flavor.ramMB, dirtyRateMBps: v.dirtyRateMBps },
    policy.costModel,
  );
  return {
    index,
    id: v.id,
    name: v.name,
    origin: host,
    alloc,
    load,
    group,
    immovable: whyNotMigratable(v, state.hosts[host]!.up),
    estSeconds,
    ramMB: v.flavor.ramMB,
    bar: objectiveBar(
      policy.threshold,
      policy.minGain,
      policy.migrationCostPerSecond,
      estSeconds,
      v.flavor.ramMB,
    ),
  };
}

function missingLoad(v: Server, dim: DimensionDef): number {
  switch (dim.missingServerLoad) {
    case 'zero':
      return 0;
    case 'flavor-vcpus':
      return v.flavor.vcpus;
    case 'flavor-ram':
      return v.flavor.ramMB;
    case 'flavor-disk':
      return v.flavor.diskGB;
  }
}
