// The improvement stage after the spread greedy: a greedy is myopic, so each of its moves is
// put in question. For move i, the plan without it is replayed (every other move still legal
// in order) and the exact best move of its aggregate is inserted at the end; the exchange is
// kept when the aggregate's objective falls and its imbalance does not rise. Passes repeat
// until one changes nothing or the work budget is spent. Before those, a cheaper neighbourhood
// (Reassign): a move's server exchanged for another of its source host and its destination for
// any host of the zone, scored on the finished plan in O(dimensions) and replayed only to
// confirm; on clusters of many small servers the greedy's choice of which server, and where,
// is where most of its loss lies.
//
// Deterministic: the budget counts evaluations (scored moves and replayed moves), never time.

import { groupViolationDelta, groupViolations } from '../constraints/hard-groups.js';
import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import type { ClusterState } from '../state.js';
import { ANNEAL_PROPOSAL_COST, annealAggregate } from './anneal.js';
import type { BestMoveSearch, WorkMeter } from './best-move.js';
import { repartitionDestinations } from './repartition.js';

/**
 * Evaluations per millisecond of planner.timeLimitMs. The benchmark machine (2 cores, Node 20)
 * does 10,000 to 15,000 per millisecond of CPU, so the stage ends far within its limit there
 * and stays within it on a machine ten times slower (docs/policy.md).
 */
export const IMPROVE_EVALUATIONS_PER_MS = 1000;

/**
 * Work units one replayed move counts for: a step checks every constraint and updates the
 * running sums: about 0.5 µs on the benchmark machine, six units of 10,000 to 15,000 per ms.
 */
const REPLAY_STEP_COST = 6;

/** Share of the improvement stage's work that the annealing of move sets may use. */
const ANNEAL_SHARE = 0.5;

export interface SpreadStep {
  server: number;
  to: number;
}

export function improveSpread(
  ctx: PlanContext,
  searches: BestMoveSearch[],
  seq: SpreadStep[],
  base: number,
  floor: number,
  meter: WorkMeter,
  limit: number,
): boolean {
  const { state, policy } = ctx;
  const softGroups = state.aggregates.map(() => [] as number[]);
  for (const g of state.groups) {
    if (!g.policy.startsWith('soft-') || g.members.length === 0) continue;
    softGroups[state.hosts[state.servers[g.members[0]!]!.origin]!.aggregate]!.push(g.index);
  }
  // What the moves must buy together: the sum of their bars (src/policy/threshold.ts).
  const bars = (agg: number): number => {
    let s = 0;
    for (const m of seq)
      if (state.hosts[state.servers[m.server]!.origin]!.aggregate === agg) s += state.servers[m.server]!.bar;
    return s;
  };
  const objective = (agg: number): number => {
    let soft = 0;
    for (const g of softGroups[agg]!) soft += groupViolations(state.groups[g]!);
    const n = Math.max(1, state.aggregates[agg]!.counted.length);
    return state.imbalance(agg) * n + policy.softGroupPenalty * soft + bars(agg);
  };
  const replay = planReplay(state, seq, base, meter);
  const invalidate = (): void => {
    for (const s of searches) s.invalidate();
  };

  let changed = false;
  // First the whole set of each aggregate's moves at once (phases/anneal.ts), with a share of
  // the work; then the cheap neighbourhood, scored on the finished plan without replays: each
  // move's server exchanged for another one of its source host, its destination for any host of
  // the zone; then the exchange of a move for the aggregate's best move, a full search each.
  const aggs = [...new Set(seq.map((m) => state.hosts[state.servers[m.server]!.origin]!.aggregate))].sort(
    (a, b) => a - b,
  );
  const share = Math.floor(
    (ANNEAL_SHARE * Math.max(0, limit - meter.evaluations)) / Math.max(1, aggs.length),
  );
  for (const agg of aggs) {
    if (annealAggregate(ctx, agg, seq, meter, Math.floor(share / ANNEAL_PROPOSAL_COST), objective, replay))
      changed = true;
  }
  if (meter.evaluations < limit && repartitionDestinations(ctx, seq, meter, limit, objective, replay)) {
    changed = true;
    invalidate();
  }
  const reassign = new Reassign(ctx, seq, meter, objective, replay);
  for (let i = 0; meter.evaluations < limit; i = (i + 1) % seq.length) {
    if (reassign.improve(i)) {
      changed = true;
      reassign.sinceChange = 0;
    } else if (++reassign.sinceChange >= seq.length) break;
  }
  for (let improved = true; improved && meter.evaluations < limit; ) {
    improved = false;
    for (let i = 0; i < seq.length && meter.evaluations < limit; i++) {
      const agg = state.hosts[state.at[seq[i]!.server]!]!.aggregate;
      const before = objective(agg);
      const imbalanceBefore = state.imbalance(agg);
      const removed = seq[i]!;
      invalidate();
      if (replay(i)) {
        const best = searches[agg]!.best(floor);
        if (best !== null && !(best.server === removed.server && best.to === removed.to)) {
          state.apply(best.server, best.to);
          seq.splice(i, 1);
          seq.push({ server: best.server, to: best.to });
          if (objective(agg) < before - 1e-9 && state.imbalance(agg) <= imbalanceBefore + 1e-12) {
            improved = true;
            changed = true;
            i--;
            continue;
          }
          seq.pop();
          seq.splice(i, 0, removed);
        }
      }
      invalidate();
      if (!replay(-1)) throw new Error('improvement stage: the kept plan no longer replays');
    }
  }
  invalidate();
  return changed;
}

