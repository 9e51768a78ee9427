// Large-neighbourhood stage of the spread improvement: the aggregate's whole set of spread moves
// re-optimised at once, by simulated annealing over final placements with at most as many
// moved servers as the plan has. Exchanges of one move at a time (improve.ts) stop in a local
// optimum; on clusters of many small servers the best set of k moves differs from the greedy's
// in many moves together (which server of a hot host, to which cool host, so that every
// dimension evens out), which only a search that may pass through worse sets finds.
//
// Deterministic: the generator is seeded with a constant, and the work is counted in
// proposals, never time. The result is kept only when its moves can be put in an order where
// every step is legal (the replay checks every constraint), the aggregate's objective falls and
// its imbalance does not rise.

import { createRng } from '../../util/rng.js';
import { groupViolationDelta } from '../constraints/hard-groups.js';
import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import type { GroupRec } from '../state.js';
import type { WorkMeter } from './best-move.js';
import type { SpreadStep } from './improve.js';

/** Starting temperature as a share of the objective, and the factor it cools by over the run. */
const START_TEMPERATURE = 1e-4;
const COOLING = 1e-4;
const SEED = 0x5eed;
/**
 * Work units (docs/policy.md) one proposal counts for: it costs about as much CPU as this many
 * scored moves of the best-move search (measured on the benchmark machine).
 */
export const ANNEAL_PROPOSAL_COST = 12;
/** Proposals per move of the plan at most (the benchmark's plans of 200 moves use about 400). */
const PROPOSALS_PER_MOVE = 500;

