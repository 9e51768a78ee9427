// Fits, per aggregate, the duration of a live migration from the server's RAM (and, where
// samples carry one, its page dirty rate): seconds = a + b * ramGiB (+ c * ramGiB * dirtyMBps).
// Pure: samples in, coefficients and their error out.
import { huberFit, type Line, quantile, theilSen } from './robust.js';
import type { CostOutcome, CostSample } from './sample.js';

export interface CostFitSettings {
  /** Completed migrations an aggregate needs before its fit replaces the policy's pre-copy model. */
  minSamples: number;
  /** Only the newest this many completed samples are fitted (Theil-Sen is quadratic in n; old ones matter less). */
  maxSamples: number;
  /** Distinct RAM sizes needed to learn a slope (one flavor size says nothing about bigger ones). */
  minDistinctRamSizes: number;
}

export const DEFAULT_COST_FIT_SETTINGS: CostFitSettings = {
  minSamples: 20,
  maxSamples: 2000,
  minDistinctRamSizes: 2,
};

/** What the planner's `costModel.learned` takes (src/policy/types.ts). */
export interface LearnedCoefficients {
  intercept: number;
  secondsPerGiB: number;
  /** Extra seconds per GiB per MiB/s of dirty rate; only when samples carried dirty rates. */
  secondsPerGiBPerDirtyMBps?: number | undefined;
}

/** Residual = observed - predicted, in seconds, over the fitted samples. */
export interface FitError {
  mae: number;
  medianAbs: number;
  p90Abs: number;
  residualP10: number;
  residualP50: number;
  residualP90: number;
}

export type FitMethod = 'theil-sen' | 'huber';

export interface AggregateCostFit {
  aggregate: string;
  /** The fit is good enough to replace the pre-copy model (enough samples, a positive slope). */
  usable: boolean;
  /** In words: why usable or not. */
  why: string;
  method?: FitMethod | undefined;
  coefficients?: LearnedCoefficients | undefined;
  error?: FitError | undefined;
  counts: {
    /** Every sample of the aggregate. */
    total: number;
    /** Completed samples fitted (after the maxSamples cap). */
    fitted: number;
    /** Of the fitted, how many had a dirty rate. */
    withDirtyRate: number;
    /** Completed samples left out by the maxSamples cap (the oldest). */
    capped: number;
    /** Not fitted, by outcome: a failure's duration says nothing about a success's. */
    byOutcome: Partial<Record<CostOutcome, number>>;
    /** Timeouts that lasted longer than the fit predicts: the fit underestimates such migrations. */
    timeoutsAbovePrediction: number;
  };
}

export function fitCosts(
  samples: readonly CostSample[],
  settings: CostFitSettings = DEFAULT_COST_FIT_SETTINGS,
): AggregateCostFit[] {
  const byAggregate = new Map<string, CostSample[]>();
  for (const s of samples) byAggregate.set(s.aggregate, [...(byAggregate.get(s.aggregate) ?? []), s]);
  return [...byAggregate.keys()]
    .sort()
    .map((aggregate) => fitAggregate(aggregate, byAggregate.get(aggregate) ?? [], settings));
}

const GiB = 1024;

export function predictSeconds(c: LearnedCoefficients, ramMB: number, dirtyRateMBps: number): number {
  const gib = ramMB / GiB;
  return c.intercept + gib * (c.secondsPerGiB + (c.secondsPerGiBPerDirtyMBps ?? 0) * dirtyRateMBps);
}

