// Which moves of a plan fit in what is left of a maintenance window. Pure: the moves' predicted
// seconds and the executor's concurrency limits in, the moves to run now and those that wait out.
//
// Waves run one after another (a plan's capacity guarantee holds wave by wave: a migrating
// server holds room on both hosts until its wave ends). Inside a wave the moves are started in
// step order as soon as the limits allow (a greedy list schedule). Every move of a wave that
// ends in time fits; the first wave that does not end in time is the last one touched, since a
// later wave may need the room the unfinished moves would have freed.

export interface WindowMove {
  step: number;
  wave: number;
  from: string;
  to: string;
  estimatedSeconds: number;
  after?: number[] | undefined;
}

export interface WindowConcurrency {
  /** Migrations in flight at once in the aggregate (or globally, whichever the caller enforces). */
  global: number;
  /** Outgoing migrations per source host (Nova's max_concurrent_live_migrations). */
  perSourceHost: number | ((host: string) => number);
  /** Incoming migrations per destination host; unlimited when absent. */
  perDestinationHost?: number | undefined;
}

export interface ScheduledMove<M extends WindowMove> {
  move: M;
  startSeconds: number;
  endSeconds: number;
}

export interface WindowFit<M extends WindowMove> {
  /** Moves to run in this window, in step order, with their predicted start and end. */
  fits: ScheduledMove<M>[];
  /** Moves left for a later window, in step order. */
  waits: M[];
  /** When the last fitting move is predicted to end (0 when none fits). */
  predictedSeconds: number;
  /** Why the rest waits, in words; empty when everything fits. */
  why: string;
}

export function fitsInWindow<M extends WindowMove>(
  moves: readonly M[],
  secondsLeft: number,
  concurrency: WindowConcurrency,
  opts: { secondsOf?: (move: M) => number } = {},
): WindowFit<M> {
  const secondsOf = opts.secondsOf ?? ((m: M) => m.estimatedSeconds);
  const limitOf =
    typeof concurrency.perSourceHost === 'function'
      ? concurrency.perSourceHost
      : (
          (n: number) => () =>
            n
        )(concurrency.perSourceHost);
  if (!(concurrency.global >= 1))
    throw new RangeError(`concurrency.global: expected >= 1, got ${concurrency.global}`);
  const waves = [...new Set(moves.map((m) => m.wave))].sort((a, b) => a - b);
  const ended = new Map<number, number>();
  const fits: ScheduledMove<M>[] = [];
  let clock = 0;
  let predicted = 0;
  for (const [i, wave] of waves.entries()) {
    const inWave = moves.filter((m) => m.wave === wave).sort((a, b) => a.step - b.step);
    const scheduled = scheduleWave(inWave, clock, concurrency, limitOf, secondsOf, ended);
    const inTime = scheduled.filter((s) => s.endSeconds <= secondsLeft);
    fits.push(...inTime);
    for (const s of inTime) predicted = Math.max(predicted, s.endSeconds);
    if (inTime.length < scheduled.length) {
      const waveEnd = Math.max(...scheduled.map((s) => s.endSeconds));
      const later = waves.slice(i + 1);
      const fitted = new Set(fits.map((f) => f.move.step));
      return {
        fits,
        waits: moves.filter((m) => !fitted.has(m.step)).sort((a, b) => a.step - b.step),
        predictedSeconds: round(predicted),
        why: `wave ${wave} is predicted to end at ${round(waveEnd)} s with ${round(secondsLeft)} s left in the window: ${scheduled.length - inTime.length} of its ${scheduled.length} moves${later.length ? ` and waves ${later.join(', ')}` : ''} wait for the next window`,
      };
    }
    clock = Math.max(clock, ...scheduled.map((s) => s.endSeconds));
  }
  return { fits, waits: [], predictedSeconds: round(predicted), why: '' };
}

function scheduleWave<M extends WindowMove>(
  moves: readonly M[],
  start: number,
  c: WindowConcurrency,
  limitOf: (host: string) => number,
  secondsOf: (m: M) => number,
  ended: Map<number, number>,
): ScheduledMove<M>[] {
  const out: ScheduledMove<M>[] = [];
  const pending = [...moves];
  const running: ScheduledMove<M>[] = [];
  let now = start;
  while (pending.length > 0) {
    for (let i = 0; i < pending.length; ) {
      const m = pending[i] as M;
      const outOf = running.filter((r) => r.move.from === m.from).length;
      const into = running.filter((r) => r.move.to === m.to).length;
      const depsDone = (m.after ?? []).every((s) => {
        const e = ended.get(s);
        // A dependency outside this plan's moves is not ours to wait for.
        return e === undefined ? !moves.some((x) => x.step === s) : e <= now;
      });
      const ok =
        running.length < c.global &&
        outOf < Math.max(1, limitOf(m.from)) &&
        (c.perDestinationHost === undefined || into < c.perDestinationHost) &&
        depsDone;
      if (!ok) {
        i++;
        continue;
      }
      const s: ScheduledMove<M> = { move: m, startSeconds: now, endSeconds: now + Math.max(0, secondsOf(m)) };
      running.push(s);
      out.push(s);
      pending.splice(i, 1);
    }
    if (running.length === 0) {
      // Nothing can start and nothing runs: an `after` inside the wave that can never be met.
      throw new RangeError(
        `wave ${moves[0]?.wave}: steps ${pending.map((m) => m.step).join(', ')} wait for moves that never run`,
      );
    }
    const next = Math.min(...running.map((r) => r.endSeconds));
    now = next;
    for (let i = running.length - 1; i >= 0; i--) {
      const r = running[i] as ScheduledMove<M>;
      if (r.endSeconds <= now) {
        ended.set(r.move.step, r.endSeconds);
        running.splice(i, 1);
      }
    }
  }
  for (const r of running) ended.set(r.move.step, r.endSeconds);
  return out.sort((a, b) => a.move.step - b.move.step);
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
