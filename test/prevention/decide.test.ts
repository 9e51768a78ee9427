import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideRatios,
  type HostRatioState,
  type LastRatioChange,
  lowestRatioForUsage,
  type RatioDecision,
} from '../../src/prevention/decide.js';
import {
  defaultRatioSettings,
  type RatioSettings,
  ratioSettingsProblems,
} from '../../src/prevention/settings.js';

const NOW = new Date('2026-11-30T12:00:00Z');
const settings: RatioSettings = {
  ...defaultRatioSettings(4, 2),
  minIntervalSeconds: 600,
  restoreAfterSeconds: 1800,
};

function hostState(extra: Partial<HostRatioState> = {}): HostRatioState {
  return {
    host: 'c1',
    rpUuid: 'rp-c1',
    ratio: 4,
    total: 16,
    reserved: 0,
    used: 20,
    load: { utilization: 0.7 },
    ...extra,
  };
}

function decide(
  h: Partial<HostRatioState>,
  last?: LastRatioChange,
  more: Partial<RatioSettings> = {},
  pinned: string[] = [],
): RatioDecision {
  const [d] = decideRatios({
    hosts: [hostState(h)],
    settings: { ...settings, ...more },
    lastChanges: new Map(last ? [['c1', last]] : []),
    pinned: new Set(pinned),
    now: NOW,
  });
  return d as RatioDecision;
}

const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();

