// The exact best move of an aggregate: over every movable server and every legal destination,
// the one with the highest net gain (imbalance reduction × hosts − soft-group penalty − cost).
//
// Why it stays fast without trying every pair: a destination's effect on the imbalance depends
// on the server, on the destination's physical capacity and on its utilization, and is
// monotone in each utilization (an arrival adds 2·u·x + x² to a sum of squares). So:
//   - hosts are grouped in classes (availability zone × physical capacity per dimension);
//   - within a class only the non-dominated hosts (no other host is at most as loaded in
//     every dimension) can be a server's best destination when room is not the question: each
//     server is scored on that Pareto front only, which gives its exact best when the winner
//     has room, and an upper bound otherwise;
//   - servers whose front winner lacks room are searched over the whole class, best bound
//     first, scanning hosts by rising utilization with a bound that only worsens, until no
//     bound can beat the best move found (branch and bound: the result is exact).
// Hosts where the server's group has members are scored one by one (the group terms differ
// there); everywhere else a group's effect is the same for every host. A class is re-sorted
// only after a move touched one of its hosts.

import { groupViolationDelta } from '../constraints/hard-groups.js';
import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';

/** Servers whose fronts are scored before the others, to find a strong best move early. */
const SEED_SERVERS = 16;

export interface BestMove {
  server: number;
  to: number;
  /** Objective units (docs/policy.md): balance gain × hosts − soft-group penalty − cost. */
  net: number;
  /** Soft-group penalty the move adds (negative: violations removed). */
  soft: number;
}

interface HostClass {
  invPhys: Float64Array;
  hosts: number[];
  /** Hosts sorted by utilization of dimension 0 (then the others, then index). */
  order: Int32Array;
  /** util[k*D+d] of order[k]; sufMin[k*D+d]: min util of dimension d over order[k..]. */
  util: Float64Array;
  sufMin: Float64Array;
  /** Positions in `order` of the non-dominated hosts. */
  front: number[];
  dirty: boolean;
}

/** A work counter: every scored (server, destination) pair or bound counts one evaluation. */
export interface WorkMeter {
  evaluations: number;
}

export class BestMoveSearch {
  private readonly classes: HostClass[] = [];
  private readonly classOfHost = new Map<number, HostClass>();
  private readonly classesByZone = new Map<string, HostClass[]>();
  private readonly weights: Float64Array;
  private readonly sums: Float64Array;
  private readonly point: Float64Array;
  private readonly n: number;
  /** The aggregate's servers that may ever move, with flat copies of what pass 1 reads. */
  private readonly cand: Int32Array;
  private readonly candLoad: Float64Array;
  private readonly candCost: Float64Array;
  /** 1 / physical capacity per host and dimension (0 when the host has none). */
  private readonly hostInv: Float64Array;
  /** As hostInv, but 0 on hosts not counted in the imbalance: a departure from them changes no sum. */
  private readonly srcInv: Float64Array;
  private readonly candGroup: Int32Array;
  /** Zone of each candidate (index into zones), and per zone its classes' 1/phys and ideal points, flat. */
  private readonly candZone: Int32Array;
  private readonly zones: { classes: HostClass[]; inv: Float64Array; ideal: Float64Array }[] = [];
  /** Pass-1 survivors, reused between searches. */
  private ideals: Float64Array;
  private idealServers: Int32Array;
  private uniforms: Float64Array;

