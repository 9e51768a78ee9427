import { describe, expect, it } from 'vitest';
import {
  aggregateWorstSlots,
  horizonSlots,
  hostForecastAt,
  serverForecastAt,
  slotAt,
  slotLabel,
  worstSlots,
} from '../../src/forecast/forecast.js';
import type { LoadProfiles } from '../../src/model/snapshot.js';
import { host, server } from '../fixtures/cluster.js';

function profiles(servers: LoadProfiles['servers'], over: Partial<LoadProfiles> = {}): LoadProfiles {
  return {
    format: 'aicerine-profiles/1',
    resolution: 'hour-of-week',
    quantile: 0.9,
    timeZone: 'UTC',
    from: '2026-11-01T00:00:00Z',
    to: '2026-11-29T00:00:00Z',
    refreshedAt: '2026-11-29T00:00:00Z',
    minSamples: 2,
    servers,
    ...over,
  };
}

/** A 168-slot series that is `base` everywhere and `peak` at the given slots. */
function series(base: number, peaks: Record<number, number | null> = {}): (number | null)[] {
  return Array.from({ length: 168 }, (_, i) => (i in peaks ? peaks[i]! : base));
}

const COUNTS = Array.from({ length: 168 }, () => 4);

describe('slots', () => {
  it('counts hour-of-week from Monday 00:00 on the profiles wall clock', () => {
    // 2026-12-01 is a Tuesday.
    expect(slotAt('2026-12-01T11:30:00Z', { resolution: 'hour-of-week', timeZone: 'UTC' })).toBe(24 + 11);
    expect(slotAt('2026-11-30T00:00:00Z', { resolution: 'hour-of-week', timeZone: 'UTC' })).toBe(0);
    expect(slotAt('2026-12-06T23:59:00Z', { resolution: 'hour-of-week', timeZone: 'UTC' })).toBe(167);
    // 23:30 UTC Monday is 00:30 Tuesday in Amsterdam (UTC+1 in December).
    expect(slotAt('2026-11-30T23:30:00Z', { resolution: 'hour-of-week', timeZone: 'Europe/Amsterdam' })).toBe(
      24,
    );
  });

  it('folds weekends into 24..47 with hour-of-day', () => {
    expect(slotAt('2026-12-01T11:00:00Z', { resolution: 'hour-of-day', timeZone: 'UTC' })).toBe(11);
    expect(slotAt('2026-12-05T11:00:00Z', { resolution: 'hour-of-day', timeZone: 'UTC' })).toBe(35);
    expect(slotLabel(35, 'hour-of-day')).toBe('weekend 11:00');
    expect(slotLabel(24 + 11, 'hour-of-week')).toBe('Tue 11:00');
  });

  it('names a bad time zone', () => {
    expect(() => slotAt(0, { resolution: 'hour-of-week', timeZone: 'Mars/Olympus' })).toThrow(
      /Mars\/Olympus/,
    );
  });

  it('lists the horizon hour by hour from the hour the instant is in, each slot once', () => {
    const h = horizonSlots('2026-12-01T03:40:00Z', 24, { resolution: 'hour-of-week', timeZone: 'UTC' });
    expect(h).toHaveLength(24);
    expect(h[0]).toEqual({ slot: 27, at: '2026-12-01T03:00:00.000Z', label: 'Tue 03:00' });
    expect(h[23]!.label).toBe('Wed 02:00');
    const daily = horizonSlots('2026-12-01T03:00:00Z', 30, { resolution: 'hour-of-day', timeZone: 'UTC' });
    expect(daily.map((s) => s.slot)).toEqual(Array.from({ length: 24 }, (_, i) => (3 + i) % 24));
    expect(() => horizonSlots(0, 0, { resolution: 'hour-of-day', timeZone: 'UTC' })).toThrow(/horizon/);
  });
});

describe('server and host forecasts', () => {
  const a = server('a', 'h1', { cpu: 1, memMB: 1000 });
  const b = server('b', 'h1', { cpu: 2, memMB: 2000 });
  const p = profiles({ a: { cpu: series(1, { 35: 6 }), samples: COUNTS } });

  it('takes the profile where it has a figure and falls back to current load, saying so', () => {
    expect(serverForecastAt(a, p, 35)).toEqual({ load: { cpu: 6, memoryMB: 1000 }, fellBack: ['memoryMB'] });
    expect(serverForecastAt(b, p, 35)).toEqual({
      load: { cpu: 2, memoryMB: 2000 },
      fellBack: ['cpu', 'memoryMB'],
    });
    const nulls = profiles({ a: { cpu: series(1, { 35: null }), samples: COUNTS } });
    expect(serverForecastAt(a, nulls, 35).fellBack).toContain('cpu');
    expect(serverForecastAt(a, undefined, 35).load.cpu).toBe(1);
  });

  it('keeps the measured host load no server accounts for, and sums servers otherwise', () => {
    const measured = host('h1', { cpuLoad: 4, memLoad: 3500 }); // 1 core and 500 MiB of overhead
    expect(hostForecastAt(measured, [a, b], p, 35)).toEqual({
      load: { cpu: 9, memoryMB: 3500 },
      fellBack: 2,
    });
    const bare = host('h1');
    expect(hostForecastAt(bare, [a, b], p, 35).load).toEqual({ cpu: 8, memoryMB: 3000 });
    expect(hostForecastAt(bare, [a, b], p, 10).load).toEqual({ cpu: 3, memoryMB: 3000 });
  });
});

describe('worst slots', () => {
  it('ranks by pressure, keeps the earlier of ties, returns time order', () => {
    const horizon = horizonSlots('2026-12-01T00:00:00Z', 6, { resolution: 'hour-of-week', timeZone: 'UTC' });
    const pressure: Record<number, number> = { 24: 0.1, 25: 0.5, 26: 0.3, 27: 0.5, 28: 0.9, 29: 0.2 };
    const worst = worstSlots(horizon, (s) => pressure[s]!, 3);
    expect(worst.map((w) => w.slot)).toEqual([25, 27, 28]);
    expect(worstSlots(horizon, () => 0, 2).map((w) => w.slot)).toEqual([24, 25]);
  });

  it('finds the aggregate peak from the servers profiles, whatever their placement', () => {
    const h1 = host('h1', { vcpus: 10 });
    const h2 = host('h2', { vcpus: 10 });
    const servers = [server('a', 'h1', { cpu: 1 }), server('b', 'h2', { cpu: 1 })];
    // a peaks Tue 11:00, b Tue 14:00 a little lower; both idle otherwise.
    const p = profiles({
      a: { cpu: series(1, { 35: 8 }), samples: COUNTS },
      b: { cpu: series(1, { 38: 6 }), samples: COUNTS },
    });
    const dims = [{ load: 'cpu', capacity: 'VCPU', weight: 1 }];
    const args = { hosts: [h1, h2], servers, profiles: p, from: '2026-12-01T00:00:00Z', hours: 24, dims };
    const worst = aggregateWorstSlots({ ...args, count: 2 });
    expect(worst.map((w) => w.label)).toEqual(['Tue 11:00', 'Tue 14:00']);
    expect(worst[0]!.pressure).toBeCloseTo(9 / 20);
    const moved = servers.map((s) => ({ ...s, host: 'h1' }));
    expect(aggregateWorstSlots({ ...args, servers: moved, count: 2 })).toEqual(worst);
  });
});
