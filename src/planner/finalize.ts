// From the moves the phases chose (in selection order) to the plan an operator reads (in step
// order). The phases judge each move on the state they chose it in; the operator sees the moves
// in waves, hot hosts relieved first, so a move's gain, its worth against its bar and every word
// of its reason are taken again on the replay in step order. An optional move that no longer
// pays there (gain ≤ 0 for a spread move, worth below its bar, an exchange whose pair does not
// pay) is dropped, the worst first, and the rest scheduled again, until every one pays.

import type { MandatoryKind } from '../model/plan.js';
import type { Policy } from '../policy/types.js';
import { firstRejection } from './constraints/index.js';
import type { PlannedMove } from './context.js';
import { balancingWords, hostUtil, IMBALANCE_MARK, imbalanceChange, restateQuotes } from './describe.js';
import { softGroupPenaltyDelta } from './objectives/move-score.js';
import type { ClusterState } from './state.js';
import { orderByBalancePerGiB } from './step-order.js';
import { NoWaveFits, type ScheduledMove, scheduleWaves, type WaveLimits } from './waves.js';

/**
 * Spread: how many waves before the latest one taken a later move of the priority order may
 * start (waves.ts). Measured on the quality cases (docs/benchmarks.md): 0 adds up to 2.5× the
 * waves on small aggregates; unlimited let exchange halves and weak moves into wave 1 again.
 * 2 kept main's wave counts; 1, once the step order weighs again the units a move changed,
 * keeps a busy source's best moves ahead of weak ones from idle hosts (the Bitbrains month
 * reaches the greedy's 75% level with 58 GiB instead of 77) for about 10% more waves.
 */
const SPREAD_BACKFILL = 1;

/** A move as the plan writes it: scheduled, with what the step-order replay found. */
export interface FinalMove extends ScheduledMove {
  mandatory: MandatoryKind | null;
  /** Imbalance units, on the replay in step order (optional balance moves only). */
  threshold: { worth: number; bar: number } | null;
  exchangeStep: number | null;
  makesRoomStep: number | null;
}

export function mandatoryKind(m: PlannedMove): MandatoryKind | null {
  if (m.phase === 'evacuate') return 'evacuation';
  if (m.phase === 'affinity' && !m.softGroup) return 'hard-group';
  return null;
}

/** Spread and soft-group moves: bought for balance (or a soft group), held to the threshold. */
function isBalanceMove(m: PlannedMove): boolean {
  return m.phase === 'spread' || (m.phase === 'affinity' && m.softGroup);
}

/** Hosts of the aggregate at or above the hot threshold in some dimension, on the state given. */
export function hotHosts(state: ClusterState, agg: number, hot: number): Set<number> {
  const out = new Set<number>();
  for (const h of state.aggregates[agg]!.counted)
    for (let d = 0; d < state.D; d++) if (state.util(h, d) >= hot) out.add(h);
  return out;
}

/**
 * Schedules and checks one aggregate's moves; `state` holds no move of this aggregate on entry
 * and on return. Returns the moves in step order, annotated, with reasons rewritten.
 */
export function finalizeAggregate(
  state: ClusterState,
  policy: Policy,
  agg: number,
  chosen: readonly PlannedMove[],
  limits: WaveLimits,
): FinalMove[] {
  const hot = hotHosts(state, agg, policy.hotThreshold);
  // Legality is taken in selection order (the one-way rule holds there move by move; an
  // exchange recorded after a host's single moves lifts it for the pair only), then the moves
  // are put in step-order priority (step-order.ts).
  const spread = policy.mode === 'spread';
  const moves = spread ? cheapen(state, policy, agg, legalInOrder(state, chosen)) : chosen;
  const dropped = new Set<PlannedMove>();
  for (;;) {
    const legal = legalInOrder(
      state,
      moves.filter((m) => !dropped.has(m)),
    );
    const laid = scheduleHotFirst(state, policy, agg, legal, limits, hot);
    const replay: Replay =
      'drop' in laid
        ? { moves: [], drop: laid.drop }
        : replayInStepOrder(state, policy, agg, laid.kept, laid.scheduled);
    if (replay.drop === null) return replay.moves;
    for (const m of replay.drop) dropped.add(m);
  }
}

/**
 * Hot spots first, while the hosts are hot. The moves off hosts hot in the snapshot (and the
 * other halves of their exchanges) take the first waves; the rest start after the last of them.
 * Spread: a hot host's moves relieve it only while it is still hot at the start of their wave;
 * the others, once waves before have cooled it, are taken out of the first pass and met in
 * balance-per-GiB order with the moves among cool hosts, again until every first-pass move
 * starts on a hot host. The checker holds plans to the same reading (hot-not-first: the hot
 * phase ends with the last wave that starts with its source hot). Should a move taken out
 * start on a hot host again after the waves are laid out anew, the first schedule stays: moves
 * off hosts hot in the snapshot may always run in the hot phase.
 */