  constructor(
    private readonly ctx: PlanContext,
    readonly agg: number,
    private readonly meter: WorkMeter = { evaluations: 0 },
  ) {
    const { state } = ctx;
    const D = state.D;
    this.weights = Float64Array.from(state.dims, (d) => d.weight);
    this.sums = new Float64Array(2 * D);
    this.point = new Float64Array(D);
    this.n = state.aggregates[agg]!.counted.length;
    const byKey = new Map<string, HostClass>();
    for (const h of state.aggregates[agg]!.counted) {
      const rec = state.hosts[h]!;
      const key = `${rec.az}\u0000${Array.from(rec.phys).join(',')}`;
      let c = byKey.get(key);
      if (!c) {
        c = {
          invPhys: Float64Array.from(rec.phys, (p) => (p > 0 ? 1 / p : 0)),
          hosts: [],
          order: new Int32Array(0),
          util: new Float64Array(0),
          sufMin: new Float64Array(0),
          front: [],
          dirty: true,
        };
        byKey.set(key, c);
        this.classes.push(c);
        const list = this.classesByZone.get(rec.az) ?? [];
        list.push(c);
        this.classesByZone.set(rec.az, list);
      }
      c.hosts.push(h);
      this.classOfHost.set(h, c);
    }
    this.hostInv = new Float64Array(state.hosts.length * D);
    for (const h of state.aggregates[agg]!.hosts) {
      for (let d = 0; d < D; d++) {
        const p = state.hosts[h]!.phys[d]!;
        this.hostInv[h * D + d] = p > 0 ? 1 / p : 0;
      }
    }
    const cand: number[] = [];
    for (const h of state.aggregates[agg]!.hosts) {
      if (!this.classesByZone.has(state.hosts[h]!.az)) continue;
      for (const s of state.on[h]!) if (state.servers[s]!.immovable === null) cand.push(s);
    }
    cand.sort((a, b) => a - b);
    this.cand = Int32Array.from(cand);
    this.candLoad = new Float64Array(cand.length * D);
    this.candCost = new Float64Array(cand.length);
    this.srcInv = new Float64Array(state.hosts.length * D);
    for (const h of state.aggregates[agg]!.counted)
      for (let d = 0; d < D; d++) this.srcInv[h * D + d] = this.hostInv[h * D + d]!;
    const zoneIndex = new Map<string, number>();
    for (const [az, classes] of [...this.classesByZone].sort((a, b) =>
      a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0,
    )) {
      zoneIndex.set(az, this.zones.length);
      const inv = new Float64Array(classes.length * D);
      classes.forEach((c, k) => {
        for (let d = 0; d < D; d++) inv[k * D + d] = c.invPhys[d]!;
      });
      this.zones.push({ classes, inv, ideal: new Float64Array(classes.length * D) });
    }
    this.candGroup = new Int32Array(cand.length);
    this.candZone = new Int32Array(cand.length);
    cand.forEach((s, i) => {
      const sv = state.servers[s]!;
      for (let d = 0; d < D; d++) this.candLoad[i * D + d] = sv.load[d]!;
      this.candCost[i] = sv.bar;
      this.candGroup[i] = sv.group;
      const az = state.hosts[state.at[s]!]!.az;
      this.candZone[i] = zoneIndex.get(az)!;
    });
    this.ideals = new Float64Array(cand.length);
    this.idealServers = new Int32Array(cand.length);
    this.uniforms = new Float64Array(cand.length);
  }

  /** Many moves were applied or undone: every class is re-sorted on the next search. */
  invalidate(): void {
    for (const c of this.classes) c.dirty = true;
  }

  /** A move changed these hosts' utilization: their classes are re-sorted on the next search. */
  touched(...hosts: number[]): void {
    for (const h of hosts) {
      const c = this.classOfHost.get(h);
      if (c) c.dirty = true;
    }
  }

