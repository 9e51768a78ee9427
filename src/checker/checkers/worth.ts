// Worth: what each move buys against what it costs, judged by replaying the aggregate's moves in
// step order (each applied fully) and recomputing every figure from the snapshot and the plan:
// - a spread move gains (or makes room for a named later step, the two gaining together);
// - a declared exchange is well formed and pays more than doing neither;
// - under limits.threshold, an optional balance move records the bar its cost asks for and its
//   worth (gain plus a soft group's credit) clears it, pairs (exchange, make-room) together;
// - a `mandatory` label is true: an evacuation leaves a host that is not up and enabled, a hard
//   group repair reduces its hard group's violations.
// The bar is recomputed here from the plan's own figures (formats.md), not imported from the
// policy, so that the two can disagree and the checker catch it.
import type { Move, PlanThreshold } from '../../model/plan.js';
import type { Server } from '../../model/snapshot.js';
import { type AggregateBalance, objectiveBalance } from '../balance-replay.js';
import type { PlanChecker, ReplayContext, Report, ResolvedMove } from '../replay.js';
import { groupViolations, type Locate, softGroupViolations } from './server-groups.js';

/** A gain this close to zero is zero: the replay's sums carry rounding of that order. */
const GAIN_EPSILON = 1e-12;
const WORTH_SLACK = 1e-9;

interface Judged {
  readonly move: Move;
  readonly server: Server;
  readonly gain: number;
  /** Soft-group violations the move removes (negative when it adds some). */
  readonly softRemoved: number;
  /** Hosts counted in the aggregate's imbalance. */
  readonly hosts: number;
}