/**
 * Hosts per zone whose servers are tried in swaps: the hottest and coolest by summed heat, and
 * the hottest and coolest in each dimension; and servers per host, heaviest first.
 */
const SWAP_HOSTS = 6;
const SWAP_SERVERS = 24;

export interface Swap {
  /** First move (a: its host → b's host), then the second (b → a's former host). */
  first: SpreadStep;
  second: SpreadStep;
  /** Objective decrease of the pair (objective units). */
  net: number;
}

/** A host of the exchange search, as its inner loop reads it. */
interface SwapHost {
  /** Utilization and 1 / physical capacity per dimension (0 for a host not counted). */
  u: Float64Array;
  inv: Float64Array;
  /** Its movable servers tried, heaviest first, with their loads (server i at i × D), bars and soft-group flags. */
  servers: number[];
  loads: Float64Array;
  bars: Float64Array;
  soft: Uint8Array;
}

/**
 * The best exchange of two servers between a hot and a cool host of one zone (swapHostPairs):
 * two moves, in an order where each step is legal. It finds what single moves cannot: when
 * every server is too big to move alone without overshooting, a swap moves the difference of
 * two; and a host that has taken (or given) may still trade.
 */
export function bestSwap(ctx: PlanContext, agg: number, floor: number, meter: WorkMeter): Swap | null {
  const { state, policy } = ctx;
  const hosts = state.aggregates[agg]!.counted;
  const n = hosts.length;
  if (n < 2) return null;
  const D = state.D;
  const S1 = new Float64Array(D);
  const S2 = new Float64Array(D);
  const w = new Float64Array(D);
  for (let d = 0; d < D; d++) {
    S1[d] = state.s1[agg * D + d]!;
    S2[d] = state.s2[agg * D + d]!;
    w[d] = state.dims[d]!.weight;
  }
  const pairs = swapHostPairs(ctx, agg);
  // Per host of a pair: its utilization and 1 / physical capacity per dimension, and its
  // movable servers (heaviest first) with their loads laid out flat.
  const info = new Map<number, SwapHost>();
  const weighed = (s: number): number => {
    const sv = state.servers[s]!;
    const p = state.hosts[state.at[s]!]!.phys;
    let x = 0;
    for (let d = 0; d < D; d++) x += p[d]! > 0 ? (state.dims[d]!.weight * sv.load[d]!) / p[d]! : 0;
    return x;
  };
  const hostInfo = (h: number): SwapHost => {
    let r = info.get(h);
    if (r !== undefined) return r;
    const rec = state.hosts[h]!;
    const u = new Float64Array(D);
    const inv = new Float64Array(D);
    for (let d = 0; d < D; d++) {
      const p = rec.phys[d]!;
      if (rec.usable && p > 0) {
        inv[d] = 1 / p;
        u[d] = state.load[h * D + d]! / p;
      }
    }
    const keyed: { s: number; k: number }[] = [];
    for (const s of state.on[h]!) if (ctx.movable(s)) keyed.push({ s, k: weighed(s) });
    keyed.sort((a, b) => b.k - a.k || a.s - b.s);
    const servers = keyed.slice(0, SWAP_SERVERS).map((x) => x.s);
    const loads = new Float64Array(servers.length * D);
    const bars = new Float64Array(servers.length);
    const soft = new Uint8Array(servers.length);
    servers.forEach((s, i) => {
      const sv = state.servers[s]!;
      for (let d = 0; d < D; d++) loads[i * D + d] = sv.load[d]!;
      bars[i] = sv.bar;
      soft[i] = inSoftGroup(ctx, s) ? 1 : 0;
    });
    r = { u, inv, servers, loads, bars, soft };
    info.set(h, r);
    return r;
  };
  const current = state.imbalance(agg);
  const bar0 = 2 * floor;
  // Every pair's net from the running sums in O(dimensions) (only its two hosts change; the
  // soft-group term from the two groups' counts); those that pay are then checked step by step,
  // best first, until the next one cannot beat the best legal one found. Checking only the
  // pairs that could be the best so far, in scan order, checked thousands per search.
  const keys: number[] = [];
  const s1s: number[] = [];
  const s2s: number[] = [];
  for (const [h1, h2] of pairs) {
    const a = hostInfo(h1);
    const b = hostInfo(h2);
    const na = a.servers.length;
    const nb = b.servers.length;
    meter.evaluations += na * nb;
    for (let i = 0; i < na; i++) {
      for (let j = 0; j < nb; j++) {
        let total = 0;
        for (let d = 0; d < D; d++) {
          const c = b.loads[j * D + d]! - a.loads[i * D + d]!;
          const d1 = c * a.inv[d]!;
          const d2 = -c * b.inv[d]!;
          const x = S1[d]! + d1 + d2;
          const y = S2[d]! + d1 * (2 * a.u[d]! + d1) + d2 * (2 * b.u[d]! + d2);
          const mean = x / n;
          total += w[d]! * Math.sqrt(Math.max(0, y / n - mean * mean));
        }
        let key = (current - total) * n - a.bars[i]! - b.bars[j]!;
        if (a.soft[i]! + b.soft[j]! > 0)
          key -= policy.softGroupPenalty * exchangedSoftDelta(ctx, a.servers[i]!, h1, b.servers[j]!, h2);
        if (key + 1e-9 < bar0) continue;
        keys.push(key);
        s1s.push(a.servers[i]!);
        s2s.push(b.servers[j]!);
      }
    }
  }
  const order = keys.map((_, i) => i).sort((x, y) => keys[y]! - keys[x]! || x - y);
  let best: Swap | null = null;
  for (const k of order) {
    if (best !== null && keys[k]! + 1e-9 < best.net) break;
    const s1 = s1s[k]!;
    const s2 = s2s[k]!;
    const h1 = state.at[s1]!;
    const h2 = state.at[s2]!;
    meter.evaluations += SWAP_CHECK_COST;
    // Either order, whichever is legal step by step; the pair is exempt from the one-way rule,
    // as a declared exchange.
    const oneWay = state.oneWay;
    state.oneWay = false;
    let legal: [SpreadStep, SpreadStep] | null = null;
    for (const [x, y] of [
      [
        { server: s1, to: h2 },
        { server: s2, to: h1 },
      ],
      [
        { server: s2, to: h1 },
        { server: s1, to: h2 },
      ],
    ] as [SpreadStep, SpreadStep][]) {
      if (firstRejection(state, x.server, x.to) !== null) continue;
      state.apply(x.server, x.to);
      const ok = firstRejection(state, y.server, y.to) === null;
      state.undo(1);
      if (ok) {
        legal = [x, y];
        break;
      }
    }
    state.oneWay = oneWay;
    if (legal === null) continue;
    const softBefore = softViolationsOf(ctx, [s1, s2]);
    state.apply(legal[0].server, legal[0].to);
    state.apply(legal[1].server, legal[1].to);
    const after = state.imbalance(agg);
    const softAfter = softViolationsOf(ctx, [s1, s2]);
    state.undo(2);
    const net =
      (current - after) * n -
      policy.softGroupPenalty * (softAfter - softBefore) -
      state.servers[s1]!.bar -
      state.servers[s2]!.bar;
    if (net >= bar0 && (best === null || net > best.net)) best = { first: legal[0], second: legal[1], net };
  }
  return best;
}

