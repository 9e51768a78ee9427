// What the rest of Aicerine asks of learned costs, per aggregate: the cost model the planner
// should use (the fit when it is usable, the policy's pre-copy model otherwise), a migration's
// predicted seconds, and the executor's timeout for it.
import { estimateMigrationSeconds, type MigrationSubject } from '../planner/cost-model.js';
import type { CostModelPolicy } from '../policy/types.js';
import { type AggregateCostFit, type CostFitSettings, DEFAULT_COST_FIT_SETTINGS, fitCosts } from './fit.js';
import { type CostSample, mergeSamples } from './sample.js';

export interface TimeoutSettings {
  /** Timeout = margin x (predicted + the fit's 90th-percentile residual). */
  margin: number;
  /** Never shorter: a small server's migration still has fixed costs (and our polling interval). */
  floorSeconds: number;
  /** Never longer: past this a migration is not converging and holds claims on two hosts. */
  ceilingSeconds: number;
}

export const DEFAULT_TIMEOUT_SETTINGS: TimeoutSettings = {
  margin: 3,
  floorSeconds: 120,
  ceilingSeconds: 3600,
};

export type CostModelSource = 'learned' | 'pre-copy';

export class AggregateCostEstimator {
  /** The cost model for the planner: the policy's, with `learned` set when the fit is usable. */
  readonly model: CostModelPolicy;
  readonly source: CostModelSource;
  /** Seconds added to a prediction to cover nine in ten observed migrations (0 without a fit). */
  readonly upperResidualSeconds: number;

  constructor(
    readonly aggregate: string,
    policyModel: CostModelPolicy,
    readonly fit: AggregateCostFit | undefined,
    readonly timeouts: TimeoutSettings = DEFAULT_TIMEOUT_SETTINGS,
  ) {
    checkTimeoutSettings(timeouts);
    const { learned: _ignored, ...preCopy } = policyModel;
    if (fit?.usable && fit.coefficients) {
      this.model = { ...preCopy, learned: fit.coefficients };
      this.source = 'learned';
      this.upperResidualSeconds = Math.max(0, fit.error?.residualP90 ?? 0);
    } else {
      // A `learned` the operator wrote into the policy stays: it is their fallback, not ours to drop.
      this.model = policyModel;
      this.source = 'pre-copy';
      this.upperResidualSeconds = 0;
    }
  }

  /** Predicted seconds of one live migration (what the planner puts in `estimatedSeconds`). */
  estimateSeconds(subject: MigrationSubject): number {
    return estimateMigrationSeconds(subject, this.model);
  }

  /** A prediction padded to cover nine in ten migrations, for fitting work into a window. */
  padSeconds(estimatedSeconds: number): number {
    return estimatedSeconds + this.upperResidualSeconds;
  }

  /** How long the executor lets a migration of this size run before it aborts it. */
  timeoutFor(ramMB: number, dirtyRateMBps?: number): number {
    const predicted = this.estimateSeconds({ ramMB, dirtyRateMBps });
    const t = this.timeouts.margin * this.padSeconds(predicted);
    return Math.round(Math.min(this.timeouts.ceilingSeconds, Math.max(this.timeouts.floorSeconds, t)));
  }
}

/** Estimators for every aggregate a fit exists for; others get the policy's model. */
export class CostEstimators {
  private readonly fits: Map<string, AggregateCostFit>;

  constructor(
    readonly policyModel: CostModelPolicy,
    fits: readonly AggregateCostFit[],
    readonly timeouts: TimeoutSettings = DEFAULT_TIMEOUT_SETTINGS,
  ) {
    checkTimeoutSettings(timeouts);
    this.fits = new Map(fits.map((f) => [f.aggregate, f]));
  }

  for(aggregate: string): AggregateCostEstimator {
    return new AggregateCostEstimator(aggregate, this.policyModel, this.fits.get(aggregate), this.timeouts);
  }
}

export function checkTimeoutSettings(t: TimeoutSettings): void {
  const bad: string[] = [];
  if (!(t.margin >= 1)) bad.push(`margin: expected a number >= 1, got ${t.margin}`);
  if (!(t.floorSeconds > 0)) bad.push(`floorSeconds: expected a number > 0, got ${t.floorSeconds}`);
  if (!(t.ceilingSeconds >= t.floorSeconds))
    bad.push(
      `ceilingSeconds: expected a number >= floorSeconds (${t.floorSeconds}), got ${t.ceilingSeconds}`,
    );
  if (bad.length) throw new RangeError(`migration timeout settings: ${bad.join('; ')}`);
}

/**
 * The whole learning step for the control loop: history and the executor's samples merged (the
 * executor's win), fitted per aggregate, and estimators over the policy's model.
 */
export function learnCosts(input: {
  history: readonly CostSample[];
  executor: readonly CostSample[];
  policyModel: CostModelPolicy;
  fit?: CostFitSettings;
  timeouts?: TimeoutSettings;
}): { fits: AggregateCostFit[]; estimators: CostEstimators } {
  const fits = fitCosts(mergeSamples(input.history, input.executor), input.fit ?? DEFAULT_COST_FIT_SETTINGS);
  return {
    fits,
    estimators: new CostEstimators(input.policyModel, fits, input.timeouts ?? DEFAULT_TIMEOUT_SETTINGS),
  };
}
