// True reasons: every figure and word a move's reason quotes is what the state it starts from gives,
// replaying the aggregate's moves in step order (all earlier steps applied, each fully). An operator
// approves a plan by reading its reasons, so a "runs hot" of a cool host or an imbalance that does
// not move beside a recorded gain is as wrong as a bad number in `after`.
import type { Move } from '../../model/plan.js';
import { type AggregateBalance, objectiveBalance } from '../balance-replay.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';

/** A reason's quotes are rounded; a utilization that lands on the rounding edge may go either way. */
const EDGE = 1e-7;

function roundsTo(value: number, quoted: number): boolean {
  return Math.round(value - EDGE) === quoted || Math.round(value + EDGE) === quoted;
}

/**
 * Two computations of one imbalance (the planner's running sums, this replay's) agree to about
 * a billionth of its size, not to a fixed number of decimals: with extreme policy weights the
 * imbalance runs into the millions.
 */
const RELATIVE = 1e-9;

/** A decimal quoted with `places` digits is `value` rounded, up to the rounding edge. */
function quotes(quoted: string, value: number): boolean {
  const places = quoted.split('.')[1]?.length ?? 0;
  return Math.abs(Number(quoted) - value) <= 0.5 * 10 ** -places + 1e-9 + RELATIVE * Math.abs(value);
}

const pct = (u: number): string => `${Math.round(u * 100)}%`;