/**
 * The host pairs whose servers are tried in exchanges, per zone: the hottest hosts with the
 * coolest by summed heat (weighted standardized utilizations); then, per dimension, the hottest
 * with the coolest in that dimension, for a pair with a host the summed heat left out. A host
 * hot in cpu and cool in memory sums to little heat, yet an exchange with a host the other way
 * round (a cpu-heavy server for a memory-heavy one) is what balances both, and one-way single
 * moves cannot. Pairs of two hosts the summed heat already chose stay as it pairs them: on a
 * small zone, where it chooses every host, pairing them per dimension as well made the swaps
 * greedier and the plans worse (the Bitbrains sample, docs/benchmarks.md).
 */
function swapHostPairs(ctx: PlanContext, agg: number): [number, number][] {
  const { state } = ctx;
  const hosts = state.aggregates[agg]!.counted;
  const n = hosts.length;
  const D = state.D;
  const z = new Float64Array(state.hosts.length * D);
  for (const h of hosts) {
    for (let d = 0; d < D; d++) {
      const mean = state.s1[agg * D + d]! / n;
      const sd = Math.sqrt(Math.max(0, state.s2[agg * D + d]! / n - mean * mean)) || 1;
      z[h * D + d] = (state.util(h, d) - mean) / sd;
    }
  }
  const byZone = new Map<string, number[]>();
  for (const h of hosts) {
    const list = byZone.get(state.hosts[h]!.az) ?? [];
    list.push(h);
    byZone.set(state.hosts[h]!.az, list);
  }
  const pairs: [number, number][] = [];
  const seen = new Set<number>();
  const byHeat = new Set<number>();
  const extremes = (list: number[], score: (h: number) => number, summed: boolean): void => {
    const sorted = [...list].sort((a, b) => score(b) - score(a) || a - b);
    const hot = sorted.slice(0, Math.min(SWAP_HOSTS, Math.ceil(sorted.length / 2)));
    const cool = sorted.slice(Math.max(hot.length, sorted.length - SWAP_HOSTS));
    for (const h1 of hot) {
      for (const h2 of cool) {
        if (!summed && byHeat.has(h1) && byHeat.has(h2)) continue;
        // An exchange is the same whichever host is named first.
        const key = Math.min(h1, h2) * state.hosts.length + Math.max(h1, h2);
        if (seen.has(key)) continue;
        seen.add(key);
        pairs.push([h1, h2]);
      }
    }
    if (summed) for (const h of [...hot, ...cool]) byHeat.add(h);
  };
  for (const zone of [...byZone.keys()].sort()) {
    const list = byZone.get(zone)!;
    extremes(
      list,
      (h) => {
        let x = 0;
        for (let d = 0; d < D; d++) x += state.dims[d]!.weight * z[h * D + d]!;
        return x;
      },
      true,
    );
    for (let d = 0; d < D; d++) {
      if (state.dims[d]!.weight > 0) extremes(list, (h) => z[h * D + d]!, false);
    }
  }
  return pairs;
}

