// The worth threshold, after VMware DRS's migration threshold: an optional move enters a plan
// only when the balance it buys clears a bar that grows with what it costs (seconds of
// migration, memory copied). Levels name preset figures, 1 the most conservative (mandatory
// moves only), 5 the most aggressive (only minGain and the per-second cost remain).
import type { PlanThreshold } from '../model/plan.js';

export const THRESHOLD_LEVELS = [1, 2, 3, 4, 5] as const;
export type ThresholdLevel = (typeof THRESHOLD_LEVELS)[number];

/** Objective units (imbalance × hosts counted, as minGain) per move, per minute, per GiB. */
export interface ThresholdFigures {
  perMove: number;
  perMinute: number;
  perGiB: number;
}

/**
 * The levels' figures. Level 3 is the default: on the demo's assisted aggregate (8 hosts, one at
 * 90% cpu) it keeps the moves off the hot hosts and drops the shuffles between cool ones
 * (docs/policy.md gives each level in numbers).
 */
export const LEVEL_FIGURES: Record<ThresholdLevel, ThresholdFigures | 'mandatory-only'> = {
  1: 'mandatory-only',
  2: { perMove: 0.02, perMinute: 0.02, perGiB: 0.001 },
  3: { perMove: 0.006, perMinute: 0.006, perGiB: 0.0003 },
  4: { perMove: 0.002, perMinute: 0.002, perGiB: 0.0001 },
  5: { perMove: 0, perMinute: 0, perGiB: 0 },
};

export const DEFAULT_THRESHOLD_LEVEL: ThresholdLevel = 3;

/** Default line, as a utilization in 0..1, at or above which a host runs hot (the dashboard's line). */
export const DEFAULT_HOT_THRESHOLD = 0.85;

/** The compiled threshold: a level's figures, or explicit ones (level null). */
export interface Threshold extends ThresholdFigures {
  level: ThresholdLevel | null;
  mandatoryOnly: boolean;
}

export function thresholdOfLevel(level: ThresholdLevel): Threshold {
  const f = LEVEL_FIGURES[level];
  return f === 'mandatory-only'
    ? { level, mandatoryOnly: true, perMove: 0, perMinute: 0, perGiB: 0 }
    : { level, mandatoryOnly: false, ...f };
}

/**
 * The bar in objective units for a move of `seconds` and `ramMB`: the stricter of minGain plus
 * the per-second cost (the older rule, kept) and the threshold's figures.
 */
export function objectiveBar(
  t: Threshold,
  minGain: number,
  migrationCostPerSecond: number,
  seconds: number,
  ramMB: number,
): number {
  if (t.mandatoryOnly) return Number.POSITIVE_INFINITY;
  return Math.max(
    minGain + migrationCostPerSecond * seconds,
    t.perMove + (t.perMinute * seconds) / 60 + (t.perGiB * ramMB) / 1024,
  );
}

/** What a plan records of the threshold, so the checker recomputes every bar on its own. */
export function planThreshold(
  t: Threshold,
  minGain: number,
  migrationCostPerSecond: number,
  softGroupPenalty: number,
): PlanThreshold {
  return {
    level: t.level,
    mandatoryOnly: t.mandatoryOnly,
    perMove: t.perMove,
    perMinute: t.perMinute,
    perGiB: t.perGiB,
    minGain,
    migrationCostPerSecond,
    softGroupPenalty,
  };
}
