// A plan made with `load: forecast` says, per aggregate, which forecast peaks it balanced, how
// many servers counted at current load for want of a profile figure, and why an aggregate
// planned on current load instead; each move's reason quotes the forecast at its source host's
// busiest peak. Every one of those figures is recomputed here from the snapshot's profiles.
import type { AggregateForecast, AggregatePlan } from '../../model/plan.js';
import type { AggregateBalance } from '../balance-replay.js';
import { isCounted, objectiveBalance } from '../balance-replay.js';
import { expectedPeaks, hasForecast, slotName } from '../forecast.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';

const close = (a: number, b: number, tolerance: number): boolean =>
  Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));

/** A reason's percentages are rounded; a figure on the rounding edge may go either way. */
const roundsTo = (u: number, quoted: number): boolean =>
  Math.round(u * 100 - 1e-7) === quoted || Math.round(u * 100 + 1e-7) === quoted;

type Forecasting = AggregatePlan & { forecast: AggregateForecast };

/** What the fallback text claims, checked against the snapshot; the claims it makes that are false. */
function fallbackProblems(ctx: ReplayContext, a: Forecasting): string[] {
  const f = a.forecast;
  const why = f.fallback ?? '';
  const profiles = ctx.world.snapshot.profiles;
  const error = profiles?.errors?.[a.name]?.meanAbsolute;
  const out: string[] = [];
  if (why === '') out.push('planned on current load without saying why');
  if (/no load profiles/.test(why) && profiles !== undefined)
    out.push(`"${why}", but the snapshot has profiles`);
  const m = why.match(/forecast error (\d+(?:\.\d+)?) is above forecast\.maxError (\d+(?:\.\d+)?)/);
  if (m) {
    if (error === undefined) out.push(`"${why}", but the snapshot measures no error for ${a.name}`);
    else if (Math.abs(error - Number(m[1])) > 0.0005 + 1e-9 || error <= f.maxError)
      out.push(`"${why}", but the measured error is ${error} against maxError ${f.maxError}`);
  }
  const c = why.match(/forecast error (\d+(?:\.\d+)?) is no lower than current load's (\d+(?:\.\d+)?)/);
  if (c) {
    const measured = profiles?.errors?.[a.name];
    if (measured?.currentLoadAbsolute === undefined)
      out.push(`"${why}", but the snapshot measures no current-load error for ${a.name}`);
    else if (
      Math.abs(measured.meanAbsolute - Number(c[1])) > 0.0005 + 1e-9 ||
      Math.abs(measured.currentLoadAbsolute - Number(c[2])) > 0.0005 + 1e-9 ||
      measured.meanAbsolute < measured.currentLoadAbsolute
    )
      out.push(
        `"${why}", but the measured errors are ${measured.meanAbsolute} (forecast) and ${measured.currentLoadAbsolute} (current load)`,
      );
  }
  if (/no server of the aggregate has a load profile/.test(why) && profiles !== undefined) {
    const profiled = ctx.world
      .hostsIn(a.name)
      .some((h) => (ctx.world.serversOn.get(h.name) ?? []).some((s) => profiles.servers[s.id] !== undefined));
    if (profiled) out.push(`"${why}", but some do`);
  }
  if (/fewer than two hosts/.test(why) && ctx.world.hostsIn(a.name).filter(isCounted).length >= 2)
    out.push(`"${why}", but it has two or more`);
  // Spread, pack and repair-only all plan on the forecast (docs/planner.md).
  if (/plan balances current load only/.test(why)) out.push(`"${why}", but every mode plans on the forecast`);
  return out;
}

/** The claims of a forecast aggregate's entry that its profiles do not bear out. */
function forecastProblems(ctx: ReplayContext, a: Forecasting): string[] {
  const f = a.forecast;
  const profiles = ctx.world.snapshot.profiles;
  if (profiles === undefined) return ['planned on the forecast, but the snapshot has no load profiles'];
  const out: string[] = [];
  const error = profiles.errors?.[a.name]?.meanAbsolute;
  if (error !== undefined && error > f.maxError)
    out.push(`planned on the forecast with a measured error of ${error}, above maxError ${f.maxError}`);
  const currentError = profiles.errors?.[a.name]?.currentLoadAbsolute;
  if (error !== undefined && currentError !== undefined && error >= currentError)
    out.push(
      `planned on the forecast with a measured error of ${error}, no lower than current load's ${currentError}`,
    );
  if (error !== f.error)
    out.push(`error ${f.error ?? 'absent'}, but the snapshot measures ${error ?? 'none'}`);
  const dims = ctx.limits.dimensions;
  const want = expectedPeaks(
    ctx.world,
    a.name,
    profiles,
    dims,
    ctx.world.snapshot.takenAt,
    f.horizonHours,
    f.peakSlots,
  );
  const shown = (p: { slot: number }) => slotName(p.slot, profiles.resolution);
  if (
    want.length !== f.peaks.length ||
    want.some((w, i) => {
      const got = f.peaks[i]!;
      return (
        got.slot !== w.slot ||
        got.label !== shown(w) ||
        Date.parse(got.at) !== w.at ||
        !close(got.pressure, w.pressure, 1e-5)
      );
    })
  ) {
    const list = want.map((w) => `${shown(w)} (${w.pressure.toFixed(4)})`).join(', ');
    const listed = f.peaks.map((p) => `${p.label} (${p.pressure.toFixed(4)})`).join(', ');
    out.push(`peaks ${listed}, but the profiles' worst slots are ${list}`);
  }
  const slots = want.map((w) => w.slot);
  let onCurrent = 0;
  for (const h of ctx.world.hostsIn(a.name))
    for (const s of ctx.world.serversOn.get(h.name) ?? [])
      if (!hasForecast(profiles, s, dims, slots)) onCurrent++;
  if (onCurrent !== f.serversOnCurrentLoad)
    out.push(
      `serversOnCurrentLoad ${f.serversOnCurrentLoad}, but ${onCurrent} lack a profile figure at a peak`,
    );
  return out;
}

const PEAK_WORDS = /forecast peak (.+?): (\S+) (\d+)% (?:→|->) (\d+)%/;

export function forecastChecker(): PlanChecker {
  const balances = new Map<string, AggregateBalance>();
  const balanceOf = (ctx: ReplayContext, aggregate: string): AggregateBalance => {
    let b = balances.get(aggregate);
    if (!b) {
      b = objectiveBalance(ctx.world, aggregate, ctx.limits);
      balances.set(aggregate, b);
    }
    return b;
  };
  const forecasting = (ctx: ReplayContext, name: string): Forecasting | undefined => {
    const a = ctx.plan.aggregates.find((x) => x.name === name);
    return a?.forecast ? (a as Forecasting) : undefined;
  };
  return {
    constraint: 'forecast',
    startsWith(ctx: ReplayContext): void {
      for (const a of ctx.plan.aggregates) {
        if (!a.forecast) continue;
        const f = a as Forecasting;
        const problems = f.forecast.load === 'forecast' ? forecastProblems(ctx, f) : fallbackProblems(ctx, f);
        const before = balanceOf(ctx, a.name).imbalance();
        if (!close(f.forecast.imbalanceBefore, before, ctx.limits.tolerance))
          problems.push(`imbalanceBefore ${f.forecast.imbalanceBefore}, recomputed ${before.toFixed(6)}`);
        if (problems.length > 0)
          ctx.report({
            code: 'forecast-mismatch',
            aggregate: a.name,
            detail: `forecast: ${problems.join('; ')}`,
          });
      }
    },
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      const a = forecasting(ctx, m.aggregate);
      if (!a) return;
      const balance = balanceOf(ctx, m.aggregate);
      const objective = ctx.limits.objectives.get(m.aggregate);
      const words = m.move.reason.match(PEAK_WORDS);
      let problem: string | null = null;
      let quoted: { d: number; before: number } | null = null;
      if (a.forecast.load !== 'forecast' || !objective) {
        if (words) problem = `quotes "${words[0]}", but the aggregate planned on current load`;
      } else if (!words) {
        problem = 'quotes no forecast peak, though the aggregate planned on the forecast';
      } else {
        const [, label, dim, b] = words as unknown as [string, string, string, string, string];
        const k = a.forecast.peaks.findIndex((p) => p.label === label);
        const d = k < 0 ? -1 : balance.dimension(`${dim}@${k + 1}`);
        if (d < 0) problem = `"${words[0]}" names no peak and dimension of the plan`;
        else {
          // The busiest peak and dimension of the source host, as the reason claims.
          let top = Number.NEGATIVE_INFINITY;
          for (let i = 0; i < balance.dims.length; i++)
            top = Math.max(top, balance.utilization(m.from.name, i) ?? Number.NEGATIVE_INFINITY);
          const u = balance.utilization(m.from.name, d) ?? 0;
          if (!roundsTo(u, Number(b)))
            problem = `"${words[0]}", but ${m.from.name} is at ${Math.round(u * 100)}% then before this step`;
          else if (u < top - 1e-9)
            problem = `"${words[0]}", but ${m.from.name} is busier at another peak (${Math.round(top * 100)}%)`;
          quoted = { d, before: u };
        }
      }
      balance.apply(m.server, m.from.name, m.to.name);
      if (quoted && words && problem === null) {
        const after = balance.utilization(m.from.name, quoted.d) ?? 0;
        if (!roundsTo(after, Number(words[4])))
          problem = `"${words[0]}", but ${m.from.name} is at ${Math.round(after * 100)}% then after this step`;
      }
      if (problem === null) return;
      ctx.report({
        code: 'forecast-mismatch',
        aggregate: m.aggregate,
        step: m.move.step,
        wave: m.move.wave,
        server: m.move.server,
        host: m.move.from,
        detail: `step ${m.move.step}'s reason: ${problem}`,
      });
    },
    endsWith(ctx: ReplayContext): void {
      for (const a of ctx.plan.aggregates) {
        if (!a.forecast) continue;
        const after = balanceOf(ctx, a.name).imbalance();
        if (!close(a.forecast.imbalanceAfter, after, ctx.limits.tolerance))
          ctx.report({
            code: 'forecast-mismatch',
            aggregate: a.name,
            detail: `forecast: imbalanceAfter ${a.forecast.imbalanceAfter}, recomputed ${after.toFixed(6)}`,
          });
      }
    },
  };
}
