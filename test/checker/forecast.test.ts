// The checker recomputes a forecast plan's figures from the snapshot's profiles: a plan made with
// load: forecast checks clean, and each way of misquoting the forecast is flagged forecast-mismatch.
import { beforeAll, describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import type { Plan } from '../../src/model/plan.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { FORECAST_POLICY, forecastBase } from './forecast-fixtures.js';

let base: { snap: Snapshot; plan: Plan };
beforeAll(() => {
  base = forecastBase(5);
});

const codes = (snap: Snapshot, plan: Plan) => checkPlan(snap, plan).violations.map((v) => v.code);

function mutate(change: (b: { snap: Snapshot; plan: Plan }) => void): { snap: Snapshot; plan: Plan } {
  const b = structuredClone(base);
  change(b);
  return b;
}

const forecasting = (plan: Plan) =>
  plan.aggregates.find((a) => a.forecast?.load === 'forecast' && a.moves.length > 0)!;

describe('checking a forecast plan', () => {
  it('a plan made on the forecast checks clean, and quotes a peak in every move', () => {
    const agg = forecasting(base.plan);
    expect(agg).toBeDefined();
    expect(agg.forecast!.serversOnCurrentLoad).toBeGreaterThan(0);
    for (const m of agg.moves)
      expect(m.reason).toMatch(/forecast peak \w{3} \d\d:00: (cpu|memory) \d+% → \d+%/);
    expect(checkPlan(base.snap, base.plan).violations).toEqual([]);
  });

  it.each([
    [
      'a peak percentage',
      (b: { plan: Plan }) => {
        const m = forecasting(b.plan).moves[0]!;
        m.reason = m.reason.replace(
          /(forecast peak \w{3} \d\d:00: \S+ )(\d+)%/,
          (_, p: string, n: string) => `${p}${Number(n) + 3}%`,
        );
      },
    ],
    [
      'the after figure',
      (b: { plan: Plan }) => {
        const m = forecasting(b.plan).moves[0]!;
        m.reason = m.reason.replace(/→ (\d+)%/, (_, n: string) => `→ ${Number(n) + 2}%`);
      },
    ],
    [
      'the clause dropped',
      (b: { plan: Plan }) => {
        const m = forecasting(b.plan).moves[0]!;
        m.reason = m.reason.replace(/; forecast peak .*$/, '');
      },
    ],
    [
      'a peak the plan did not weigh',
      (b: { plan: Plan }) => {
        const f = forecasting(b.plan).forecast!;
        f.peaks[0]!.slot = (f.peaks[0]!.slot + 7) % 168;
      },
    ],
    [
      'the fallback count',
      (b: { plan: Plan }) => {
        forecasting(b.plan).forecast!.serversOnCurrentLoad += 1;
      },
    ],
    [
      'the objective before',
      (b: { plan: Plan }) => {
        forecasting(b.plan).forecast!.imbalanceBefore += 0.01;
      },
    ],
    [
      'the objective after',
      (b: { plan: Plan }) => {
        forecasting(b.plan).forecast!.imbalanceAfter += 0.01;
      },
    ],
    [
      'the error the plan quotes',
      (b: { plan: Plan }) => {
        forecasting(b.plan).forecast!.error = 0.01;
      },
    ],
  ])('flags %s', (_what, change) => {
    expect(codes(...(Object.values(mutate(change)) as [Snapshot, Plan]))).toContain('forecast-mismatch');
  });

  it('flags a profile changed after planning: the peaks and quotes no longer follow', () => {
    const b = mutate((x) => {
      const agg = forecasting(x.plan);
      // Some servers have no profile (serversOnCurrentLoad): the first moved one that has one.
      const s = agg.moves.find((m) => x.snap.profiles!.servers[m.server]?.cpu)!.server;
      const p = x.snap.profiles!.servers[s]!;
      p.cpu = p.cpu!.map((v) => (v === null ? null : v * 3));
    });
    expect(codes(b.snap, b.plan)).toContain('forecast-mismatch');
  });

  it('flags a forecast plan whose measured error is above maxError, and a false fallback', () => {
    const agg = forecasting(base.plan).name;
    const erring = mutate((x) => {
      x.snap.profiles!.errors = {
        [agg]: { meanAbsolute: 0.5, hours: 10, from: x.snap.takenAt, to: x.snap.takenAt },
      };
    });
    expect(codes(erring.snap, erring.plan)).toContain('forecast-mismatch');
    // The honest plan for that snapshot falls back, and checks clean.
    const honest = planSnapshot(erring.snap, FORECAST_POLICY);
    expect(honest.aggregates.find((a) => a.name === agg)!.forecast).toMatchObject({ load: 'current' });
    expect(codes(erring.snap, honest)).toEqual([]);
    // A fallback that claims an error the snapshot does not measure.
    const liar = structuredClone(honest);
    const f = liar.aggregates.find((a) => a.name === agg)!.forecast!;
    f.fallback = 'forecast error 0.700 is above forecast.maxError 0.15';
    expect(codes(erring.snap, liar)).toContain('forecast-mismatch');
    // And one that claims no profiles.
    f.fallback = 'the snapshot has no load profiles';
    expect(codes(erring.snap, liar)).toContain('forecast-mismatch');
  });

  it('falls back when the forecast did no better than current load, and checks that claim', () => {
    const agg = forecasting(base.plan).name;
    const error = (meanAbsolute: number, currentLoadAbsolute: number) => ({
      [agg]: { meanAbsolute, currentLoadAbsolute, hours: 10, from: base.snap.takenAt, to: base.snap.takenAt },
    });
    // Under maxError, but no better than current load: the plan on the forecast is flagged...
    const worse = mutate((x) => {
      x.snap.profiles!.errors = error(0.1, 0.08);
      forecasting(x.plan).forecast!.error = 0.1;
    });
    expect(codes(worse.snap, worse.plan)).toContain('forecast-mismatch');
    // ...the honest plan falls back, saying why, and checks clean.
    const honest = planSnapshot(worse.snap, FORECAST_POLICY);
    const f = honest.aggregates.find((a) => a.name === agg)!.forecast!;
    expect(f).toMatchObject({
      load: 'current',
      fallback: "forecast error 0.100 is no lower than current load's 0.080",
    });
    expect(codes(worse.snap, honest)).toEqual([]);
    // The same claim against a forecast that did better is false.
    const better = structuredClone(worse.snap);
    better.profiles!.errors = error(0.05, 0.08);
    expect(codes(better, honest)).toContain('forecast-mismatch');
    // A forecast that did better is used.
    const used = planSnapshot(better, FORECAST_POLICY).aggregates.find((a) => a.name === agg)!;
    expect(used.forecast!.load).toBe('forecast');
    expect(codes(better, planSnapshot(better, FORECAST_POLICY))).toEqual([]);
  });
});