describe('ratio decisions (table)', () => {
  it.each([
    ['hot: lowered by one step', { load: { utilization: 0.9 } }, undefined, 'lower-hot', 3.5],
    ['hot by steal alone', { load: { utilization: 0.5, steal: 0.2 } }, undefined, 'lower-hot', 3.5],
    [
      'hot but at the floor',
      { ratio: 2, used: 10, load: { utilization: 0.95 } },
      undefined,
      'hold-at-lowest',
      2,
    ],
    [
      'hot, stops where allocations need it',
      { ratio: 3, used: 44, load: { utilization: 0.95 } },
      undefined,
      'lower-hot',
      2.75,
    ],
    [
      'hot, allocations already need the current ratio',
      { ratio: 2.75, used: 44, load: { utilization: 0.95 } },
      undefined,
      'hold-at-lowest',
      2.75,
    ],
    [
      'hot, changed too recently',
      { load: { utilization: 0.9 } },
      { at: ago(300), from: 4.5, to: 4 },
      'hold-too-soon',
      4,
    ],
    ['in the band', { ratio: 3, load: { utilization: 0.7 } }, undefined, 'hold-band', 3],
    [
      'cool: raised by one step',
      { ratio: 3, load: { utilization: 0.3 } },
      { at: ago(4000), from: 3.5, to: 3 },
      'raise-cool',
      3.25,
    ],
    [
      'cool, not long enough after a lowering',
      { ratio: 3, load: { utilization: 0.3 } },
      { at: ago(1000), from: 3.5, to: 3 },
      'hold-too-soon',
      3,
    ],
    [
      'cool, a raise only waits the short interval after a raise',
      { ratio: 3, load: { utilization: 0.3 } },
      { at: ago(1000), from: 2.75, to: 3 },
      'raise-cool',
      3.25,
    ],
    ['cool, never above the target', { ratio: 3.9, load: { utilization: 0.3 } }, undefined, 'raise-cool', 4],
    ['cool at the target', { ratio: 4, load: { utilization: 0.3 } }, undefined, 'hold-at-target', 4],
    [
      'cool but stolen time is high',
      { ratio: 3, load: { utilization: 0.3, steal: 0.1 } },
      undefined,
      'hold-band',
      3,
    ],
    ['no measurement', { ratio: 3, load: undefined }, undefined, 'hold-no-load', 3],
    ['above the target: back to it', { ratio: 8, load: undefined }, undefined, 'lower-above-target', 4],
    [
      'above the target: no lower than allocations need',
      { ratio: 8, used: 100, load: undefined },
      undefined,
      'lower-above-target',
      6.25,
    ],
    [
      'below the floor: raised to it even when hot',
      { ratio: 1, used: 10, load: { utilization: 0.99 } },
      undefined,
      'raise-below-floor',
      2,
    ],
    ['no usable VCPU', { total: 4, reserved: 4 }, undefined, 'hold-no-capacity', 4],
  ] as const)('%s', (_name, h, last, code, to) => {
    const d = decide(h as Partial<HostRatioState>, last as LastRatioChange | undefined, {
      hotSteal: 0.15,
      coolSteal: 0.05,
    });
    expect([d.code, d.to]).toEqual([code, to]);
    expect(d.action).toBe(to < d.from ? 'lower' : to > d.from ? 'raise' : 'hold');
  });

  it('never writes a pinned host', () => {
    expect(decide({ load: { utilization: 0.99 } }, undefined, {}, ['c1']).code).toBe('hold-pinned');
  });

  it('explains each decision with the numbers', () => {
    expect(decide({ load: { utilization: 0.9 } }).reason).toBe(
      'c1: runs hot (cpu 90% >= hot 85%): ratio 4 -> 3.5 so that Nova places new servers elsewhere',
    );
    expect(decide({ ratio: 2.75, used: 44, load: { utilization: 0.95 } }).reason).toBe(
      'c1: runs hot (cpu 95% >= hot 85%) but ratio 2.75 is already as low as it may go: 44 VCPU allocated need 2.75 (used <= (total - reserved) x ratio)',
    );
  });

  it('refuses settings that make no sense, naming every key', () => {
    expect(
      ratioSettingsProblems({ ...settings, floor: 5, coolUtilization: 0.9, restoreAfterSeconds: 10 }),
    ).toEqual([
      'floor: expected at most target (4), got 5',
      'coolUtilization: expected below hotUtilization (0.85), got 0.9',
      'restoreAfterSeconds: expected at least minIntervalSeconds (600), got 10',
    ]);
    expect(() => decide({}, undefined, { stepDown: 0 })).toThrow(
      'ratio settings: stepDown: expected a number > 0, got 0',
    );
  });

  it('finds the lowest two-decimal ratio that keeps allocations', () => {
    expect(lowestRatioForUsage(30, 16, 0)).toBe(1.88);
    expect(lowestRatioForUsage(32, 16, 0)).toBe(2);
    expect(lowestRatioForUsage(10, 7, 1)).toBe(1.67);
    expect(lowestRatioForUsage(0, 16, 0)).toBe(0);
    for (const [u, t, r] of [
      [30, 16, 0],
      [10, 7, 1],
      [99, 13, 3],
      [1, 3, 0],
    ] as const)
      expect((t - r) * lowestRatioForUsage(u, t, r)).toBeGreaterThanOrEqual(u);
  });
});

const arbSettings = fc
  .record({
    floor: fc.integer({ min: 100, max: 400 }).map((x) => x / 100),
    span: fc.integer({ min: 0, max: 800 }).map((x) => x / 100),
    cool: fc.integer({ min: 10, max: 70 }).map((x) => x / 100),
    band: fc.integer({ min: 5, max: 25 }).map((x) => x / 100),
    stepDown: fc.integer({ min: 10, max: 200 }).map((x) => x / 100),
    stepUp: fc.integer({ min: 10, max: 200 }).map((x) => x / 100),
    minInterval: fc.integer({ min: 0, max: 3600 }),
    extraRestore: fc.integer({ min: 0, max: 7200 }),
  })
  .map(
    (a): RatioSettings => ({
      target: a.floor + a.span,
      floor: a.floor,
      hotUtilization: Math.min(1, a.cool + a.band),
      coolUtilization: a.cool,
      stepDown: a.stepDown,
      stepUp: a.stepUp,
      minIntervalSeconds: a.minInterval,
      restoreAfterSeconds: a.minInterval + a.extraRestore,
    }),
  );

