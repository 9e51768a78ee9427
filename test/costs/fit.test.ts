import { describe, expect, it } from 'vitest';
import { learnCosts } from '../../src/costs/estimator.js';
import { DEFAULT_COST_FIT_SETTINGS, fitAggregate, fitCosts, predictSeconds } from '../../src/costs/fit.js';
import type { CostSample } from '../../src/costs/sample.js';
import { executorSample, mergeSamples } from '../../src/costs/sample.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { createRng } from '../../src/util/rng.js';

const RAMS = [2048, 4096, 8192, 16384, 32768];

/** A synthetic history: seconds = 6 + 1.2 s/GiB, noise, and a share of queued or failed records. */
function history(
  n: number,
  opts: { seed?: number; queuedShare?: number; aggregate?: string } = {},
): CostSample[] {
  const rng = createRng(opts.seed ?? 1);
  const out: CostSample[] = [];
  for (let i = 0; i < n; i++) {
    const ramMB = RAMS[i % RAMS.length] as number;
    const queued = rng.next() < (opts.queuedShare ?? 0) ? 60 + rng.next() * 600 : 0;
    out.push({
      aggregate: opts.aggregate ?? 'gold',
      serverId: `s-${i}`,
      ramMB,
      seconds: 6 + 1.2 * (ramMB / 1024) + rng.normal() * 0.4 + queued,
      outcome: 'completed',
      source: 'nova-history',
      endedAt: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(),
      novaMigrationId: i + 1,
    });
  }
  return out;
}