export function annealAggregate(
  ctx: PlanContext,
  agg: number,
  seq: SpreadStep[],
  meter: WorkMeter,
  proposals: number,
  objective: (agg: number) => number,
  replay: (skip: number) => boolean,
): boolean {
  const { state, policy } = ctx;
  const D = state.D;
  const counted = state.aggregates[agg]!.counted;
  const n = counted.length;
  const own = seq.filter((m) => state.hosts[state.servers[m.server]!.origin]!.aggregate === agg);
  const K = own.length;
  // Small plans need fewer proposals: the search space grows with the moves to place.
  proposals = Math.min(proposals, PROPOSALS_PER_MOVE * K);
  if (n < 2 || K === 0 || proposals <= 0) return false;

  // Candidates: servers of the aggregate that the plan does not move in another phase and that
  // may move; hard affinity members move as whole groups only (repair). Soft groups are priced
  // in the objective as everywhere (softGroupPenalty per violation), anti-affinity is checked.
  const inSeq = new Set(own.map((m) => m.server));
  const cands: number[] = [];
  for (const h of state.aggregates[agg]!.hosts) {
    for (const s of state.on[h]!) {
      const sv = state.servers[s]!;
      // Only servers whose source counts (a server left on a disabled host is the evacuation's).
      if (sv.immovable !== null || !state.hosts[sv.origin]!.usable) continue;
      if (state.moved[s] !== 0 && !inSeq.has(s)) continue;
      if (sv.group >= 0 && state.groups[sv.group]!.policy === 'affinity') continue;
      cands.push(s);
    }
  }
  // Spread moves of servers the search leaves alone stay as they are.
  const isCand = new Set(cands);
  const fixed = own.filter((m) => !isCand.has(m.server));
  cands.sort((a, b) => a - b);
  if (cands.length === 0) return false;

  const hostsByZone = new Map<string, number[]>();
  for (const h of counted) {
    const list = hostsByZone.get(state.hosts[h]!.az) ?? [];
    list.push(h);
    hostsByZone.set(state.hosts[h]!.az, list);
  }
  const H = state.hosts.length;
  const util = new Float64Array(H * D);
  const used = Float64Array.from(state.used);
  const inv = new Float64Array(H * D);
  for (const h of counted) {
    for (let d = 0; d < D; d++) {
      const p = state.hosts[h]!.phys[d]!;
      inv[h * D + d] = p > 0 ? 1 / p : 0;
      util[h * D + d] = state.load[h * D + d]! * inv[h * D + d]!;
    }
  }
  const s1 = Float64Array.from({ length: D }, (_, d) => state.s1[agg * D + d]!);
  const s2 = Float64Array.from({ length: D }, (_, d) => state.s2[agg * D + d]!);
  const w = Float64Array.from(state.dims, (d) => d.weight);
  const place = Int32Array.from(state.at);
  const home = Int32Array.from(state.servers, (sv) => sv.origin);
  // Group counts mirrored for the anti-affinity check and the soft-group price on final placements.
  const groupView = new Map<number, GroupRec>();
  for (const s of cands) {
    const g = state.servers[s]!.group;
    if (g >= 0 && !groupView.has(g))
      groupView.set(g, { ...state.groups[g]!, count: new Map(state.groups[g]!.count) });
  }
  const cost = (s: number): number => state.servers[s]!.bar;

  const balance = (): number => {
    let t = 0;
    for (let d = 0; d < D; d++) {
      const mean = s1[d]! / n;
      t += w[d]! * Math.sqrt(Math.max(0, s2[d]! / n - mean * mean));
    }
    return t * n;
  };
  const relocate = (s: number, to: number): void => {
    const from = place[s]!;
    const sv = state.servers[s]!;
    for (let d = 0; d < D; d++) {
      const xf = inv[from * D + d]!;
      if (xf !== 0) {
        const u = util[from * D + d]!;
        const nu = u - sv.load[d]! * xf;
        util[from * D + d] = nu;
        s1[d]! += nu - u;
        s2[d]! += nu * nu - u * u;
      }
      const xt = inv[to * D + d]!;
      if (xt !== 0) {
        const u = util[to * D + d]!;
        const nu = u + sv.load[d]! * xt;
        util[to * D + d] = nu;
        s1[d]! += nu - u;
        s2[d]! += nu * nu - u * u;
      }
    }
    for (let r = 0; r < 3; r++) {
      used[from * 3 + r]! -= sv.alloc[r]!;
      used[to * 3 + r]! += sv.alloc[r]!;
    }
    const counts = sv.group >= 0 ? groupView.get(sv.group)?.count : undefined;
    if (counts !== undefined) {
      const c = (counts.get(from) ?? 1) - 1;
      if (c === 0) counts.delete(from);
      else counts.set(from, c);
      counts.set(to, (counts.get(to) ?? 0) + 1);
    }
    place[s] = to;
  };
  const allowed = (s: number, to: number): boolean => {
    const from = place[s]!;
    if (to === from) return false;
    const sv = state.servers[s]!;
    const cap = state.hosts[to]!.cap;
    for (let r = 0; r < 3; r++) if (sv.alloc[r]! > cap[r]! - used[to * 3 + r]! + 1e-9) return false;
    const g = sv.group >= 0 ? groupView.get(sv.group) : undefined;
    if (g !== undefined && g.policy === 'anti-affinity' && groupViolationDelta(state, g, from, to) > 0)
      return false;
    return true;
  };
  /** Soft-group price of a relocation, before it is made. */
  const softPrice = (s: number, to: number): number => {
    const sv = state.servers[s]!;
    const g = sv.group >= 0 ? groupView.get(sv.group) : undefined;
    if (g === undefined || !g.policy.startsWith('soft-')) return 0;
    return policy.softGroupPenalty * groupViolationDelta(state, g, place[s]!, to);
  };

  const moved = new Set<number>(cands.filter((s) => place[s] !== home[s]));
  let movedList = [...moved];
  // Migration cost and soft-group price, relative to the plan as it stands (differences only matter).
  let extra = 0;
  for (const s of moved) extra += cost(s);
  let current = balance() + extra;
  const start = current;
  let best = current;
  // Relocations accepted since the best placement so far: taken back at the end to return to it.
  const journalServer: number[] = [];
  const journalHost: number[] = [];
  const limitK = K - fixed.length;
  const rng = createRng(SEED + agg);
  const byOrigin: number[][] = state.hosts.map(() => []);
  for (const s of cands) byOrigin[home[s]!]!.push(s);
  // The zone's hosts for each candidate, by reference (one list per zone).
  const none: number[] = [];
  const zoneOfServer: number[][] = state.servers.map(() => none);
  for (const s of cands) zoneOfServer[s] = hostsByZone.get(state.hosts[home[s]!]!.az) ?? none;
  const zoneOf = (s: number): number[] => zoneOfServer[s]!;
  const isMoved = new Uint8Array(state.servers.length);
  for (const s of moved) isMoved[s] = 1;
  // Relocations of the current proposal (server, host it came from), to take it back.
  const undoServer = new Int32Array(2);
  const undoHost = new Int32Array(2);
  let undoCount = 0;
  let soft = 0;
  const tryMove = (s: number, to: number): boolean => {
    if (!allowed(s, to)) return false;
    soft += softPrice(s, to);
    undoServer[undoCount] = s;
    undoHost[undoCount] = place[s]!;
    undoCount++;
    relocate(s, to);
    return true;
  };
  const takeBack = (): void => {
    for (let k = undoCount - 1; k >= 0; k--) relocate(undoServer[k]!, undoHost[k]!);
  };
  const pickIn = (list: readonly number[]): number => list[Math.floor(rng.next() * list.length)]!;
  let temperature = START_TEMPERATURE * Math.max(current, 1e-12);
  const cooling = COOLING ** (1 / proposals);
  for (let it = 0; it < proposals; it++, temperature *= cooling) {
    if (it % 1024 === 0) movedList = [...moved].sort((a, b) => a - b);
    undoCount = 0;
    soft = 0;
    const r = rng.next();
    if (moved.size < limitK && r < 0.4) {
      const s = pickIn(cands);
      const zone = zoneOf(s);
      if (place[s] !== home[s] || zone.length === 0 || !tryMove(s, pickIn(zone))) continue;
    } else if (movedList.length > 0 && r < 0.7) {
      const s = pickIn(movedList);
      const zone = zoneOf(s);
      if (place[s] === home[s] || zone.length === 0) continue;
      if (!tryMove(s, rng.next() < 0.2 ? home[s]! : pickIn(zone))) continue;
    } else if (movedList.length > 0) {
      // One moved server back, another (mostly from the same host) in its place.
      const a = pickIn(movedList);
      if (place[a] === home[a]) continue;
      const dest = place[a]!;
      const b = rng.next() < 0.7 ? pickIn(byOrigin[home[a]!]!) : pickIn(cands);
      const zone = zoneOf(b);
      if (b === a || place[b] !== home[b] || zone.length === 0) continue;
      if (!tryMove(a, home[a]!)) continue;
      if (!tryMove(b, rng.next() < 0.5 ? dest : pickIn(zone))) {
        takeBack();
        continue;
      }
    } else continue;
    let delta = soft;
    let count = moved.size;
    for (let k = 0; k < undoCount; k++) {
      const s = undoServer[k]!;
      const now = place[s] !== home[s];
      if ((isMoved[s] === 1) !== now) {
        delta += now ? cost(s) : -cost(s);
        count += now ? 1 : -1;
      }
    }
    const next = balance() + extra + delta;
    if (count <= limitK && (next <= current || rng.next() < Math.exp((current - next) / temperature))) {
      current = next;
      extra += delta;
      for (let k = 0; k < undoCount; k++) {
        const s = undoServer[k]!;
        if (place[s] !== home[s]) {
          moved.add(s);
          isMoved[s] = 1;
        } else {
          moved.delete(s);
          isMoved[s] = 0;
        }
        journalServer.push(s);
        journalHost.push(undoHost[k]!);
      }
      if (current < best - 1e-9) {
        best = current;
        journalServer.length = 0;
        journalHost.length = 0;
      }
    } else takeBack();
  }
  meter.evaluations += proposals * ANNEAL_PROPOSAL_COST;
  if (best >= start - 1e-9) return false;
  for (let k = journalServer.length - 1; k >= 0; k--) relocate(journalServer[k]!, journalHost[k]!);
  const bestPlacement = new Map<number, number>();
  for (const s of cands) if (place[s] !== home[s]) bestPlacement.set(s, place[s]!);

  // The new moves in an order where each step is legal: the plan's moves that stay first, in
  // their order, then the others by server; each round applies every move legal by then.
  const before = objective(agg);
  const imbalanceBefore = state.imbalance(agg);
  const saved = seq.slice();
  const others = seq.filter((m) => state.hosts[state.servers[m.server]!.origin]!.aggregate !== agg);
  const wanted: SpreadStep[] = [...fixed];
  const kept = own.filter((m) => bestPlacement.get(m.server) === m.to);
  wanted.push(...kept);
  for (const [s, to] of [...bestPlacement].sort((a, b) => a[0] - b[0]))
    if (!kept.some((m) => m.server === s)) wanted.push({ server: s, to });
  seq.length = 0;
  seq.push(...others);
  if (!replay(-1)) throw new Error('improvement stage: the kept plan no longer replays');
  let pending = wanted;
  while (pending.length > 0) {
    const left: SpreadStep[] = [];
    for (const m of pending) {
      meter.evaluations++;
      if (state.moved[m.server] === 0 && firstRejection(state, m.server, m.to) === null) {
        state.apply(m.server, m.to);
        seq.push(m);
      } else left.push(m);
    }
    if (left.length === pending.length) break;
    pending = left;
  }
  if (
    pending.length === 0 &&
    objective(agg) < before - 1e-9 &&
    state.imbalance(agg) <= imbalanceBefore + 1e-12
  )
    return true;
  seq.length = 0;
  seq.push(...saved);
  if (!replay(-1)) throw new Error('improvement stage: the kept plan no longer replays');
  return false;
}
