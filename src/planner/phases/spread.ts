// Phase 3 (spread): best improvement on the weighted imbalance. Each step takes the exact best
// legal move (phases/best-move.ts: every movable server × every legal destination, indexed so
// it stays fast). Aggregates share the budget: each step the aggregate with the best move gets
// it; only the aggregate that moved is searched again.
//
// A move that pays only because it removes a soft server-group violation (its balance gain
// alone would not pay) is a soft-group move: it is recorded with the server-group phase
// (affinity; the plan format has no phase of its own for it) marked softGroup, so the loop
// still treats it as optional, and a reason that starts with the group and says what it costs
// in balance.

import type { PlanContext, PlannedMove } from '../context.js';
import { balancingWords, hostUtil } from '../describe.js';
import { scoreMove } from '../objectives/move-score.js';
import { type BestMove, BestMoveSearch, type WorkMeter } from './best-move.js';
import { bestSwap, IMPROVE_EVALUATIONS_PER_MS, improveSpread, type Swap } from './improve.js';

/** Share of the improvement stage's work for the moves made when swaps may follow. */
const SWAP_RESERVE = 0.5;

/** Below this net gain (objective units) a move is float noise, not an improvement. */
export const MIN_IMPROVEMENT = 1e-9;

/**
 * What a move's net (balance × hosts − soft-group penalty − its bar) must exceed. minGain is no
 * longer added here: it is part of each server's bar (src/policy/threshold.ts).
 */
export function spreadFloor(_minGain: number): number {
  return MIN_IMPROVEMENT;
}

export function spread(ctx: PlanContext, meter: WorkMeter = ctx.work): void {
  const { state, policy } = ctx;
  const floor = spreadFloor(policy.minGain);
  // Optional moves go one way: a host gives or takes, never both (constraints/one-way.ts).
  state.oneWay = true;
  try {
    spreadOneWay(ctx, meter, floor);
  } finally {
    state.oneWay = false;
  }
}

function spreadOneWay(ctx: PlanContext, meter: WorkMeter, floor: number): void {
  const { state, policy } = ctx;
  const base = state.applied.length;
  const kept = ctx.moves.map((m) => m.length);
  const searches = state.aggregates.map((a) => new BestMoveSearch(ctx, a.index, meter));
  greedy(ctx, searches, floor);
  const budget = policy.planner.timeLimitMs * IMPROVE_EVALUATIONS_PER_MS;
  if (budget <= 0) return;
  const limit = meter.evaluations + budget;
  const seq = state.applied.slice(base).map((m) => ({ server: m.server, to: m.to }));
  // When the greedy stopped with moves left (no single move pays), swaps may still pay: the
  // re-optimisation of the moves made gets half the work, the swaps keep the rest.
  const improveLimit = ctx.budgetLeft >= 2 ? meter.evaluations + Math.floor(budget * SWAP_RESERVE) : limit;
  if (seq.length === 0 || !improveSpread(ctx, searches, seq, base, floor, meter, improveLimit)) {
    swaps(ctx, searches, floor, meter, limit);
    return;
  }
  // Record the improved moves again, in order, so gains and reasons describe this sequence.
  state.undo(state.applied.length - base);
  ctx.moves.forEach((moves, a) => {
    ctx.budgetLeft += moves.length - kept[a]!;
    moves.length = kept[a]!;
  });
  for (const m of seq) {
    const score = scoreMove(
      state,
      policy,
      m.server,
      m.to,
      state.imbalance(state.hosts[state.at[m.server]!]!.aggregate),
    );
    recordSpreadMove(ctx, { server: m.server, to: m.to, net: score.net, soft: score.softPenalty }, floor);
  }
  // The exchanges may have opened moves that pay: the budget left goes to the greedy again.
  for (const s of searches) s.invalidate();
  greedy(ctx, searches, floor, meter);
  swaps(ctx, searches, floor, meter, limit);
}

/**
 * When no single move pays but budget is left, swaps: two servers exchanged between a hot and
 * a cool host, best pair first, then single moves again, until neither pays or the work
 * budget is spent.
 */
function swaps(
  ctx: PlanContext,
  searches: BestMoveSearch[],
  floor: number,
  meter: WorkMeter,
  limit: number,
): void {
  const { state } = ctx;
  while (ctx.budgetLeft >= 2 && meter.evaluations < limit) {
    let pick: Swap | null = null;
    for (const a of state.aggregates) {
      if (a.counted.length < 2 || state.imbalance(a.index) <= ctx.policy.spread.targetImbalance) continue;
      const s = bestSwap(ctx, a.index, floor, meter);
      if (s !== null && (pick === null || s.net > pick.net)) pick = s;
    }
    if (pick === null) return;
    recordExchange(ctx, pick, floor);
    for (const s of searches) s.invalidate();
    greedy(ctx, searches, floor, meter);
  }
}

/**
 * Records an exchange: two servers trading hosts, declared as a pair. The second half sends back
 * from the host the first one filled, so the one-way rule is lifted for the pair only.
 */
function recordExchange(ctx: PlanContext, pick: Swap, floor: number): void {
  const { state } = ctx;
  const halves: PlannedMove[] = [];
  state.oneWay = false;
  for (const step of [pick.first, pick.second]) {
    const score = scoreMove(
      state,
      ctx.policy,
      step.server,
      step.to,
      state.imbalance(state.hosts[state.at[step.server]!]!.aggregate),
    );
    halves.push(
      recordSpreadMove(
        ctx,
        { server: step.server, to: step.to, net: score.net, soft: score.softPenalty },
        floor,
      ),
    );
  }
  state.oneWay = true;
  halves[0]!.exchangeWith = halves[1]!;
  halves[1]!.exchangeWith = halves[0]!;
}

