// Plan hygiene, as an operator reads a plan: churn they would reject even when every move is legal.
// A server moves once; no host both sends and receives in one wave; a host is both a source and a
// destination of an aggregate's plan only when the two moves are both demanded by rules, one of
// them is half of a declared exchange (an exchange's two hosts trade one server each way, and
// exchange-unpaid judges the pair), or the one leaves to make room for the other; and while some
// hosts run hot, moves between cool hosts wait until the hot ones are relieved.
import type { AggregatePlan, Move } from '../../model/plan.js';
import { objectiveBalance } from '../balance-replay.js';
import { executionOrder, type PlanChecker, type ReplayContext, type Report } from '../replay.js';
import { WHOLE_PLAN } from '../violations.js';

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function checkMovedOnce(ctx: ReplayContext): void {
  const seen = new Map<string, Array<{ aggregate: string; move: Move }>>();
  for (const aggregate of ctx.plan.aggregates) {
    for (const move of executionOrder(aggregate))
      push(seen, move.server, { aggregate: aggregate.name, move });
  }
  for (const [server, moves] of seen) {
    if (moves.length < 2) continue;
    const second = moves[1]!;
    const aggregates = new Set(moves.map((m) => m.aggregate));
    const where = moves.map((m) =>
      aggregates.size > 1 ? `${m.aggregate} step ${m.move.step}` : `step ${m.move.step}`,
    );
    ctx.report({
      code: 'server-moved-twice',
      aggregate: aggregates.size > 1 ? WHOLE_PLAN : second.aggregate,
      step: aggregates.size > 1 ? undefined : second.move.step,
      wave: aggregates.size > 1 ? undefined : second.move.wave,
      server,
      detail: `server ${server} moves ${moves.length} times (${where.join(', ')}); a plan moves a server at most once`,
    });
  }
}

function checkWaves(aggregate: AggregatePlan, ordered: readonly Move[], report: Report): void {
  const byWave = new Map<number, Move[]>();
  for (const move of ordered) push(byWave, move.wave, move);
  for (const [wave, moves] of byWave) {
    const sends = new Map<string, Move[]>();
    for (const m of moves) push(sends, m.from, m);
    const reported = new Set<string>();
    for (const m of moves) {
      // A move onto its own source is destination-is-source, not a host trading load in a wave.
      const out = (sends.get(m.to) ?? []).filter((x) => x !== m);
      if (out.length === 0 || reported.has(m.to)) continue;
      reported.add(m.to);
      const into = moves.filter((x) => x.to === m.to && x.from !== m.to).map((x) => x.step);
      const outSteps = out.map((x) => x.step);
      report({
        code: 'wave-send-receive',
        aggregate: aggregate.name,
        step: Math.max(outSteps[0]!, into[0]!),
        wave,
        host: m.to,
        detail: `in wave ${wave}, ${m.to} is the source of step${outSteps.length > 1 ? 's' : ''} ${outSteps.join(', ')} and the destination of step${into.length > 1 ? 's' : ''} ${into.join(', ')}`,
      });
    }
  }
}

/**
 * Whether a host may send in `s` and receive in `r`. Load that goes back and forth is a plain
 * move in and a plain move out; an exchange's half is not plain: its pair is judged on its own
 * (exchange-unpaid), so a host that gives may also trade one server each way in an exchange.
 */
function excused(s: Move, r: Move, traded: ReadonlySet<Move>, packPlan: boolean): boolean {
  if (s.mandatory !== undefined && r.mandatory !== undefined) return true;
  // A pack plan drains hosts into others; its make-room moves are declared (makesRoomFor), and
  // the hosts it frees are checked by hosts-freed-mismatch.
  // A pack move beside a mandatory one: a rule moved a server off or onto the host, and packing
  // (consolidation, not balance) may still fill or drain it.
  const packOrMandatory = (m: Move) => m.phase === 'pack' || m.mandatory !== undefined;
  if (packPlan && (s.phase === 'pack' || r.phase === 'pack') && packOrMandatory(s) && packOrMandatory(r))
    return true;
  if (traded.has(s) || traded.has(r)) return true;
  return s.makesRoomFor === r.step;
}

/** The halves of well-formed exchanges: reciprocal, the same two hosts each way. */
function exchangeHalves(ordered: readonly Move[]): Set<Move> {
  const byStep = new Map(ordered.map((m) => [m.step, m]));
  const out = new Set<Move>();
  for (const m of ordered) {
    const o = m.exchangeWith === undefined ? undefined : byStep.get(m.exchangeWith);
    if (o && o !== m && o.exchangeWith === m.step && o.from === m.to && o.to === m.from) out.add(m);
  }
  return out;
}