export function fitAggregate(
  aggregate: string,
  samples: readonly CostSample[],
  settings: CostFitSettings = DEFAULT_COST_FIT_SETTINGS,
): AggregateCostFit {
  const byOutcome: Partial<Record<CostOutcome, number>> = {};
  const completedAll: CostSample[] = [];
  for (const s of samples) {
    if (s.outcome === 'completed' && Number.isFinite(s.seconds) && s.seconds >= 0 && s.ramMB > 0)
      completedAll.push(s);
    else byOutcome[s.outcome] = (byOutcome[s.outcome] ?? 0) + 1;
  }
  // Newest first, ties by server for determinism.
  completedAll.sort((a, b) => b.endedAt.localeCompare(a.endedAt) || a.serverId.localeCompare(b.serverId));
  const completed = completedAll.slice(0, settings.maxSamples);
  const withDirty = completed.filter((s) => s.dirtyRateMBps !== undefined);
  const counts: AggregateCostFit['counts'] = {
    total: samples.length,
    fitted: completed.length,
    withDirtyRate: withDirty.length,
    capped: completedAll.length - completed.length,
    byOutcome,
    timeoutsAbovePrediction: 0,
  };
  const base = { aggregate, counts };

  const ramSizes = new Set(completed.map((s) => s.ramMB));
  if (completed.length === 0) return { ...base, usable: false, why: 'no completed live migration' };
  if (ramSizes.size < settings.minDistinctRamSizes) {
    return {
      ...base,
      usable: false,
      why: `completed migrations cover ${ramSizes.size} RAM size${ramSizes.size === 1 ? '' : 's'} (need ${settings.minDistinctRamSizes} to learn how time grows with RAM)`,
    };
  }

  const line = theilSen(
    completed.map((s) => s.ramMB / GiB),
    completed.map((s) => s.seconds),
  ) as Line;
  let method: FitMethod = 'theil-sen';
  let coefficients: LearnedCoefficients = { intercept: line.intercept, secondsPerGiB: line.slope };
  let fitted: readonly CostSample[] = completed;

  // The dirty-rate term is learned only from samples that carry a dirty rate, and kept only
  // when it predicts those samples better than the RAM-only line does.
  const dirtyValues = new Set(withDirty.map((s) => s.dirtyRateMBps));
  if (withDirty.length >= settings.minSamples && dirtyValues.size >= 2) {
    const rows = withDirty.map((s) => [s.ramMB / GiB, (s.ramMB / GiB) * (s.dirtyRateMBps as number)]);
    const h = huberFit(
      rows,
      withDirty.map((s) => s.seconds),
      [line.intercept, line.slope, 0],
    );
    if (h) {
      const [a, b, c] = h.coefficients as [number, number, number];
      const candidate: LearnedCoefficients = { intercept: a, secondsPerGiB: b, secondsPerGiBPerDirtyMBps: c };
      const mae = (coef: LearnedCoefficients) =>
        meanAbs(withDirty.map((s) => s.seconds - predictSeconds(coef, s.ramMB, s.dirtyRateMBps ?? 0)));
      if (c >= 0 && b >= 0 && mae(candidate) < mae(coefficients)) {
        method = 'huber';
        coefficients = candidate;
        fitted = withDirty;
      }
    }
  }

  // What the planner will use, so that the error describes its predictions.
  const shown: LearnedCoefficients = {
    // A slightly negative intercept is noise around zero; the planner floors estimates at its overhead anyway.
    intercept: round(Math.max(0, coefficients.intercept)),
    secondsPerGiB: round(coefficients.secondsPerGiB, 4),
    ...(coefficients.secondsPerGiBPerDirtyMBps !== undefined
      ? { secondsPerGiBPerDirtyMBps: round(coefficients.secondsPerGiBPerDirtyMBps, 6) }
      : {}),
  };
  const dirtyOf = (s: CostSample) => s.dirtyRateMBps ?? 0;
  const residuals = fitted.map((s) => s.seconds - predictSeconds(shown, s.ramMB, dirtyOf(s)));
  const abs = residuals.map(Math.abs);
  const error: FitError = {
    mae: round(meanAbs(residuals)),
    medianAbs: round(quantile(abs, 0.5)),
    p90Abs: round(quantile(abs, 0.9)),
    residualP10: round(quantile(residuals, 0.1)),
    residualP50: round(quantile(residuals, 0.5)),
    residualP90: round(quantile(residuals, 0.9)),
  };
  counts.timeoutsAbovePrediction = samples.filter(
    (s) => s.outcome === 'timeout' && s.seconds > predictSeconds(shown, s.ramMB, dirtyOf(s)),
  ).length;
  const result = { ...base, method, coefficients: shown, error };
  if (!(coefficients.secondsPerGiB > 0)) {
    return {
      ...result,
      usable: false,
      why: `the fitted slope is ${round(coefficients.secondsPerGiB, 4)} s/GiB: bigger servers do not take longer in these samples, so the fit cannot be trusted`,
    };
  }
  if (completed.length < settings.minSamples) {
    return {
      ...result,
      usable: false,
      why: `${completed.length} completed migrations (need ${settings.minSamples} before the fit replaces the pre-copy model)`,
    };
  }
  return {
    ...result,
    usable: true,
    why: `${fitted.length} completed migrations over ${ramSizes.size} RAM sizes${method === 'huber' ? ', with dirty rates' : ''}`,
  };
}

function meanAbs(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((s, x) => s + Math.abs(x), 0) / xs.length;
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