/** The hosts of an exchange, for telling when a recorded move made it stale. */
function swapHosts(ctx: PlanContext, s: Swap): [number, number] {
  return [ctx.state.at[s.first.server]!, s.first.to];
}

/**
 * Best improvement: the exact best move of the aggregate that has the best one, until none pays.
 * An exchange between two hosts untouched so far competes per move with the single moves: one
 * way (a host gives or takes) a greedy that made a host take can no longer let it give, and an
 * exchange is how a host too full in one dimension and too empty in another trades both ways.
 */
function greedy(ctx: PlanContext, searches: BestMoveSearch[], floor: number, meter?: WorkMeter): void {
  const { state, policy } = ctx;
  const done = state.aggregates.map((a) => a.counted.length < 2);
  const cached: (BestMove | null | undefined)[] = state.aggregates.map(() => undefined);
  const swapCache: (Swap | null | undefined)[] = state.aggregates.map(() => undefined);
  const swapFor = (a: number): Swap | null => {
    if (meter === undefined || ctx.budgetLeft < 2 || done[a]) return null;
    if (swapCache[a] === undefined) swapCache[a] = bestSwap(ctx, a, floor, meter);
    return swapCache[a]!;
  };
  while (ctx.budgetLeft > 0) {
    let pick = -1;
    for (let a = 0; a < searches.length; a++) {
      if (done[a]) continue;
      if (cached[a] === undefined) {
        // At the target, balance moves stop; a soft group may still pay for a move.
        cached[a] = searches[a]!.best(floor, state.imbalance(a) <= policy.spread.targetImbalance);
      }
      const c = cached[a];
      if (c === null || c === undefined) {
        done[a] = true;
        continue;
      }
      if (pick < 0 || c.net > cached[pick]!.net) pick = a;
    }
    // An exchange wins when each of its two moves buys more than the best single move.
    let swapAgg = -1;
    for (let a = 0; a < searches.length; a++) {
      const s = swapFor(a);
      if (s === null) continue;
      const single = pick >= 0 ? cached[pick]!.net : floor;
      const rival = swapAgg >= 0 ? swapCache[swapAgg]!.net : 2 * single;
      if (s.net > rival) swapAgg = a;
    }
    if (swapAgg >= 0) {
      // The cached exchange may be stale: it is searched again before it is taken.
      const fresh = bestSwap(ctx, swapAgg, floor, meter!);
      swapCache[swapAgg] = fresh;
      if (fresh !== null && fresh.net > 2 * (pick >= 0 ? cached[pick]!.net : floor)) {
        const [h1, h2] = swapHosts(ctx, fresh);
        recordExchange(ctx, fresh, floor);
        searches[swapAgg]!.touched(h1, h2);
        cached[swapAgg] = undefined;
        swapCache[swapAgg] = undefined;
        continue;
      }
    }
    if (pick < 0) return;
    const m = cached[pick]!;
    const from = state.at[m.server]!;
    searches[pick]!.touched(from, m.to);
    recordSpreadMove(ctx, m, floor);
    cached[pick] = undefined;
    const s = swapCache[pick];
    if (s) {
      const [h1, h2] = swapHosts(ctx, s);
      if (h1 === from || h1 === m.to || h2 === from || h2 === m.to) swapCache[pick] = undefined;
    }
  }
}

/** Records a chosen move with its phase and reason: balance, or a soft group at a price. */
export function recordSpreadMove(ctx: PlanContext, m: BestMove, floor: number, note = ''): PlannedMove {
  const { state } = ctx;
  const from = state.at[m.server]!;
  const agg = state.hosts[from]!.aggregate;
  const before = state.imbalance(agg);
  const fromText = `${state.hosts[from]!.name} (${hostUtil(state, from)})`;
  const toText = `${state.hosts[m.to]!.name} (${hostUtil(state, m.to)})`;
  const group = state.servers[m.server]!.group;
  // Net without the soft-group credit: what the move buys in balance after its cost.
  const forBalance = m.net + m.soft;
  if (m.soft < 0 && forBalance < floor) {
    const g = state.groups[group]!;
    const move = ctx.record(m.server, m.to, 'affinity', '', true);
    const after = state.imbalance(agg);
    // Four decimals as elsewhere, six when four would show no change.
    const digits = before.toFixed(4) === after.toFixed(4) ? 6 : 4;
    const change = `imbalance ${before.toFixed(digits)} -> ${after.toFixed(digits)}`;
    const price = after > before ? `costs balance: ${change}` : change;
    move.reason = `soft group ${g.name} (${g.policy}): one violation fewer by moving from ${fromText} to ${toText}; ${price}`;
    return move;
  }
  const what = balancingWords(state, m.server, from, m.to, ctx.policy.hotThreshold);
  const move = ctx.record(m.server, m.to, 'spread', '');
  const softNote =
    m.soft < 0
      ? `; fewer violations of ${state.groups[group]!.policy} group ${state.groups[group]!.name}`
      : '';
  const prefix = note ? `${note}: ` : '';
  move.reason = `${prefix}${what}; imbalance ${before.toFixed(4)} -> ${state.imbalance(agg).toFixed(4)}${softNote}`;
  return move;
}
