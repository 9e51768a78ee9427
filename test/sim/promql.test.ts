import { describe, expect, it } from 'vitest';
import { evaluate, PromQLError, type Series } from '../../src/sim/promql.js';

const series: Record<string, Series[]> = {
  busy_total: [
    { labels: { instance: 'a:9100', mode: 'user' }, at: (t) => 2 * t, rate: () => 2 },
    { labels: { instance: 'a:9100', mode: 'idle' }, at: (t) => 6 * t, rate: () => 6 },
    { labels: { instance: 'b:9100', mode: 'user' }, at: (t) => t, rate: () => 1 },
  ],
  total: [
    { labels: { instance: 'a:9100' }, at: () => 100 },
    { labels: { instance: 'b:9100' }, at: () => 50 },
  ],
  avail: [
    { labels: { instance: 'a:9100' }, at: () => 40 },
    { labels: { instance: 'b:9100' }, at: () => 45 },
  ],
};
const src = (name: string) => series[name] ?? [];
const vec = (q: string) => {
  const v = evaluate(q, src, 1000, 999);
  if (v.kind !== 'vector') throw new Error('not a vector');
  return Object.fromEntries(v.samples.map((s) => [JSON.stringify(s.labels), s.value]));
};

describe('promql subset', () => {
  it('sums rates by a label, with negative regex matchers', () => {
    expect(vec('sum by (instance) (rate(busy_total{mode!~"idle|iowait"}[5m]))')).toEqual({
      '{"instance":"a:9100"}': 2,
      '{"instance":"b:9100"}': 1,
    });
    expect(vec('sum(rate(busy_total[1m])) by (mode)')).toEqual({
      '{"mode":"user"}': 3,
      '{"mode":"idle"}': 6,
    });
  });

  it('subtracts vectors matched on their labels and scales by scalars', () => {
    expect(vec('(total - avail) / 5')).toEqual({ '{"instance":"a:9100"}': 12, '{"instance":"b:9100"}': 1 });
  });

  it('gives sample times with timestamp()', () => {
    expect(Object.values(vec('timestamp(total)'))).toEqual([999, 999]);
  });

  it('refuses what it cannot evaluate rather than guessing', () => {
    expect(() => evaluate('histogram_quantile(0.9, total)', src, 0)).toThrow(PromQLError);
    expect(() => evaluate('total[5m]', src, 0)).toThrow(/range vector/);
    expect(() => evaluate('sum(total', src, 0)).toThrow(/parse error/);
  });
});