/** Work units of a swap pair checked step by step: two legality checks, four applies or undos. */
const SWAP_CHECK_COST = 12;

function inSoftGroup(ctx: PlanContext, server: number): boolean {
  const g = ctx.state.servers[server]!.group;
  return g >= 0 && ctx.state.groups[g]!.policy.startsWith('soft-');
}

/**
 * Change in soft-group violations when s1 (on h1) and s2 (on h2) trade hosts. Two members of one
 * group trading hosts leave its count per host as it was; members of two groups move each
 * within their own group.
 */
function exchangedSoftDelta(ctx: PlanContext, s1: number, h1: number, s2: number, h2: number): number {
  const { state } = ctx;
  const g1 = state.servers[s1]!.group;
  const g2 = state.servers[s2]!.group;
  if (g1 === g2) return 0;
  let delta = 0;
  if (g1 >= 0 && state.groups[g1]!.policy.startsWith('soft-'))
    delta += groupViolationDelta(state, state.groups[g1]!, h1, h2);
  if (g2 >= 0 && state.groups[g2]!.policy.startsWith('soft-'))
    delta += groupViolationDelta(state, state.groups[g2]!, h2, h1);
  return delta;
}

/** Soft-group violations of the groups of these servers (each group once). */
function softViolationsOf(ctx: PlanContext, servers: number[]): number {
  const { state } = ctx;
  const seen = new Set<number>();
  let v = 0;
  for (const s of servers) {
    const g = state.servers[s]!.group;
    if (g < 0 || seen.has(g) || !state.groups[g]!.policy.startsWith('soft-')) continue;
    seen.add(g);
    v += groupViolations(state.groups[g]!);
  }
  return v;
}

