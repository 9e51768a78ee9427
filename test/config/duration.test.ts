import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aggregateConfig } from '../../src/config/aggregate.js';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import { parseServiceConfig } from '../../src/config/load.js';

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['7d', 604_800_000],
    ['2w', 1_209_600_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', 'm', '5 minutes', '1h 30m', '-5m', '5x'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('formatDuration round-trips whole milliseconds', () => {
    fc.assert(
      fc.property(fc.nat(10 * 604_800_000), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(0)).toBe('0s');
  });
});

describe('aggregateConfig', () => {
  it('gives a listed aggregate its merged settings and any other the defaults under its name', async () => {
    const { config } = await parseServiceConfig(
      { defaults: { budgets: { perCycle: 2 } }, aggregates: { gold: { budgets: { perDay: 9 } } } },
      { baseDir: '/' },
    );
    expect(aggregateConfig(config, 'gold').budgets).toMatchObject({ perCycle: 2, perDay: 9 });
    expect(aggregateConfig(config, 'new-one')).toMatchObject({
      name: 'new-one',
      budgets: { perCycle: 2, perDay: 100 },
    });
  });
});