  /**
   * The best legal move now with net ≥ floor, or null. Deterministic: ties go to the lower
   * server. softOnly: only moves that remove a soft server-group violation (the aggregate is
   * balanced enough, but soft groups may still pay for a move).
   */
  best(floor: number, softOnly = false): BestMove | null {
    const { state } = this.ctx;
    const D = state.D;
    const n = this.n;
    if (n === 0) return null;
    for (const c of this.classes) if (c.dirty) this.refresh(c);
    const current = state.imbalance(this.agg);
    let best: BestMove | null = null;
    const offer = (server: number, to: number, net: number, soft: number): void => {
      if (net < floor || (softOnly && soft >= 0)) return;
      if (
        best === null ||
        net > best.net ||
        (net === best.net && (server < best.server || (server === best.server && to < best.to)))
      )
        best = { server, to, net, soft };
    };

    // Pass 1: every server against the ideal point of each class of its zone (one evaluation
    // per class, an upper bound), and on the hosts of its group one by one. The hot loop of the
    // planner: it reads flat arrays only (profiled, docs/benchmarks.md).
    for (const z of this.zones) {
      z.classes.forEach((c, k) => {
        for (let d = 0; d < D; d++) z.ideal[k * D + d] = c.sufMin[d]!;
      });
    }
    const ideals = this.ideals;
    const idealServers = this.idealServers;
    const uniforms = this.uniforms;
    let survivors = 0;
    let evaluations = 0;
    const sums = this.sums;
    const w = this.weights;
    const aggS1 = this.agg * D;
    const at = state.at;
    const moved = state.moved;
    const oneWay = state.oneWay;
    const received = state.received;
    const load = state.load;
    const s1Agg = state.s1;
    const s2Agg = state.s2;
    const srcInv = this.srcInv;
    const candLoad = this.candLoad;
    for (let i = 0; i < this.cand.length; i++) {
      const s = this.cand[i]!;
      if (moved[s] !== 0) continue;
      if (softOnly && !this.inSoftGroup(s)) continue;
      const h = at[s]!;
      // The one-way rule on the source side: a host that received in this plan sends nothing.
      if (oneWay && received[h]! > 0) continue;
      // The aggregate's sums with the server taken off its host (as ClusterState.sumsWithoutServer).
      for (let d = 0; d < D; d++) {
        let s1 = s1Agg[aggS1 + d]!;
        let s2 = s2Agg[aggS1 + d]!;
        const inv = srcInv[h * D + d]!;
        if (inv > 0) {
          const u = load[h * D + d]! * inv;
          const nu = u - candLoad[i * D + d]! * inv;
          s1 += nu - u;
          s2 += nu * nu - u * u;
        }
        sums[d] = s1;
        sums[D + d] = s2;
      }
      const cost = this.candCost[i]!;
      let uniform = 0;
      const group = this.candGroup[i]!;
      if (group >= 0) {
        for (const to of state.groups[group]!.count.keys()) {
          const dest = state.hosts[to]!;
          if (to === h || !this.special(group, to) || !dest.usable || dest.aggregate !== this.agg) continue;
          if (dest.az !== state.hosts[h]!.az) continue;
          const soft = this.groupTerm(s, to);
          if (soft === null || !this.fits(s, to)) continue;
          evaluations++;
          offer(s, to, (current - this.afterAtHost(s, to)) * n - soft - cost, soft);
        }
        const u = this.uniformGroupTerm(s);
        if (u === null || (softOnly && u >= 0)) continue;
        uniform = u;
      }
      // The smallest imbalance over the zone's class ideal points (afterAt, inlined).
      const zone = this.zones[this.candZone[i]!]!;
      const zInv = zone.inv;
      const zIdeal = zone.ideal;
      const nc = zone.classes.length;
      let after = Number.POSITIVE_INFINITY;
      for (let k = 0; k < nc; k++) {
        let total = 0;
        for (let d = 0; d < D; d++) {
          const x = candLoad[i * D + d]! * zInv[k * D + d]!;
          const s1 = sums[d]! + x;
          const s2 = sums[D + d]! + 2 * zIdeal[k * D + d]! * x + x * x;
          const mean = s1 / n;
          total += w[d]! * Math.sqrt(Math.max(0, s2 / n - mean * mean));
        }
        if (total < after) after = total;
      }
      evaluations += nc;
      const ideal = (current - after) * n - uniform - cost;
      if (ideal < floor) continue;
      ideals[survivors] = ideal;
      idealServers[survivors] = s;
      uniforms[survivors] = uniform;
      survivors++;
    }

    // Pass 2: the Pareto fronts, for the servers with the best ideal bounds first (so a strong
    // best move is known early), then for every server whose bound can still beat it. A
    // server's front winner with room is its exact best; without room, its score is a bound.
    const bounds: number[] = [];
    const boundServers: number[] = [];
    const scoreFronts = (i: number): void => {
      const s = idealServers[i]!;
      const sv = state.servers[s]!;
      const from = state.at[s]!;
      const uniform = uniforms[i]!;
      const cost = sv.bar;
      state.sumsWithoutServer(s, this.sums);
      let ub = Number.NEGATIVE_INFINITY;
      let arg = -1;
      for (const c of this.classesByZone.get(state.hosts[from]!.az)!) {
        for (const k of c.front) {
          const net = (current - this.afterAt(sv.load, c.invPhys, c.util, k * D)) * n - uniform - cost;
          if (net > ub) {
            ub = net;
            arg = c.order[k]!;
          }
        }
        evaluations += c.front.length;
      }
      if (ub < floor) return;
      if (arg !== from && !(sv.group >= 0 && this.special(sv.group, arg)) && this.fits(s, arg))
        offer(s, arg, ub, uniform);
      else {
        bounds.push(ub);
        boundServers.push(s);
      }
    };
    const first = topIndices(ideals, survivors, SEED_SERVERS);
    for (const i of first) scoreFronts(i);
    const seeded = new Set(first);
    for (let i = 0; i < survivors; i++) {
      if (seeded.has(i) || (best !== null && ideals[i]! < (best as BestMove).net)) continue;
      scoreFronts(i);
    }

    // Pass 3: servers whose front winner had no room, by falling bound, each searched over its
    // whole zone, until no bound can win.
    const idx = Array.from(bounds.keys()).sort(
      (a, b) => bounds[b]! - bounds[a]! || boundServers[a]! - boundServers[b]!,
    );
    for (const i of idx) {
      if (bounds[i]! < floor || (best !== null && bounds[i]! < (best as BestMove).net)) break;
      const s = boundServers[i]!;
      const sv = state.servers[s]!;
      const from = state.at[s]!;
      const cost = sv.bar;
      const uniform = this.uniformGroupTerm(s)!;
      state.sumsWithoutServer(s, this.sums);
      for (const c of this.classesByZone.get(state.hosts[from]!.az)!) {
        const len = c.hosts.length;
        // With two dimensions a host dominated by a scanned host that had room cannot win.
        let roomMin1 = Number.POSITIVE_INFINITY;
        for (let k = 0; k < len; k++) {
          if (D === 2 && c.util[k * 2 + 1]! >= roomMin1) continue;
          // Bound for this host and every later one: its dimension-0 utilization, the others' suffix minima.
          this.point[0] = c.util[k * D]!;
          for (let d = 1; d < D; d++) this.point[d] = c.sufMin[k * D + d]!;
          const bound = (current - this.afterAt(sv.load, c.invPhys, this.point, 0)) * n - uniform - cost;
          evaluations++;
          if (bound < floor || (best !== null && bound < (best as BestMove).net)) break;
          const to = c.order[k]!;
          if (to === from || (sv.group >= 0 && this.special(sv.group, to)) || !this.fits(s, to)) continue;
          if (D === 2) roomMin1 = c.util[k * 2 + 1]!;
          evaluations++;
          offer(
            s,
            to,
            (current - this.afterAt(sv.load, c.invPhys, c.util, k * D)) * n - uniform - cost,
            uniform,
          );
        }
      }
    }
    this.meter.evaluations += evaluations;
    const chosen = best as BestMove | null;
    if (chosen !== null && firstRejection(state, chosen.server, chosen.to) !== null) {
      // The indexed checks mirror the constraints; a disagreement is a planner bug, never a plan.
      throw new Error(
        `best-move search chose an illegal move (server ${chosen.server} to host ${chosen.to})`,
      );
    }
    return chosen;
  }