/** Work units (docs/policy.md) one scored candidate counts for: its CPU next to a best-move evaluation. */
const REASSIGN_EVALUATION_COST = 4;

/** Candidates confirmed by a replay per move, best estimate first; the rest wait for the next pass. */
const REASSIGN_TRIES = 3;

/**
 * Move i of the plan (server a from its source A to B) replaced by server b (a itself, or a
 * server that stays on A in the plan) from A to any host C of the zone. Scored on the finished
 * plan: only A, B and C change, so the imbalance after is O(dimensions) from the running sums.
 * The best candidates are confirmed by replaying the plan with the change (every step legal,
 * objective lower, imbalance not higher); the first confirmed is kept in place i.
 */
class Reassign {
  sinceChange = 0;
  private readonly zoneHosts = new Map<string, number[]>();
  /** 1 / physical capacity per host and dimension, 0 for hosts not counted in an imbalance. */
  private readonly inv: Float64Array;
  private readonly hostsOf = new Int32Array(3);
  private readonly changes = new Float64Array(3);

  constructor(
    private readonly ctx: PlanContext,
    private readonly seq: SpreadStep[],
    private readonly meter: WorkMeter,
    private readonly objective: (agg: number) => number,
    private readonly replay: (skip: number) => boolean,
  ) {
    const { state } = ctx;
    this.inv = new Float64Array(state.hosts.length * state.D);
    for (const a of state.aggregates) {
      for (const h of a.counted) {
        for (let d = 0; d < state.D; d++) {
          const p = state.hosts[h]!.phys[d]!;
          this.inv[h * state.D + d] = p > 0 ? 1 / p : 0;
        }
        const key = `${a.index}\u0000${state.hosts[h]!.az}`;
        const list = this.zoneHosts.get(key) ?? [];
        list.push(h);
        this.zoneHosts.set(key, list);
      }
    }
  }

  improve(i: number): boolean {
    const { state } = this.ctx;
    const m = this.seq[i]!;
    const a = m.server;
    // Spread comes after every other phase and a plan moves a server once: its source is its origin.
    const src = state.servers[a]!.origin;
    const dst = m.to;
    const agg = state.hosts[src]!.aggregate;
    const n = state.aggregates[agg]!.counted.length;
    const hosts = this.zoneHosts.get(`${agg}\u0000${state.hosts[src]!.az}`);
    if (hosts === undefined || n < 2) return false;
    const current = state.imbalance(agg);
    const costA = state.servers[a]!.bar;
    const others = [...state.on[src]!].filter((b) => b !== a && this.ctx.movable(b)).sort((x, y) => x - y);
    const candidates: { server: number; to: number; delta: number }[] = [];
    let evaluations = 0;
    for (const b of [a, ...others]) {
      const sb = state.servers[b]!;
      const costDelta = sb.bar - costA;
      const group = sb.group >= 0 ? state.groups[sb.group]! : null;
      const hard = group !== null && (group.policy === 'affinity' || group.policy === 'anti-affinity');
      for (const c of hosts) {
        if (c === src || (b === a && c === dst)) continue;
        if (!this.roomFor(a, b, src, dst, c)) continue;
        if (hard && groupViolationDelta(state, group!, src, c) > 0) continue;
        evaluations++;
        const after = this.imbalanceAfter(agg, a, b, src, dst, c);
        const delta = (after - current) * n + costDelta;
        if (delta < -1e-9) candidates.push({ server: b, to: c, delta });
      }
    }
    this.meter.evaluations += evaluations * REASSIGN_EVALUATION_COST;
    if (candidates.length === 0) return false;
    candidates.sort((x, y) => x.delta - y.delta || x.server - y.server || x.to - y.to);
    const before = this.objective(agg);
    const imbalanceBefore = current;
    for (const c of candidates.slice(0, REASSIGN_TRIES)) {
      this.seq[i] = { server: c.server, to: c.to };
      if (
        this.replay(-1) &&
        this.objective(agg) < before - 1e-9 &&
        state.imbalance(agg) <= imbalanceBefore + 1e-12
      )
        return true;
      this.seq[i] = m;
      if (!this.replay(-1)) throw new Error('improvement stage: the kept plan no longer replays');
    }
    return false;
  }