/** The host a word names, quotes and a closing full stop aside; undefined when it names none. */
function named(word: string, isHost: (name: string) => boolean): string | undefined {
  const bare = word.replace(/^["'`]+|["'`]+$/g, '');
  if (isHost(bare)) return bare;
  const unstopped = bare.replace(/\.$/, '');
  return isHost(unstopped) ? unstopped : undefined;
}

/** The host a figure belongs to: the last word before `end` that names a host of the snapshot. */
function hostBefore(text: string, end: number, isHost: (name: string) => boolean): string | undefined {
  const words = text.slice(0, end).split(/[\s,;:]+/);
  for (let i = words.length - 1; i >= 0; i--) {
    const host = named(words[i]!, isHost);
    if (host !== undefined) return host;
  }
  return undefined;
}

interface Reader {
  readonly balance: AggregateBalance;
  /** The plan's dimension names (as in `before.dimensions`) the checker computes. */
  readonly planDims: ReadonlySet<string>;
}

function utilizationWords(r: Reader, reason: string, isHost: (n: string) => boolean): string[] {
  const out: string[] = [];
  for (const group of reason.matchAll(/\(([^()]*)\)/g)) {
    const parts = group[1]!.split(',').map((p) => p.trim().match(/^(\S+) (-?\d+)%$/));
    if (parts.length === 0 || parts.some((p) => p === null)) continue;
    const host = hostBefore(reason, group.index, isHost);
    if (host === undefined) continue;
    for (const p of parts) {
      const [, name, n] = p!;
      const d = r.balance.dimension(name!);
      if (d < 0 || !r.planDims.has(name!)) continue;
      const u = r.balance.utilization(host, d);
      if (u !== undefined && !roundsTo(u * 100, Number(n)))
        out.push(`${host} ${name} ${n}%, but it is at ${pct(u)} before this step`);
    }
  }
  return out;
}

function standingWords(r: Reader, reason: string, hot: number, isHost: (n: string) => boolean): string[] {
  const out: string[] = [];
  const { balance } = r;
  const dims = balance.dims.map((_, d) => d);
  const util = (host: string, d: number): number | undefined => balance.utilization(host, d);
  const show = (host: string): string =>
    dims.map((d) => `${balance.dims[d]!.name} ${pct(util(host, d) ?? 0)}`).join(', ');
  for (const m of reason.matchAll(/(\S+) runs hot/g)) {
    const host = named(m[1]!, isHost);
    if (host === undefined) continue;
    if (!dims.some((d) => (util(host, d) ?? 0) >= hot))
      out.push(`"${host} runs hot", but it is at ${show(host)}, below ${pct(hot)}`);
  }
  for (const m of reason.matchAll(/(\S+) has room/g)) {
    const host = named(m[1]!, isHost);
    if (host === undefined) continue;
    if (!dims.some((d) => (util(host, d) ?? Number.POSITIVE_INFINITY) < balance.mean(d)))
      out.push(
        `"${host} has room", but it is at or above the aggregate's mean in every dimension (${show(host)})`,
      );
  }
  for (const m of reason.matchAll(/(\S+) is (-?\d+) points? (above|below) the aggregate's (\S+) mean/g)) {
    const host = named(m[1]!, isHost);
    const d = balance.dimension(m[4]!);
    if (host === undefined || d < 0 || !r.planDims.has(m[4]!)) continue;
    const u = util(host, d);
    if (u === undefined) continue;
    const points = (m[3] === 'above' ? u - balance.mean(d) : balance.mean(d) - u) * 100;
    if (!roundsTo(points, Number(m[2])))
      out.push(
        `"${host} is ${m[2]} points ${m[3]} the aggregate's ${m[4]} mean", but it is ${Math.round(points)} (${pct(u)} against a mean of ${pct(balance.mean(d))})`,
      );
  }
  return out;
}

function imbalanceWords(reason: string, move: Move, before: number, after: number): string[] {
  const m = reason.match(/imbalance (-?\d+\.\d+) (?:->|→) (-?\d+\.\d+)/);
  if (!m) return [];
  const [, b, a] = m as unknown as [string, string, string];
  const out: string[] = [];
  if (!quotes(b, before) || !quotes(a, after))
    out.push(`"imbalance ${b} -> ${a}", but step order gives ${before.toFixed(6)} -> ${after.toFixed(6)}`);
  const gain = move.gain ?? before - after;
  if (move.gain !== undefined && Math.abs(move.gain - (before - after)) > 2e-6 + RELATIVE * Math.abs(before))
    out.push(
      `gain ${move.gain} recorded, but the imbalance goes ${before.toFixed(6)} -> ${after.toFixed(6)}`,
    );
  if ((gain > 0 && Number(a) > Number(b)) || (gain < 0 && Number(a) < Number(b)))
    out.push(`"imbalance ${b} -> ${a}" beside a gain of ${gain}`);
  return out;
}

function pairingWords(reason: string, move: Move): string[] {
  const out: string[] = [];
  for (const m of reason.matchAll(/exchange with step (\d+)/g)) {
    if (move.exchangeWith !== Number(m[1]))
      out.push(`"exchange with step ${m[1]}", but exchangeWith is ${move.exchangeWith ?? 'absent'}`);
  }
  for (const m of reason.matchAll(/makes room for step (\d+)/g)) {
    if (move.makesRoomFor !== Number(m[1]))
      out.push(`"makes room for step ${m[1]}", but makesRoomFor is ${move.makesRoomFor ?? 'absent'}`);
  }
  return out;
}

export function reasonsChecker(): PlanChecker {
  const readers = new Map<string, Reader>();
  return {
    constraint: 'reasons',
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      let reader = readers.get(m.aggregate);
      if (!reader) {
        const listed = ctx.plan.aggregates.find((a) => a.name === m.aggregate);
        reader = {
          balance: objectiveBalance(ctx.world, m.aggregate, ctx.limits),
          // A forecast aggregate's reasons quote the objective's dimensions (cpu@1 ..).
          planDims: new Set(
            ctx.limits.objectives.has(m.aggregate)
              ? ctx.limits.objectives.get(m.aggregate)!.dims.map((d) => d.name)
              : Object.keys(listed?.before.dimensions ?? {}),
          ),
        };
        readers.set(m.aggregate, reader);
      }
      const isHost = (name: string): boolean => ctx.world.hosts.has(name);
      const { move } = m;
      const reason = move.reason;
      const problems = [
        ...utilizationWords(reader, reason, isHost),
        ...standingWords(reader, reason, ctx.limits.hotThreshold, isHost),
        ...pairingWords(reason, move),
      ];
      const before = reader.balance.imbalance();
      reader.balance.apply(m.server, m.from.name, m.to.name);
      problems.push(...imbalanceWords(reason, move, before, reader.balance.imbalance()));
      if (problems.length === 0) return;
      ctx.report({
        code: 'reason-mismatch',
        aggregate: m.aggregate,
        step: move.step,
        wave: move.wave,
        server: move.server,
        host: move.from,
        detail: `step ${move.step}'s reason: ${problems.join('; ')}`,
      });
    },
  };
}