  private refresh(c: HostClass): void {
    const { state } = this.ctx;
    const D = state.D;
    const len = c.hosts.length;
    if (c.order.length !== len) {
      c.order = new Int32Array(len);
      c.util = new Float64Array(len * D);
      c.sufMin = new Float64Array(len * D);
    }
    const u = new Float64Array(state.hosts.length > 0 ? len * D : 0);
    c.hosts.forEach((h, i) => {
      for (let d = 0; d < D; d++) u[i * D + d] = state.util(h, d);
    });
    const perm = Array.from(c.hosts.keys()).sort((a, b) => {
      for (let d = 0; d < D; d++) {
        const x = u[a * D + d]! - u[b * D + d]!;
        if (x !== 0) return x;
      }
      return c.hosts[a]! - c.hosts[b]!;
    });
    perm.forEach((i, k) => {
      c.order[k] = c.hosts[i]!;
      for (let d = 0; d < D; d++) c.util[k * D + d] = u[i * D + d]!;
    });
    for (let d = 0; d < D; d++) {
      let m = Number.POSITIVE_INFINITY;
      for (let k = len - 1; k >= 0; k--) {
        m = Math.min(m, c.util[k * D + d]!);
        c.sufMin[k * D + d] = m;
      }
    }
    // Non-dominated hosts: sorted by dimension 0, a host is kept when no kept one is at most
    // as loaded in every other dimension.
    c.front = [];
    for (let k = 0; k < len; k++) {
      let dominated = false;
      for (const j of c.front) {
        let all = true;
        for (let d = 1; d < D && all; d++) if (c.util[j * D + d]! > c.util[k * D + d]!) all = false;
        if (all) {
          dominated = true;
          break;
        }
      }
      if (!dominated) c.front.push(k);
    }
    c.dirty = false;
  }