  /**
   * Placement room in the finished plan: C takes b (after a left, when C is a's destination)
   * and A takes a back (after b left). The replay checks every step; this only saves replays.
   */
  private roomFor(a: number, b: number, src: number, dst: number, c: number): boolean {
    const { state } = this.ctx;
    const sa = state.servers[a]!.alloc;
    const sb = state.servers[b]!.alloc;
    for (let r = 0; r < 3; r++) {
      const freeC = state.hosts[c]!.cap[r]! - state.used[c * 3 + r]! + (c === dst ? sa[r]! : 0);
      if (b !== a && sb[r]! > freeC + 1e-9) return false;
      if (b === a && sa[r]! > freeC + 1e-9) return false;
      if (b !== a) {
        const freeA = state.hosts[src]!.cap[r]! - state.used[src * 3 + r]! + sb[r]!;
        if (sa[r]! > freeA + 1e-9) return false;
      }
    }
    return true;
  }

  /** Imbalance of the aggregate once a goes back from dst to src and b goes from src to c. */
  private imbalanceAfter(agg: number, a: number, b: number, src: number, dst: number, c: number): number {
    const { state } = this.ctx;
    const D = state.D;
    const la = state.servers[a]!.load;
    const lb = state.servers[b]!.load;
    const n = state.aggregates[agg]!.counted.length;
    const hosts = this.hostsOf;
    const changes = this.changes;
    // Load changes per host: dst loses a (gains b when c is dst), src gains a and loses b, c gains b.
    hosts[0] = dst;
    hosts[1] = src;
    hosts[2] = c;
    let total = 0;
    for (let d = 0; d < D; d++) {
      let s1 = state.s1[agg * D + d]!;
      let s2 = state.s2[agg * D + d]!;
      changes[0] = c === dst ? lb[d]! - la[d]! : -la[d]!;
      changes[1] = b !== a ? la[d]! - lb[d]! : 0;
      changes[2] = c !== dst ? lb[d]! : 0;
      for (let k = 0; k < 3; k++) {
        const h = hosts[k]!;
        const inv = this.inv[h * D + d]!;
        if (changes[k] === 0 || inv === 0) continue;
        const u = state.load[h * D + d]! * inv;
        const nu = u + changes[k]! * inv;
        s1 += nu - u;
        s2 += nu * nu - u * u;
      }
      const mean = s1 / n;
      total += state.dims[d]!.weight * Math.sqrt(Math.max(0, s2 / n - mean * mean));
    }
    return total;
  }
}

/**
 * The stage's `replay`: back to the state with `base` moves applied (the one before spread),
 * then every step of `seq` but `skip` (-1: all), each checked; false at the first that is no
 * longer legal. Each call is charged to the meter.
 */
export function planReplay(
  state: ClusterState,
  seq: readonly SpreadStep[],
  base: number,
  meter: WorkMeter,
): (skip: number) => boolean {
  return (skip) => {
    state.undo(state.applied.length - base);
    meter.evaluations += seq.length * REPLAY_STEP_COST;
    for (let j = 0; j < seq.length; j++) {
      if (j === skip) continue;
      const m = seq[j]!;
      if (state.moved[m.server] !== 0 || firstRejection(state, m.server, m.to) !== null) return false;
      state.apply(m.server, m.to);
    }
    return true;
  };
}