describe('fitting migration durations per aggregate', () => {
  it('recovers the coefficients of a clean history, with its error', () => {
    const [fit] = fitCosts(history(100));
    expect(fit?.usable).toBe(true);
    expect(fit?.method).toBe('theil-sen');
    expect(fit?.coefficients?.intercept).toBeCloseTo(6, 0);
    expect(fit?.coefficients?.secondsPerGiB).toBeCloseTo(1.2, 1);
    expect(fit?.error?.mae).toBeLessThan(0.6);
    expect(fit?.error?.p90Abs).toBeGreaterThanOrEqual(fit?.error?.medianAbs ?? 0);
    expect(fit?.counts).toMatchObject({ total: 100, fitted: 100, capped: 0 });
    expect(fit?.why).toBe('100 completed migrations over 5 RAM sizes');
  });

  it('stays on the line when a quarter of the records queued for minutes', () => {
    const fit = fitAggregate('gold', history(200, { queuedShare: 0.25, seed: 9 }));
    expect(fit.coefficients?.secondsPerGiB).toBeGreaterThan(1.0);
    expect(fit.coefficients?.secondsPerGiB).toBeLessThan(1.45);
    expect(fit.coefficients?.intercept).toBeLessThan(12);
    // The queued ones show as large positive residuals, and the error says so.
    expect(fit.error?.residualP90).toBeGreaterThan(30);
    expect(fit.error?.residualP50).toBeLessThan(2);
  });

  it('fits only completed migrations and counts the others by outcome', () => {
    const samples = history(30);
    samples.push(
      { ...(samples[0] as CostSample), serverId: 'f1', outcome: 'failed', seconds: 1 },
      { ...(samples[0] as CostSample), serverId: 'e1', outcome: 'error', seconds: 0 },
      { ...(samples[0] as CostSample), serverId: 't1', outcome: 'timeout', seconds: 900 },
      { ...(samples[0] as CostSample), serverId: 't2', outcome: 'timeout', seconds: 1 },
    );
    const fit = fitAggregate('gold', samples);
    expect(fit.counts).toMatchObject({
      total: 34,
      fitted: 30,
      byOutcome: { failed: 1, error: 1, timeout: 2 },
      timeoutsAbovePrediction: 1,
    });
  });

  it('needs the minimum number of samples before the fit is used', () => {
    const fit = fitAggregate('gold', history(12), { ...DEFAULT_COST_FIT_SETTINGS, minSamples: 20 });
    expect(fit.usable).toBe(false);
    expect(fit.coefficients).toBeDefined();
    expect(fit.why).toBe('12 completed migrations (need 20 before the fit replaces the pre-copy model)');
  });

  it('cannot learn a slope from one RAM size', () => {
    const one = history(40).map((s) => ({ ...s, ramMB: 4096 }));
    const fit = fitAggregate('gold', one);
    expect(fit.usable).toBe(false);
    expect(fit.coefficients).toBeUndefined();
    expect(fit.why).toMatch(/cover 1 RAM size \(need 2/);
  });

  it('refuses a fit in which bigger servers take less time', () => {
    const backwards = history(40).map((s) => ({ ...s, seconds: 100 - s.ramMB / 1024 }));
    const fit = fitAggregate('gold', backwards);
    expect(fit.usable).toBe(false);
    expect(fit.why).toMatch(/fitted slope is -1 s\/GiB/);
  });

  it('keeps only the newest samples when there are too many', () => {
    const samples = history(50);
    const fit = fitAggregate('gold', samples, { ...DEFAULT_COST_FIT_SETTINGS, maxSamples: 30 });
    expect(fit.counts).toMatchObject({ fitted: 30, capped: 20 });
  });

  it('learns a dirty-rate term when samples carry dirty rates, and uses it only when it predicts better', () => {
    const rng = createRng(5);
    const samples = history(120).map((s, i) => {
      const dirty = [0, 100, 300, 600][i % 4] as number;
      const gib = s.ramMB / 1024;
      return { ...s, dirtyRateMBps: dirty, seconds: 4 + gib * (1 + 0.002 * dirty) + rng.normal() * 0.2 };
    });
    const fit = fitAggregate('gold', samples);
    expect(fit.method).toBe('huber');
    expect(fit.coefficients?.secondsPerGiBPerDirtyMBps).toBeCloseTo(0.002, 3);
    expect(fit.coefficients?.secondsPerGiB).toBeCloseTo(1, 1);
    expect(predictSeconds(fit.coefficients!, 8192, 300)).toBeCloseTo(4 + 8 * 1.6, 0);

    // Dirty rates that explain nothing leave the RAM-only line in place.
    const noise = history(120).map((s, i) => ({ ...s, dirtyRateMBps: i % 2 === 0 ? 10 : 20 }));
    expect(fitAggregate('gold', noise).coefficients?.secondsPerGiBPerDirtyMBps ?? 0).toBeLessThan(0.001);
  });

  it('fits each aggregate on its own samples, sorted by name', () => {
    const fits = fitCosts([...history(30, { aggregate: 'silver' }), ...history(25, { aggregate: 'gold' })]);
    expect(fits.map((f) => [f.aggregate, f.counts.total])).toEqual([
      ['gold', 25],
      ['silver', 30],
    ]);
  });

  it("counts a migration the executor timed once, preferring the executor's sample", () => {
    const h = history(3);
    const ours: CostSample = { ...(h[1] as CostSample), source: 'executor', seconds: 42 };
    const merged = mergeSamples(h, [ours]);
    expect(merged).toHaveLength(3);
    expect(merged.find((s) => s.novaMigrationId === 2)?.source).toBe('executor');
  });
});

describe('samples from the executor and the whole learning step', () => {
  it('times an executor move from its stored intent to its end', () => {
    expect(
      executorSample({
        aggregate: 'gold',
        serverId: 's',
        ramMB: 4096,
        issuedAt: '2026-11-30T10:00:00Z',
        endedAt: '2026-11-30T10:00:31.5Z',
        outcome: 'completed',
        novaMigrationId: 7,
      }),
    ).toEqual({
      aggregate: 'gold',
      serverId: 's',
      ramMB: 4096,
      seconds: 31.5,
      outcome: 'completed',
      source: 'executor',
      endedAt: '2026-11-30T10:00:31.500Z',
      novaMigrationId: 7,
    });
    expect(() =>
      executorSample({
        aggregate: 'g',
        serverId: 's',
        ramMB: 1,
        issuedAt: '2026-11-30T10:00:00Z',
        endedAt: 'x',
        outcome: 'failed',
      }),
    ).toThrow('cost sample of server s: endedAt x is not after issuedAt 2026-11-30T10:00:00Z');
  });

  it('learnCosts merges, fits and hands out estimators', () => {
    const h = history(40);
    const { fits, estimators } = learnCosts({
      history: h,
      executor: [],
      policyModel: DEFAULT_POLICY.costModel,
    });
    expect(fits.map((f) => [f.aggregate, f.usable])).toEqual([['gold', true]]);
    expect(estimators.for('gold').source).toBe('learned');
    expect(estimators.for('gold').estimateSeconds({ ramMB: 8192 })).toBeCloseTo(6 + 1.2 * 8, 0);
  });
});
