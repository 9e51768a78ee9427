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

import type { PlanContext } from '../context.js';
import { hostUtil, serverLabel, spreadWords } from '../describe.js';
import { scoreMove } from '../objectives/move-score.js';
import { type BestMove, BestMoveSearch, type WorkMeter } from './best-move.js';
import { bestSwap, IMPROVE_EVALUATIONS_PER_MS, improveSpread, type Swap } from './improve.js';

/** Share of the improvement stage's work for the moves made when swaps may follow. */
const SWAP_RESERVE = 0.5;

/** Below this net gain (objective units) a move is float noise, not an improvement. */
export const MIN_IMPROVEMENT = 1e-9;

export function spreadFloor(minGain: number): number {
  return Math.max(minGain, MIN_IMPROVEMENT);
}

export function spread(ctx: PlanContext, meter: WorkMeter = ctx.work): void {
  const { state, policy } = ctx;
  const floor = spreadFloor(policy.minGain);
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
  greedy(ctx, searches, floor);
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
    const partner = (s: number): string => serverLabel(state, s);
    for (const [step, other, k] of [
      [pick.first, pick.second, 1],
      [pick.second, pick.first, 2],
    ] as const) {
      const score = scoreMove(
        state,
        ctx.policy,
        step.server,
        step.to,
        state.imbalance(state.hosts[state.at[step.server]!]!.aggregate),
      );
      recordSpreadMove(
        ctx,
        { server: step.server, to: step.to, net: score.net, soft: score.softPenalty },
        floor,
        `swap ${k}/2 with ${partner(other.server)}`,
      );
    }
    for (const s of searches) s.invalidate();
    greedy(ctx, searches, floor);
  }
}

/** Best improvement: the exact best move of the aggregate that has the best one, until none pays. */
function greedy(ctx: PlanContext, searches: BestMoveSearch[], floor: number): void {
  const { state, policy } = ctx;
  const done = state.aggregates.map((a) => a.counted.length < 2);
  const cached: (BestMove | null | undefined)[] = state.aggregates.map(() => undefined);
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
    if (pick < 0) return;
    const m = cached[pick]!;
    searches[pick]!.touched(state.at[m.server]!, m.to);
    recordSpreadMove(ctx, m, floor);
    cached[pick] = undefined;
  }
}

/** Records a chosen move with its phase and reason: balance, or a soft group at a price. */
export function recordSpreadMove(ctx: PlanContext, m: BestMove, floor: number, note = ''): void {
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
    return;
  }
  const what = spreadWords(state, m.server, from, m.to);
  const move = ctx.record(m.server, m.to, 'spread', '');
  const softNote =
    m.soft < 0
      ? `; fewer violations of ${state.groups[group]!.policy} group ${state.groups[group]!.name}`
      : '';
  const prefix = note ? `${note}: ` : '';
  move.reason = `${prefix}${what}; imbalance ${before.toFixed(4)} -> ${state.imbalance(agg).toFixed(4)}${softNote}`;
}