describe('ratio decisions (properties)', () => {
  it('a change is never below the floor or what allocations need, and never moves away from [floor, target]', () => {
    fc.assert(
      fc.property(
        arbSettings,
        fc.integer({ min: 50, max: 1600 }).map((x) => x / 100),
        fc.integer({ min: 1, max: 128 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 400 }),
        fc.option(fc.double({ min: 0, max: 1.2, noNaN: true }), { nil: undefined }),
        (s, ratio, total, reserved, usedRaw, u) => {
          const usable = Math.max(0, total - reserved);
          const used = Math.min(usedRaw, Math.floor(usable * Math.max(ratio, s.target)));
          const [d] = decideRatios({
            hosts: [
              {
                host: 'h',
                rpUuid: 'rp',
                ratio,
                total,
                reserved,
                used,
                load: u === undefined ? undefined : { utilization: u },
              },
            ],
            settings: s,
            lastChanges: new Map(),
            pinned: new Set(),
            now: NOW,
          });
          if (!d || d.action === 'hold') return;
          expect(d.to).toBeGreaterThanOrEqual(s.floor);
          if (d.action === 'lower') {
            expect(usable * d.to).toBeGreaterThanOrEqual(used);
            expect(d.to).toBeLessThan(ratio);
            // Lowering below the target happens only when hot; above it, only toward it.
            if (d.to < s.target) expect(u).toBeGreaterThanOrEqual(s.hotUtilization);
          } else {
            expect(d.to).toBeLessThanOrEqual(Math.max(s.target, s.floor));
            if (ratio >= s.floor) expect(u).toBeLessThanOrEqual(s.coolUtilization);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('noisy load moves a ratio at most once per interval and never back within restoreAfterSeconds', () => {
    fc.assert(
      fc.property(
        arbSettings,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 20, maxLength: 200 }),
        fc.integer({ min: 30, max: 900 }),
        (s, loads, cycleSeconds) => {
          let ratio = s.target;
          let last: LastRatioChange | undefined;
          const changes: { t: number; from: number; to: number }[] = [];
          loads.forEach((u, i) => {
            const now = new Date(NOW.getTime() + i * cycleSeconds * 1000);
            const [d] = decideRatios({
              hosts: [
                { host: 'h', rpUuid: 'rp', ratio, total: 32, reserved: 0, used: 0, load: { utilization: u } },
              ],
              settings: s,
              lastChanges: new Map(last ? [['h', last]] : []),
              pinned: new Set(),
              now,
            });
            if (d && d.action !== 'hold') {
              changes.push({ t: now.getTime() / 1000, from: d.from, to: d.to });
              last = { at: now.toISOString(), from: d.from, to: d.to };
              ratio = d.to;
            }
            expect(ratio).toBeGreaterThanOrEqual(s.floor);
            expect(ratio).toBeLessThanOrEqual(s.target);
          });
          for (let i = 1; i < changes.length; i++) {
            const a = changes[i - 1] as { t: number; from: number; to: number };
            const b = changes[i] as { t: number; from: number; to: number };
            expect(b.t - a.t).toBeGreaterThanOrEqual(s.minIntervalSeconds);
            if (a.to < a.from && b.to > b.from)
              expect(b.t - a.t).toBeGreaterThanOrEqual(s.restoreAfterSeconds);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('load that stays inside the band changes nothing, however it jitters', () => {
    fc.assert(
      fc.property(
        arbSettings,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 100 }),
        fc.integer({ min: 0, max: 800 }),
        (s, jitter, r100) => {
          const ratio = Math.min(s.target, s.floor + r100 / 100);
          for (const j of jitter) {
            // Strictly between cool and hot.
            const u = s.coolUtilization + (s.hotUtilization - s.coolUtilization) * (0.001 + 0.998 * j);
            const [d] = decideRatios({
              hosts: [
                { host: 'h', rpUuid: 'rp', ratio, total: 32, reserved: 0, used: 0, load: { utilization: u } },
              ],
              settings: s,
              lastChanges: new Map(),
              pinned: new Set(),
              now: NOW,
            });
            expect(d?.action).toBe('hold');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
