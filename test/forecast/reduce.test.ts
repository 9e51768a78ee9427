import { describe, expect, it } from 'vitest';
import {
  buildServerProfile,
  hasHistory,
  quantileOf,
  reduceSeries,
  slotClock,
} from '../../src/forecast/reduce.js';

const at = (iso: string): number => Date.parse(iso) / 1000;
const week = { resolution: 'hour-of-week', quantile: 0.9, timeZone: 'UTC', minSamples: 1 } as const;
const day = { ...week, resolution: 'hour-of-day' } as const;

describe('slotClock', () => {
  it('counts hour-of-week slots from Monday 00:00 as day*24+hour', () => {
    const c = slotClock('hour-of-week', 'UTC');
    expect(c.slots).toBe(168);
    expect(c.slotOf(at('2026-11-30T00:00:00Z'))).toBe(0); // a Monday
    expect(c.slotOf(at('2026-12-01T11:30:00Z'))).toBe(24 + 11); // Tuesday 11:30
    expect(c.slotOf(at('2026-12-06T23:59:59Z'))).toBe(167); // Sunday's last second
  });

  it('puts weekdays in 0..23 and weekends in 24..47 for hour-of-day', () => {
    const c = slotClock('hour-of-day', 'UTC');
    expect(c.slots).toBe(48);
    expect(c.slotOf(at('2026-12-04T09:00:00Z'))).toBe(9); // Friday
    expect(c.slotOf(at('2026-12-05T09:00:00Z'))).toBe(24 + 9); // Saturday
    expect(c.slotOf(at('2026-12-06T23:00:00Z'))).toBe(47); // Sunday
  });

  it('counts in the given time zone, half-hour offsets included', () => {
    // 2026-11-29 23:30 UTC is Monday 00:30 in Berlin (UTC+1 in winter).
    expect(slotClock('hour-of-week', 'Europe/Berlin').slotOf(at('2026-11-29T23:30:00Z'))).toBe(0);
    // 18:29 UTC is 23:59 in Kolkata (UTC+5:30), 18:30 UTC is 00:00 next day.
    const kolkata = slotClock('hour-of-week', 'Asia/Kolkata');
    expect(kolkata.slotOf(at('2026-11-30T18:29:00Z'))).toBe(23);
    expect(kolkata.slotOf(at('2026-11-30T18:30:00Z'))).toBe(24);
  });

  it('follows daylight saving time', () => {
    // New York is UTC-4 in July and UTC-5 in December: 13:00 UTC on a Monday is 09:00 and 08:00.
    const ny = slotClock('hour-of-week', 'America/New_York');
    expect(ny.slotOf(at('2026-07-06T13:00:00Z'))).toBe(9);
    expect(ny.slotOf(at('2026-11-30T13:00:00Z'))).toBe(8);
  });

  it('rejects a time zone that is not an IANA name, naming it', () => {
    expect(() => slotClock('hour-of-week', 'Mars/Olympus')).toThrow(/Mars\/Olympus/);
  });
});

describe('quantileOf', () => {
  it('interpolates between closest ranks (type 7)', () => {
    expect(quantileOf([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantileOf([10, 0], 0.9)).toBeCloseTo(9);
    expect(quantileOf([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9)).toBeCloseTo(9.1);
    expect(quantileOf([7], 0.9)).toBe(7);
    expect(quantileOf([3, 1, 2], 1)).toBe(3);
  });
});

describe('reduceSeries', () => {
  it('keeps the quantile of the samples that fell in each slot', () => {
    // Four Mondays at 10:00 with 1, 2, 3, 4 cores; one Tuesday at 10:00 with 8.
    const samples = [
      { t: at('2026-11-09T10:00:00Z'), value: 1 },
      { t: at('2026-11-16T10:00:00Z'), value: 2 },
      { t: at('2026-11-23T10:00:00Z'), value: 3 },
      { t: at('2026-11-30T10:00:00Z'), value: 4 },
      { t: at('2026-12-01T10:00:00Z'), value: 8 },
    ];
    const r = reduceSeries(samples, { ...week, minSamples: 2 });
    expect(r.values).toHaveLength(168);
    expect(r.values[10]).toBeCloseTo(3.7);
    expect(r.samples[10]).toBe(4);
    // One sample is below minSamples 2: unknown, not 8.
    expect(r.values[34]).toBeNull();
    expect(r.samples[34]).toBe(1);
    expect(r.values[11]).toBeNull();
    expect(r.samples[11]).toBe(0);
  });

  it('pools all weekdays into one hour in hour-of-day', () => {
    const samples = [0, 1, 2, 3, 4].map((d) => ({
      t: at(`2026-11-${String(30 - 7 + d).padStart(2, '0')}T14:00:00Z`),
      value: d,
    }));
    samples.push({ t: at('2026-11-28T14:00:00Z'), value: 100 }); // Saturday
    const r = reduceSeries(samples, { ...day, quantile: 0.5 });
    expect(r.values).toHaveLength(48);
    expect(r.samples[14]).toBe(5);
    expect(r.values[14]).toBe(2);
    expect(r.values[24 + 14]).toBe(100);
  });

  it('skips NaN and infinite values as gaps', () => {
    const t = at('2026-11-30T00:00:00Z');
    const r = reduceSeries(
      [
        { t, value: Number.NaN },
        { t, value: Number.POSITIVE_INFINITY },
        { t, value: 2 },
      ],
      week,
    );
    expect(r.samples[0]).toBe(1);
    expect(r.values[0]).toBe(2);
  });

  it('rejects a quantile or minSamples out of range', () => {
    expect(() => reduceSeries([], { ...week, quantile: 0 })).toThrow(/quantile.*0/);
    expect(() => reduceSeries([], { ...week, minSamples: 0 })).toThrow(/minSamples/);
  });
});

describe('buildServerProfile', () => {
  it('reduces cpu and memory and counts the smaller sample count per slot', () => {
    const t0 = at('2026-11-30T00:00:00Z');
    const t1 = at('2026-11-23T00:00:00Z');
    const p = buildServerProfile(
      {
        cpu: [
          { t: t0, value: 2 },
          { t: t1, value: 4 },
        ],
        memoryMB: [{ t: t0, value: 1024 }],
      },
      { ...week, minSamples: 2 },
    );
    expect(p.samples[0]).toBe(1);
    expect(p.cpu?.[0]).toBeCloseTo(3.8);
    expect(p.memoryMB?.[0]).toBeNull();
    expect(p.cpu).toHaveLength(168);
    expect(hasHistory(p)).toBe(true);
  });

  it('leaves out a metric that was not given', () => {
    const p = buildServerProfile({ cpu: [] }, week);
    expect(p.memoryMB).toBeUndefined();
    expect(p.samples.every((n) => n === 0)).toBe(true);
    expect(hasHistory(p)).toBe(false);
  });
});