function scheduleHotFirst(
  state: ClusterState,
  policy: Policy,
  agg: number,
  legal: PlannedMove[],
  limits: WaveLimits,
  hot: ReadonlySet<number>,
): { kept: PlannedMove[]; scheduled: ScheduledMove[] } | { drop: PlannedMove[] } {
  const spread = policy.mode === 'spread';
  const mandatory = (m: PlannedMove) => mandatoryKind(m) !== null;
  // An exchange's halves go in the same pass: one may need the room the other frees.
  const first = new Set(
    legal.filter((m) => hot.has(m.from) || (m.exchangeWith !== undefined && hot.has(m.exchangeWith.from))),
  );
  let earliest: { kept: PlannedMove[]; scheduled: ScheduledMove[] } | null = null;
  for (;;) {
    const relief = (m: PlannedMove) => first.has(m);
    const kept = spread ? orderByBalancePerGiB(state, policy, agg, legal, mandatory, relief) : legal;
    const hotFirst = {
      first: (m: PlannedMove) => mandatory(m) || relief(m),
      relief: (m: PlannedMove) => relief(m) && hot.has(m.from),
    };
    for (const m of kept) state.apply(m.server, m.to);
    let scheduled: ScheduledMove[];
    try {
      scheduled = scheduleWaves(state, kept, limits, hotFirst, spread ? SPREAD_BACKFILL : undefined);
    } catch (e) {
      if (!(e instanceof NoWaveFits)) throw e;
      // Laid out anew with fewer relief moves first, one no longer fits: the first schedule stays.
      if (earliest !== null) return earliest;
      // An exchange lets a host send and receive, so a relief move placed in the first pass may
      // need room that only a cool host's move frees, and that one may not run before the hot
      // phase ends: the optional move (with its other half) leaves the plan.
      if (mandatoryKind(e.move) !== null) throw e;
      return { drop: [e.move, ...pairOf(e.move)] };
    } finally {
      state.undo(kept.length);
    }
    scheduled.sort((a, b) => a.wave - b.wave || a.seq - b.seq);
    const result = { kept, scheduled };
    if (!spread) return result;
    earliest ??= result;
    const { stale, lastHotWave } = hotAtWaveStart(state, policy, agg, kept, scheduled, hot, first);
    if (stale.length === 0) {
      // Every move after the hot phase that is not off a host hot in the snapshot must start after it.
      const late = scheduled.some(
        (m) => m.wave <= lastHotWave && !first.has(kept[m.seq]!) && !mandatory(m) && !hot.has(m.from),
      );
      return late ? earliest : result;
    }
    for (const m of stale) first.delete(m);
  }
}

/**
 * Replays the schedule wave by wave: the first-pass moves whose source (hot in the snapshot) is
 * no longer hot at the start of their wave, an exchange only when neither half's is (both halves
 * then); and the last wave with a move whose source is hot at its start.
 */
function hotAtWaveStart(
  state: ClusterState,
  policy: Policy,
  agg: number,
  kept: readonly PlannedMove[],
  scheduled: readonly ScheduledMove[],
  hot: ReadonlySet<number>,
  first: ReadonlySet<PlannedMove>,
): { stale: PlannedMove[]; lastHotWave: number } {
  const stillHot = new Set<PlannedMove>();
  let lastHotWave = 0;
  let i = 0;
  while (i < scheduled.length) {
    const wave = scheduled[i]!.wave;
    let j = i;
    while (j < scheduled.length && scheduled[j]!.wave === wave) j++;
    const hotNow = hotHosts(state, agg, policy.hotThreshold);
    for (let k = i; k < j; k++) {
      const m = scheduled[k]!;
      if (!hot.has(m.from) || !hotNow.has(m.from)) continue;
      stillHot.add(kept[m.seq]!);
      lastHotWave = wave;
    }
    for (let k = i; k < j; k++) state.apply(scheduled[k]!.server, scheduled[k]!.to);
    i = j;
  }
  state.undo(scheduled.length);
  const stale = [...first].filter(
    (m) => !stillHot.has(m) && !(m.exchangeWith !== undefined && stillHot.has(m.exchangeWith)),
  );
  return { stale, lastHotWave };
}

