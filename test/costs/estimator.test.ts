import { describe, expect, it } from 'vitest';
import {
  AggregateCostEstimator,
  CostEstimators,
  DEFAULT_TIMEOUT_SETTINGS,
} from '../../src/costs/estimator.js';
import type { AggregateCostFit } from '../../src/costs/fit.js';
import { estimateMigrationSeconds } from '../../src/planner/cost-model.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';

const policyModel = DEFAULT_POLICY.costModel;

function aFit(usable: boolean, residualP90 = 4): AggregateCostFit {
  return {
    aggregate: 'gold',
    usable,
    why: usable ? 'ok' : 'too few',
    method: 'theil-sen',
    coefficients: { intercept: 10, secondsPerGiB: 2 },
    error: { mae: 1, medianAbs: 1, p90Abs: 5, residualP10: -2, residualP50: 0, residualP90: residualP90 },
    counts: { total: 30, fitted: 30, withDirtyRate: 0, capped: 0, byOutcome: {}, timeoutsAbovePrediction: 0 },
  };
}

describe('per-aggregate cost estimator', () => {
  it('gives the planner the learned coefficients when the fit is usable', () => {
    const est = new AggregateCostEstimator('gold', policyModel, aFit(true));
    expect(est.source).toBe('learned');
    expect(est.model.learned).toEqual({ intercept: 10, secondsPerGiB: 2 });
    expect(est.estimateSeconds({ ramMB: 8192 })).toBe(26);
  });

  it("falls back to the policy's pre-copy model without a usable fit", () => {
    for (const f of [undefined, aFit(false)]) {
      const est = new AggregateCostEstimator('gold', policyModel, f);
      expect(est.source).toBe('pre-copy');
      expect(est.model).toBe(policyModel);
      expect(est.estimateSeconds({ ramMB: 8192 })).toBe(
        estimateMigrationSeconds({ ramMB: 8192 }, policyModel),
      );
      expect(est.padSeconds(30)).toBe(30);
    }
  });

  it('times out at margin x (prediction + p90 residual), within the floor and the ceiling', () => {
    const t = { margin: 2, floorSeconds: 60, ceilingSeconds: 400 };
    const est = new AggregateCostEstimator('gold', policyModel, aFit(true, 4), t);
    expect(est.timeoutFor(8192)).toBe(2 * (26 + 4));
    expect(est.timeoutFor(1024)).toBe(60);
    expect(est.timeoutFor(1024 * 1024)).toBe(400);
  });

  it('a negative p90 residual never shortens the timeout', () => {
    const est = new AggregateCostEstimator('gold', policyModel, aFit(true, -3), {
      margin: 2,
      floorSeconds: 1,
      ceilingSeconds: 1000,
    });
    expect(est.timeoutFor(8192)).toBe(52);
  });

  it('refuses timeout settings that make no sense, naming each', () => {
    expect(
      () =>
        new AggregateCostEstimator('gold', policyModel, undefined, {
          margin: 0.5,
          floorSeconds: 100,
          ceilingSeconds: 50,
        }),
    ).toThrow(
      'migration timeout settings: margin: expected a number >= 1, got 0.5; ceilingSeconds: expected a number >= floorSeconds (100), got 50',
    );
  });

  it('hands out estimators per aggregate', () => {
    const all = new CostEstimators(policyModel, [aFit(true)], DEFAULT_TIMEOUT_SETTINGS);
    expect(all.for('gold').source).toBe('learned');
    expect(all.for('silver').source).toBe('pre-copy');
  });
});
