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

/** Hottest and coolest hosts per zone whose servers are tried in swaps, and servers per host. */
const SWAP_HOSTS = 6;
const SWAP_SERVERS = 24;

export interface Swap {
  /** First move (a: its host → b's host), then the second (b → a's former host). */
  first: SpreadStep;
  second: SpreadStep;
  /** Objective decrease of the pair (objective units). */
  net: number;
}

/**
 * The best exchange of two servers between a hot and a cool host of one zone: two moves, in an
 * order where each step is legal. It finds what single moves cannot: when every server is too
 * big to move alone without overshooting, a swap moves the difference of two.
 */
export function bestSwap(ctx: PlanContext, agg: number, floor: number, meter: WorkMeter): Swap | null {
  const { state, policy } = ctx;
  const hosts = state.aggregates[agg]!.counted;
  const n = hosts.length;
  if (n < 2) return null;
  const D = state.D;
  const heat = new Map<number, number>();
  for (const h of hosts) {
    let x = 0;
    for (let d = 0; d < D; d++) {
      const mean = state.s1[agg * D + d]! / n;
      const sd = Math.sqrt(Math.max(0, state.s2[agg * D + d]! / n - mean * mean)) || 1;
      x += (state.dims[d]!.weight * (state.util(h, d) - mean)) / sd;
    }
    heat.set(h, x);
  }
  const byZone = new Map<string, number[]>();
  for (const h of hosts) {
    const list = byZone.get(state.hosts[h]!.az) ?? [];
    list.push(h);
    byZone.set(state.hosts[h]!.az, list);
  }
  const weighed = (s: number): number => {
    const sv = state.servers[s]!;
    const p = state.hosts[state.at[s]!]!.phys;
    let x = 0;
    for (let d = 0; d < D; d++) x += p[d]! > 0 ? (state.dims[d]!.weight * sv.load[d]!) / p[d]! : 0;
    return x;
  };
  const movable = (h: number): number[] =>
    [...state.on[h]!]
      .filter((s) => ctx.movable(s))
      .sort((a, b) => weighed(b) - weighed(a) || a - b)
      .slice(0, SWAP_SERVERS);
  const cost = (s: number): number => state.servers[s]!.bar;
  const current = state.imbalance(agg);
  let best: Swap | null = null;
  for (const zone of [...byZone.keys()].sort()) {
    const list = byZone.get(zone)!.sort((a, b) => heat.get(b)! - heat.get(a)! || a - b);
    const hot = list.slice(0, Math.min(SWAP_HOSTS, Math.ceil(list.length / 2)));
    const cool = list.slice(Math.max(hot.length, list.length - SWAP_HOSTS));
    for (const h1 of hot) {
      const out = movable(h1);
      for (const h2 of cool) {
        const back = movable(h2);
        for (const s1 of out) {
          for (const s2 of back) {
            meter.evaluations++;
            // The pair's balance from the running sums first (only h1 and h2 change); the
            // legality and the exact objective only for a pair that could be the best so far.
            if (!inSoftGroup(ctx, s1) && !inSoftGroup(ctx, s2)) {
              const estimate =
                (current - exchangedImbalance(ctx, agg, s1, h1, s2, h2)) * n - cost(s1) - cost(s2);
              const bar = best === null ? 2 * floor : Math.max(2 * floor, best.net);
              if (estimate + 1e-9 < bar) continue;
            }
            meter.evaluations += SWAP_CHECK_COST;
            // Either order, whichever is legal step by step; the pair is exempt from the
            // one-way rule, as a declared exchange.
            const oneWay = state.oneWay;
            state.oneWay = false;
            let order: [SpreadStep, SpreadStep] | null = null;
            for (const [a, b] of [
              [
                { server: s1, to: h2 },
                { server: s2, to: h1 },
              ],
              [
                { server: s2, to: h1 },
                { server: s1, to: h2 },
              ],
            ] as [SpreadStep, SpreadStep][]) {
              if (firstRejection(state, a.server, a.to) !== null) continue;
              state.apply(a.server, a.to);
              const ok = firstRejection(state, b.server, b.to) === null;
              state.undo(1);
              if (ok) {
                order = [a, b];
                break;
              }
            }
            state.oneWay = oneWay;
            if (order === null) {
              continue;
            }
            const softBefore = softViolationsOf(ctx, [s1, s2]);
            state.apply(order[0].server, order[0].to);
            state.apply(order[1].server, order[1].to);
            const after = state.imbalance(agg);
            const softAfter = softViolationsOf(ctx, [s1, s2]);
            state.undo(2);
            const net =
              (current - after) * n -
              policy.softGroupPenalty * (softAfter - softBefore) -
              cost(s1) -
              cost(s2);
            if (net >= 2 * floor && (best === null || net > best.net))
              best = { first: order[0], second: order[1], net };
          }
        }
      }
    }
  }
  return best;
}

/** Work units of a swap pair checked step by step: two legality checks, four applies or undos. */
const SWAP_CHECK_COST = 12;

function inSoftGroup(ctx: PlanContext, server: number): boolean {
  const g = ctx.state.servers[server]!.group;
  return g >= 0 && ctx.state.groups[g]!.policy.startsWith('soft-');
}

/** Imbalance of the aggregate once s1 (on h1) and s2 (on h2) have changed places: O(dimensions). */
function exchangedImbalance(
  ctx: PlanContext,
  agg: number,
  s1: number,
  h1: number,
  s2: number,
  h2: number,
): number {
  const { state } = ctx;
  const D = state.D;
  const n = state.aggregates[agg]!.counted.length;
  const l1 = state.servers[s1]!.load;
  const l2 = state.servers[s2]!.load;
  let total = 0;
  for (let d = 0; d < D; d++) {
    let a = state.s1[agg * D + d]!;
    let b = state.s2[agg * D + d]!;
    for (const [h, change] of [
      [h1, l2[d]! - l1[d]!],
      [h2, l1[d]! - l2[d]!],
    ] as const) {
      const p = state.hosts[h]!.phys[d]!;
      if (!state.hosts[h]!.usable || p <= 0) continue;
      const u = state.load[h * D + d]! / p;
      const nu = u + change / p;
      a += nu - u;
      b += nu * nu - u * u;
    }
    const mean = a / n;
    total += state.dims[d]!.weight * Math.sqrt(Math.max(0, b / n - mean * mean));
  }
  return total;
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