/** The bar in objective units (imbalance × hosts counted), as formats.md gives it. */
export function objectiveBar(t: PlanThreshold, seconds: number, ramMB: number): number {
  if (t.mandatoryOnly) return Number.POSITIVE_INFINITY;
  return Math.max(
    t.minGain + t.migrationCostPerSecond * seconds,
    t.perMove + (t.perMinute * seconds) / 60 + (t.perGiB * ramMB) / 1024,
  );
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
const show = (x: number): string => (Number.isFinite(x) ? x.toFixed(6) : String(x));

const isOptionalBalance = (m: Move): boolean =>
  m.mandatory === undefined && (m.phase === 'spread' || (m.phase === 'affinity' && m.softGroup === true));

function barOf(j: Judged, t: PlanThreshold): number {
  if (j.move.mandatory !== undefined) return 0;
  return objectiveBar(t, j.move.estimatedSeconds, j.server.flavor.ramMB) / j.hosts;
}

function worthOf(j: Judged, t: PlanThreshold): number {
  return j.gain + (t.softGroupPenalty * j.softRemoved) / j.hosts;
}

function at(aggregate: string, j: Judged): Omit<Parameters<Report>[0], 'code' | 'detail'> {
  return { aggregate, step: j.move.step, wave: j.move.wave, server: j.move.server, host: j.move.from };
}

/** A declared make-room link that holds: step N is later and goes into this move's source. */
function roomFor(j: Judged, byStep: ReadonlyMap<number, Judged>): Judged | undefined {
  const n = j.move.makesRoomFor;
  if (n === undefined || n <= j.move.step) return undefined;
  const target = byStep.get(n);
  return target && target.move.to === j.move.from ? target : undefined;
}

/** The other half of a reciprocal exchange declaration. */
function partnerOf(j: Judged, byStep: ReadonlyMap<number, Judged>): Judged | undefined {
  const n = j.move.exchangeWith;
  if (n === undefined || n === j.move.step) return undefined;
  const other = byStep.get(n);
  return other && other.move.exchangeWith === j.move.step ? other : undefined;
}

function checkGains(
  aggregate: string,
  judged: readonly Judged[],
  byStep: ReadonlyMap<number, Judged>,
  report: Report,
): void {
  for (const j of judged) {
    const m = j.move;
    if (m.phase !== 'spread' || m.exchangeWith !== undefined || j.gain > GAIN_EPSILON) continue;
    const target = roomFor(j, byStep);
    const named = m.makesRoomFor !== undefined && m.reason.includes(`makes room for step ${m.makesRoomFor}`);
    if (target && named && j.gain + target.gain > GAIN_EPSILON) continue;
    const why =
      m.makesRoomFor === undefined
        ? 'and it makes room for no later step'
        : !target
          ? `and step ${m.makesRoomFor} is not a later move into ${m.from}`
          : !named
            ? `and its reason does not say "makes room for step ${m.makesRoomFor}"`
            : `and with step ${target.move.step} (gain ${show(target.gain)}) the two gain ${show(j.gain + target.gain)}`;
    report({
      ...at(aggregate, j),
      code: 'nonpositive-gain',
      detail: `spread step ${m.step} gains ${show(j.gain)} (step-order replay), ${why}`,
    });
  }
}

function exchangeProblems(j: Judged, byStep: ReadonlyMap<number, Judged>): string[] {
  const m = j.move;
  const n = m.exchangeWith!;
  if (n === m.step) return [`step ${m.step} declares an exchange with itself`];
  const other = byStep.get(n);
  if (!other) return [`there is no step ${n}`];
  const out: string[] = [];
  if (other.move.exchangeWith !== m.step)
    out.push(`step ${n} declares exchangeWith ${other.move.exchangeWith ?? 'nothing'}, not ${m.step}`);
  if (other.move.from !== m.to || other.move.to !== m.from)
    out.push(
      `the two do not swap hosts (step ${m.step} ${m.from} -> ${m.to}, step ${n} ${other.move.from} -> ${other.move.to})`,
    );
  if (!m.reason.includes(`exchange with step ${n}`))
    out.push(`the reason of step ${m.step} does not say "exchange with step ${n}"`);
  return out;
}

function checkExchanges(
  aggregate: string,
  judged: readonly Judged[],
  byStep: ReadonlyMap<number, Judged>,
  threshold: PlanThreshold | undefined,
  report: Report,
): void {
  for (const j of judged) {
    if (j.move.exchangeWith === undefined) continue;
    const problems = exchangeProblems(j, byStep);
    if (problems.length > 0) {
      report({
        ...at(aggregate, j),
        code: 'exchange-unpaid',
        detail: `exchange declared by step ${j.move.step} is malformed: ${problems.join('; ')}`,
      });
      continue;
    }
    const other = partnerOf(j, byStep)!;
    // The pair is paid for once, at its first step.
    if (other.move.step < j.move.step) continue;
    const gain = j.gain + other.gain;
    const pair = `exchange of steps ${j.move.step} and ${other.move.step}`;
    if (gain <= GAIN_EPSILON) {
      report({
        ...at(aggregate, j),
        code: 'exchange-unpaid',
        detail: `${pair} gains ${show(gain)} together (${show(j.gain)} + ${show(other.gain)}): no more than doing neither`,
      });
      continue;
    }
    if (!threshold) continue;
    const worth = worthOf(j, threshold) + worthOf(other, threshold);
    const bar = barOf(j, threshold) + barOf(other, threshold);
    if (worth < bar - WORTH_SLACK) {
      report({
        ...at(aggregate, j),
        code: 'exchange-unpaid',
        detail: `${pair} is worth ${show(worth)} together, below the ${show(bar)} their costs ask for`,
      });
    }
  }
}

/** Moves judged together for the threshold: joined by reciprocal exchanges and true make-room links. */
function pairings(judged: readonly Judged[], byStep: ReadonlyMap<number, Judged>): Judged[][] {
  const parent = new Map<Judged, Judged>(judged.map((j) => [j, j]));
  const root = (j: Judged): Judged => {
    let r = j;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(j, r);
    return r;
  };
  const join = (a: Judged, b: Judged): void => {
    parent.set(root(a), root(b));
  };
  for (const j of judged) {
    const other = partnerOf(j, byStep);
    if (other) join(j, other);
    const target = roomFor(j, byStep);
    if (target) join(j, target);
  }
  const groups = new Map<Judged, Judged[]>();
  for (const j of judged) {
    const r = root(j);
    const list = groups.get(r);
    if (list) list.push(j);
    else groups.set(r, [j]);
  }
  return [...groups.values()];
}

function checkThreshold(
  aggregate: string,
  judged: readonly Judged[],
  byStep: ReadonlyMap<number, Judged>,
  t: PlanThreshold,
  report: Report,
): void {
  const optional = judged.filter((j) => isOptionalBalance(j.move));
  for (const j of optional) {
    const m = j.move;
    if (t.mandatoryOnly) {
      report({
        ...at(aggregate, j),
        code: 'below-threshold',
        detail: `the plan's threshold allows mandatory moves only, and step ${m.step} (${m.softGroup ? 'soft group' : m.phase}) is optional`,
      });
      continue;
    }
    const bar = round6(barOf(j, t));
    if (!m.threshold) {
      report({
        ...at(aggregate, j),
        code: 'below-threshold',
        detail: `optional step ${m.step} records no threshold test (its bar is ${show(bar)})`,
      });
    } else if (
      Math.abs(m.threshold.bar - bar) > 1e-6 &&
      Math.abs(m.threshold.bar - bar) > 1e-6 * Math.max(Math.abs(m.threshold.bar), Math.abs(bar))
    ) {
      report({
        ...at(aggregate, j),
        code: 'below-threshold',
        detail: `step ${m.step} records bar ${show(m.threshold.bar)}, recomputed ${show(bar)} (${m.estimatedSeconds} s, ${m.server} ${j.server.flavor.ramMB} MiB, ${j.hosts} hosts)`,
      });
    }
  }
  if (t.mandatoryOnly) return;
  for (const group of pairings(judged, byStep)) {
    const first = group.find((j) => isOptionalBalance(j.move));
    if (!first) continue;
    const worth = group.reduce((s, j) => s + worthOf(j, t), 0);
    const bar = group.reduce((s, j) => s + barOf(j, t), 0);
    if (worth >= bar - WORTH_SLACK) continue;
    const steps = group.map((j) => j.move.step).sort((a, b) => a - b);
    const what =
      steps.length > 1 ? `steps ${steps.join(', ')} (judged together) are` : `step ${first.move.step} is`;
    report({
      ...at(aggregate, first),
      code: 'below-threshold',
      detail: `${what} worth ${show(worth)}, below the bar ${show(bar)} their cost asks for`,
    });
  }
}

function checkMandatory(ctx: ReplayContext, m: ResolvedMove): void {
  const { move } = m;
  if (move.mandatory === undefined) return;
  const flag = (detail: string): void =>
    ctx.report({
      aggregate: m.aggregate,
      step: move.step,
      wave: move.wave,
      server: move.server,
      host: move.from,
      code: 'mandatory-mislabelled',
      detail: `step ${move.step} is labelled mandatory: ${move.mandatory}, but ${detail}`,
    });
  if (move.mandatory === 'evacuation') {
    const s = m.from.service;
    if (move.phase !== 'evacuate') flag(`its phase is ${move.phase}, not evacuate`);
    else if (s.state === 'up' && s.status === 'enabled' && !s.forcedDown)
      flag(`its source ${m.from.name} is up, enabled and not forced down`);
    return;
  }
  if (move.phase !== 'affinity' || move.softGroup === true) {
    flag(`its phase is ${move.softGroup ? 'affinity (soft)' : move.phase}, not a hard group's affinity`);
    return;
  }
  const hard = (ctx.world.groupsOf.get(m.server.id) ?? []).filter(
    (g) => g.policy === 'affinity' || g.policy === 'anti-affinity',
  );
  if (hard.length === 0) {
    flag(`server ${m.server.id} is in no hard affinity or anti-affinity group`);
    return;
  }
  const now: Locate = (id) => ctx.state.locationOf(id);
  const next: Locate = (id) => (id === m.server.id ? m.to.name : ctx.state.locationOf(id));
  const counts = hard.map((g) => [g, groupViolations(g, now), groupViolations(g, next)] as const);
  // A repair is a move of a group in violation that adds none; an affinity group gathers as a
  // unit, whose first moves leave the count where it was until the last one lands.
  if (counts.some(([, before, after]) => before > 0 && after <= before)) return;
  flag(counts.map(([g, before, after]) => `group ${g.name}: violations ${before} -> ${after}`).join('; '));
}

export function worthChecker(): PlanChecker {
  const balances = new Map<string, AggregateBalance>();
  const judged = new Map<string, Judged[]>();
  return {
    constraint: 'worth',
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      checkMandatory(ctx, m);
      let balance = balances.get(m.aggregate);
      if (!balance) {
        balance = objectiveBalance(ctx.world, m.aggregate, ctx.limits);
        balances.set(m.aggregate, balance);
      }
      const now: Locate = (id) => ctx.state.locationOf(id);
      const next: Locate = (id) => (id === m.server.id ? m.to.name : ctx.state.locationOf(id));
      let softRemoved = 0;
      for (const g of ctx.world.groupsOf.get(m.server.id) ?? [])
        softRemoved += softGroupViolations(g, now) - softGroupViolations(g, next);
      const before = balance.imbalance();
      balance.apply(m.server, m.from.name, m.to.name);
      const gain = before - balance.imbalance();
      const list = judged.get(m.aggregate) ?? [];
      list.push({ move: m.move, server: m.server, gain, softRemoved, hosts: Math.max(1, balance.counted) });
      judged.set(m.aggregate, list);
    },
    endsWith(ctx: ReplayContext): void {
      for (const [aggregate, list] of judged) {
        const byStep = new Map<number, Judged>();
        for (const j of list) if (!byStep.has(j.move.step)) byStep.set(j.move.step, j);
        checkGains(aggregate, list, byStep, ctx.report);
        checkExchanges(aggregate, list, byStep, ctx.limits.threshold, ctx.report);
        if (ctx.limits.threshold) checkThreshold(aggregate, list, byStep, ctx.limits.threshold, ctx.report);
      }
    },
  };
}