  /** Placement room on all three resource classes (the capacity constraint, same tolerance). */
  private fits(server: number, to: number): boolean {
    const { state } = this.ctx;
    // The one-way rule (constraints/one-way.ts) on the destination side, checked with room:
    // a host that sent in this plan is as closed to arrivals as a full one.
    if (state.oneWay && state.sent[to]! > 0) return false;
    const a = state.servers[server]!.alloc;
    const cap = state.hosts[to]!.cap;
    for (let r = 0; r < 3; r++) if (a[r]! > cap[r]! - state.used[to * 3 + r]! + 1e-9) return false;
    return true;
  }

  /**
   * The group term of a move to a host where the server's group has no member: the same for
   * every such host. null when a hard group forbids every such host.
   */
  private uniformGroupTerm(server: number): number | null {
    const { state } = this.ctx;
    const g = state.servers[server]!.group;
    if (g < 0) return 0;
    const group = state.groups[g]!;
    const delta = groupViolationDelta(state, group, state.at[server]!, -1);
    if (group.policy === 'affinity' || group.policy === 'anti-affinity') return delta > 0 ? null : 0;
    return this.ctx.policy.softGroupPenalty * delta;
  }

  /**
   * Whether the group's term on `to` differs from that on a host without members: such hosts
   * are scored one by one, the others go through the classes. Anti-affinity: only hosts at the
   * per-host limit already; affinity: every host with members.
   */
  private special(group: number, to: number): boolean {
    const g = this.ctx.state.groups[group]!;
    const c = g.count.get(to) ?? 0;
    if (g.policy === 'anti-affinity') return c >= g.maxPerHost;
    if (g.policy === 'soft-anti-affinity') return c >= 1;
    return c > 0;
  }

  private inSoftGroup(server: number): boolean {
    const g = this.ctx.state.servers[server]!.group;
    return g >= 0 && this.ctx.state.groups[g]!.policy.startsWith('soft-');
  }

  /** The group term of a move to `to`; null when a hard group forbids it. */
  private groupTerm(server: number, to: number): number | null {
    const { state } = this.ctx;
    const group = state.groups[state.servers[server]!.group]!;
    const delta = groupViolationDelta(state, group, state.at[server]!, to);
    if (group.policy === 'affinity' || group.policy === 'anti-affinity') return delta > 0 ? null : 0;
    return this.ctx.policy.softGroupPenalty * delta;
  }

  private afterAtHost(server: number, to: number): number {
    const { state } = this.ctx;
    const D = state.D;
    const u = this.point;
    for (let d = 0; d < D; d++) u[d] = state.load[to * D + d]! * this.hostInv[to * D + d]!;
    return this.afterAt(state.servers[server]!.load, this.hostInv, u, 0, to * D);
  }

  /** Imbalance once the server (taken off its host: this.sums) arrives on a host at utilization u[at..]. */
  private afterAt(load: Float64Array, invPhys: Float64Array, u: Float64Array, at: number, invAt = 0): number {
    const w = this.weights;
    const sums = this.sums;
    const D = w.length;
    const n = this.n;
    let total = 0;
    for (let d = 0; d < D; d++) {
      const x = load[d]! * invPhys[invAt + d]!;
      const s1 = sums[d]! + x;
      const s2 = sums[D + d]! + 2 * u[at + d]! * x + x * x;
      const mean = s1 / n;
      total += w[d]! * Math.sqrt(Math.max(0, s2 / n - mean * mean));
    }
    return total;
  }
}

/** Indices of the k largest of the first `count` values, largest first (ties: lower index first). */
function topIndices(values: Float64Array, count: number, k: number): number[] {
  const top: number[] = [];
  for (let i = 0; i < count; i++) {
    const v = values[i]!;
    if (top.length === k && v <= values[top[k - 1]!]!) continue;
    let j = top.length < k ? top.length : k - 1;
    if (top.length < k) top.push(i);
    while (j > 0 && values[top[j - 1]!]! < v) {
      top[j] = top[j - 1]!;
      j--;
    }
    top[j] = i;
  }
  return top;
}