/**
 * Spread: the search picks each move for the balance it buys, among servers whose costs differ
 * up to tenfold, and two servers often buy nearly the same balance. So each spread move, the
 * costliest first, gives way to the server of least memory that, sent to the same destination
 * instead, leaves the plan's end state at least as balanced (imbalance and soft-group penalty)
 * and every move still legal in selection order. The server is taken from the same source, or
 * from any host the plan already sends from when the move's source is not hot or ends below
 * the hot threshold without it (a hot host keeps its relief). Destinations and the number of
 * moves stay and no host starts sending, so the plan is no less balanced at equal moves, keeps
 * the one-way rule, and an operator copies less memory for it. Exchange halves are left as the
 * swap search paired them: giving them smaller servers (tried 2026-12-03) saved memory only on
 * levels already met and made the 7-day replay move more servers more than once.
 * `state` holds none of the aggregate's moves on entry and on return.
 */
function cheapen(
  state: ClusterState,
  policy: Policy,
  agg: number,
  moves: readonly PlannedMove[],
): PlannedMove[] {
  const out = [...moves];
  const n = Math.max(1, state.aggregates[agg]!.counted.length);
  const inPlan = new Set(out.map((m) => m.server));
  const paired = new Set<PlannedMove>();
  for (const m of out) if (m.makesRoomFor) paired.add(m).add(m.makesRoomFor);
  const ram = (s: number) => state.servers[s]!.ramMB;
  const order = out
    .map((_m, i) => i)
    .filter((i) => out[i]!.phase === 'spread' && out[i]!.exchangeWith === undefined && !paired.has(out[i]!))
    .sort((a, b) => ram(out[b]!.server) - ram(out[a]!.server) || a - b);
  const hot = policy.hotThreshold;
  const hotAtStart = hotHosts(state, agg, hot);
  const sources = [...new Set(out.filter((m) => m.phase === 'spread').map((m) => m.from))].sort(
    (a, b) => a - b,
  );
  // The end state with every move; a move's server sent back to its source gives the end state
  // without it (the order of the others does not matter to it).
  for (const m of out) state.apply(m.server, m.to);
  for (const i of order) {
    const m = out[i]!;
    state.apply(m.server, m.from);
    const worth = (s: number) =>
      state.imbalanceAfter(s, m.to) * n + softGroupPenaltyDelta(state, policy, s, m.to);
    const bar = worth(m.server) + 1e-12;
    let best = -1;
    let bestRam = ram(m.server);
    const anySource = !hotAtStart.has(m.from) || !isHot(state, m.from, hot);
    for (const h of anySource ? sources : [m.from]) {
      for (const s of state.on[h]!) {
        const r = ram(s);
        if (r >= bestRam || inPlan.has(s) || state.servers[s]!.immovable !== null || h === m.to) continue;
        if (worth(s) > bar || firstRejection(state, s, m.to) !== null) continue;
        best = s;
        bestRam = r;
      }
    }
    state.undo(1);
    if (best < 0) continue;
    const trial = [...out];
    trial[i] = { ...m, server: best, from: state.at[best]! };
    state.undo(out.length);
    if (legalInOrder(state, trial).length === trial.length) {
      out.splice(0, out.length, ...trial);
      inPlan.delete(m.server);
      inPlan.add(best);
    }
    for (const x of out) state.apply(x.server, x.to);
  }
  state.undo(out.length);
  return out;
}

function isHot(state: ClusterState, host: number, hot: number): boolean {
  for (let d = 0; d < state.D; d++) if (state.util(host, d) >= hot) return true;
  return false;
}

/**
 * The moves still legal in selection order once some were dropped (a later one may have needed
 * the room of one). An exchange's halves are consecutive there, and kept together or not at all.
 */
function legalInOrder(state: ClusterState, moves: readonly PlannedMove[]): PlannedMove[] {
  const out: PlannedMove[] = [];
  const legal = (m: PlannedMove): boolean => {
    if (state.at[m.server] !== m.from) return false;
    state.oneWay = isOneWay(m);
    const ok = firstRejection(state, m.server, m.to) === null;
    state.oneWay = false;
    return ok;
  };
  for (let i = 0; i < moves.length; i++) {
    const m = moves[i]!;
    if (m.exchangeWith) {
      const other = moves[i + 1];
      if (other !== m.exchangeWith) continue;
      i++;
      const first = legal(m);
      if (first) state.apply(m.server, m.to);
      const second = first && legal(other);
      if (second) state.apply(other.server, other.to);
      else if (first) state.undo(1);
      if (second) out.push(m, other);
      continue;
    }
    if (!legal(m)) continue;
    state.apply(m.server, m.to);
    out.push(m);
  }
  state.undo(out.length);
  return out;
}

/**
 * Balance moves other than a declared exchange's halves are held to the one-way rule. Pack moves
 * drain hosts into others, and a make-room move takes a little off a destination so a drained
 * server fits: pack's own order keeps its traffic one way, with such pairs declared.
 */
function isOneWay(m: PlannedMove): boolean {
  return isBalanceMove(m) && m.exchangeWith === undefined;
}

interface Replay {
  moves: FinalMove[];
  /** The moves to drop before trying again (null: every move pays). */
  drop: PlannedMove[] | null;
}