function checkSendReceive(
  aggregate: AggregatePlan,
  ordered: readonly Move[],
  report: Report,
  packPlan: boolean,
): void {
  const sends = new Map<string, Move[]>();
  const receives = new Map<string, Move[]>();
  for (const m of ordered) {
    push(sends, m.from, m);
    push(receives, m.to, m);
  }
  const traded = exchangeHalves(ordered);
  for (const [host, out] of sends) {
    const into = receives.get(host);
    if (!into) continue;
    let count = 0;
    let first: [Move, Move] | undefined;
    for (const s of out) {
      for (const r of into) {
        if (s === r || excused(s, r, traded, packPlan)) continue;
        count++;
        first ??= [s, r];
      }
    }
    if (!first) continue;
    const [s, r] = first;
    const later = s.step > r.step ? s : r;
    const more = count > 1 ? ` (${count - 1} more such pair${count > 2 ? 's' : ''})` : '';
    report({
      code: 'host-send-receive',
      aggregate: aggregate.name,
      step: later.step,
      wave: later.wave,
      server: later.server,
      host,
      detail: `${host} is the source of step ${s.step} and the destination of step ${r.step}${more}, and the two are neither both mandatory, nor half of a declared exchange, nor a move making room for the other`,
    });
  }
}

/**
 * While hot hosts exist, a move off a cool host waits until the last wave that relieves a hot
 * one: a wave with a move off a host that is hot in the snapshot and still hot at the start of
 * that wave (the plan replayed wave by wave). Once earlier waves have cooled a host, its further
 * moves relieve nothing hot, and cool moves need not wait for them; a host hot in the snapshot
 * may still send during the hot phase. The cool half of an exchange with a hot host is part of
 * its relief, not a move among cool hosts.
 */
function checkHotFirst(ctx: ReplayContext, aggregate: AggregatePlan, ordered: readonly Move[]): void {
  if (ordered.length === 0) return;
  const balance = objectiveBalance(ctx.world, aggregate.name, ctx.limits);
  const hotNow = (name: string): boolean =>
    balance.isCounted(name) &&
    balance.dims.some((_, d) => (balance.utilization(name, d) ?? 0) >= ctx.limits.hotThreshold);
  // Hot in the snapshot: taken for every host before the replay moves any load.
  const hot = new Map<string, boolean>();
  for (const m of ordered) for (const name of [m.from, m.to]) if (!hot.has(name)) hot.set(name, hotNow(name));
  const isHot = (name: string): boolean => hot.get(name) ?? false;
  let lastHotWave = 0;
  const byWave = [...ordered].sort((a, b) => a.wave - b.wave || a.step - b.step);
  for (let i = 0; i < byWave.length; ) {
    const wave = byWave[i]!.wave;
    let j = i;
    while (j < byWave.length && byWave[j]!.wave === wave) j++;
    for (let k = i; k < j; k++) if (isHot(byWave[k]!.from) && hotNow(byWave[k]!.from)) lastHotWave = wave;
    for (let k = i; k < j; k++) {
      const m = byWave[k]!;
      const server = ctx.world.servers.get(m.server);
      if (server) balance.apply(server, m.from, m.to);
    }
    i = j;
  }
  if (lastHotWave === 0) return;
  const hotHosts = [...hot.entries()].filter(([, h]) => h).map(([name]) => name);
  const named =
    hotHosts.length > 3
      ? `${hotHosts.slice(0, 3).join(', ')} and ${hotHosts.length - 3} more`
      : hotHosts.join(', ');
  const traded = exchangeHalves(ordered);
  const byStep = new Map(ordered.map((m) => [m.step, m]));
  const relievesHot = (m: Move): boolean =>
    traded.has(m) && m.exchangeWith !== undefined && isHot(byStep.get(m.exchangeWith)!.from);
  for (const m of ordered) {
    if (m.mandatory !== undefined || isHot(m.from) || m.wave > lastHotWave || relievesHot(m)) continue;
    ctx.report({
      code: 'hot-not-first',
      aggregate: aggregate.name,
      step: m.step,
      wave: m.wave,
      server: m.server,
      host: m.from,
      detail: `step ${m.step} moves off ${m.from}, which does not run hot, in wave ${m.wave}, while hot hosts (${named}, at or above ${Math.round(ctx.limits.hotThreshold * 100)}%) are relieved until wave ${lastHotWave}`,
    });
  }
}

export function hygieneChecker(): PlanChecker {
  return {
    constraint: 'hygiene',
    startsWith(ctx: ReplayContext): void {
      checkMovedOnce(ctx);
      for (const aggregate of ctx.plan.aggregates) {
        const ordered = executionOrder(aggregate);
        checkWaves(aggregate, ordered, ctx.report);
        checkSendReceive(aggregate, ordered, ctx.report, ctx.plan.mode === 'pack');
        checkHotFirst(ctx, aggregate, ordered);
      }
    },
  };
}