function replayInStepOrder(
  state: ClusterState,
  policy: Policy,
  agg: number,
  kept: readonly PlannedMove[],
  scheduled: readonly ScheduledMove[],
): Replay {
  const n = Math.max(1, state.aggregates[agg]!.counted.length);
  const stepOf = new Map<PlannedMove, number>();
  scheduled.forEach((m, i) => {
    stepOf.set(kept[m.seq]!, i + 1);
  });
  const out: FinalMove[] = [];
  const worths = new Map<PlannedMove, { worth: number; bar: number; gain: number }>();
  const illegal: PlannedMove[] = [];
  for (const m of scheduled) {
    const planned = kept[m.seq]!;
    const mandatory = mandatoryKind(planned);
    // The one-way rule is about the whole plan, not an order: legalInOrder held the selection
    // to it, and a subset of those moves keeps it. Here the rest of the rules, in step order.
    const legal = firstRejection(state, m.server, m.to) === null;
    if (!legal && mandatory === null) illegal.push(planned);
    const before = state.imbalance(agg);
    const softDelta = softGroupPenaltyDelta(state, policy, m.server, m.to);
    const exchangeStep = planned.exchangeWith ? (stepOf.get(planned.exchangeWith) ?? null) : null;
    const makesRoomStep = planned.makesRoomFor ? (stepOf.get(planned.makesRoomFor) ?? null) : null;
    let reason = m.reason;
    const balance = isBalanceMove(planned);
    if (balance) reason = balanceReason(state, policy, planned, exchangeStep);
    else reason = restateQuotes(state, m.from, m.to, reason);
    if (makesRoomStep !== null) reason = `makes room for step ${makesRoomStep}: ${reason}`;
    state.apply(m.server, m.to);
    const after = state.imbalance(agg);
    const gain = before - after;
    const price = planned.softGroup && after > before ? 'costs balance: ' : '';
    reason = reason.replace(IMBALANCE_MARK, `${price}${imbalanceChange(before, after)}`);
    let threshold: FinalMove['threshold'] = null;
    if (balance) {
      const worth = gain - softDelta / n;
      const bar = state.servers[m.server]!.bar / n;
      threshold = { worth, bar };
      worths.set(planned, { worth, bar, gain });
    }
    out.push({
      ...m,
      reason,
      gain,
      mandatory,
      threshold,
      exchangeStep,
      makesRoomStep,
    });
  }
  state.undo(scheduled.length);
  if (illegal.length > 0) return { moves: out, drop: [illegal[0]!, ...pairOf(illegal[0]!)] };

  // The worst optional move (or exchange) that does not pay, by how far it falls short.
  let worst: PlannedMove | null = null;
  let worstShort = 0;
  for (const [m, w] of worths) {
    if (m.exchangeWith) {
      const other = worths.get(m.exchangeWith);
      if (other === undefined) continue;
      const short = Math.min(w.worth + other.worth - w.bar - other.bar, w.gain + other.gain);
      if (short <= 1e-12 && (worst === null || short < worstShort)) {
        worst = m;
        worstShort = short;
      }
      continue;
    }
    const short = m.phase === 'spread' ? Math.min(w.worth - w.bar, w.gain) : w.worth - w.bar;
    if (short <= 1e-12 && (worst === null || short < worstShort)) {
      worst = m;
      worstShort = short;
    }
  }
  return { moves: out, drop: worst === null ? null : [worst, ...pairOf(worst)] };
}

function pairOf(m: PlannedMove): PlannedMove[] {
  return m.exchangeWith ? [m.exchangeWith] : [];
}

/** A balance move's reason in words true of the state it starts from (src/planner/describe.ts). */
function balanceReason(
  state: ClusterState,
  policy: Policy,
  m: PlannedMove,
  exchangeStep: number | null,
): string {
  const prefix = exchangeStep !== null ? `exchange with step ${exchangeStep}: ` : '';
  const g = state.servers[m.server]!.group;
  const softDelta = softGroupPenaltyDelta(state, policy, m.server, m.to);
  if (m.softGroup) {
    const group = state.groups[g]!;
    return `${prefix}soft group ${group.name} (${group.policy}): one violation fewer by moving from ${state.hosts[m.from]!.name} (${hostUtil(state, m.from)}) to ${state.hosts[m.to]!.name} (${hostUtil(state, m.to)}); ${IMBALANCE_MARK}`;
  }
  const soft =
    softDelta < 0 ? `; fewer violations of ${state.groups[g]!.policy} group ${state.groups[g]!.name}` : '';
  return `${prefix}${balancingWords(state, m.server, m.from, m.to, policy.hotThreshold)}; ${IMBALANCE_MARK}${soft}`;
}
