import { describe, expect, it } from 'vitest';
import { huberFit, median, quantile, solve, theilSen } from '../../src/costs/robust.js';
import { createRng } from '../../src/util/rng.js';

describe('quantiles', () => {
  it('interpolates between order statistics', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(quantile([0, 10], 0.9)).toBeCloseTo(9);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('Theil-Sen', () => {
  it('recovers an exact line', () => {
    expect(theilSen([1, 2, 4, 8], [7, 9, 13, 21])).toEqual({ intercept: 5, slope: 2 });
  });

  it('has no slope when x takes one value', () => {
    expect(theilSen([4, 4, 4], [1, 2, 3])).toBeUndefined();
  });

  it('ignores a quarter of wild points that least squares follows', () => {
    const rng = createRng(3);
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < 200; i++) {
      const x = [2, 4, 8, 16, 32][i % 5] as number;
      xs.push(x);
      // 25% of the records waited in a queue: 30-300 s on top of the true duration.
      ys.push(5 + 1.1 * x + rng.normal() * 0.5 + (i % 4 === 0 ? 30 + rng.next() * 270 : 0));
    }
    const ts = theilSen(xs, ys);
    expect(ts?.slope).toBeCloseTo(1.1, 1);
    expect(ts?.intercept).toBeGreaterThan(4);
    expect(ts?.intercept).toBeLessThan(7);
    const ols = olsSlope(xs, ys);
    expect(Math.abs(ols.intercept - 5)).toBeGreaterThan(20);
  });
});

describe('Huber regression', () => {
  it('fits two features and weighs outliers down', () => {
    const rng = createRng(7);
    const rows: number[][] = [];
    const ys: number[] = [];
    for (let i = 0; i < 300; i++) {
      const gib = [2, 4, 8, 16][i % 4] as number;
      const dirty = [0, 50, 200, 400][Math.floor(i / 4) % 4] as number;
      rows.push([gib, gib * dirty]);
      ys.push(3 + 1 * gib + 0.004 * gib * dirty + rng.normal() * 0.3 + (i % 10 === 0 ? 200 : 0));
    }
    const h = huberFit(rows, ys, [0, 0, 0]);
    const [a, b, c] = h?.coefficients ?? [];
    expect(a).toBeCloseTo(3, 0);
    expect(b).toBeCloseTo(1, 1);
    expect(c).toBeCloseTo(0.004, 3);
  });

  it('solves small linear systems and reports singular ones', () => {
    expect(
      solve(
        [
          [2, 1],
          [1, 3],
        ],
        [3, 5],
      )?.map((x) => Math.round(x * 1e9) / 1e9),
    ).toEqual([0.8, 1.4]);
    expect(
      solve(
        [
          [1, 2],
          [2, 4],
        ],
        [1, 2],
      ),
    ).toBeUndefined();
  });
});

function olsSlope(xs: number[], ys: number[]): { intercept: number; slope: number } {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * ((ys[i] as number) - my);
    sxx += (x - mx) ** 2;
  });
  return { slope: sxy / sxx, intercept: my - (sxy / sxx) * mx };
}

describe('quantiles by selection', () => {
  it('agree with a sort on random, sorted, constant and duplicate-heavy data', () => {
    const rng = createRng(11);
    const sets = [
      Array.from({ length: 1001 }, () => rng.normal()),
      Array.from({ length: 500 }, (_, i) => i),
      Array.from({ length: 300 }, () => 7),
      Array.from({ length: 777 }, () => rng.int(0, 3)),
      [5],
    ];
    for (const xs of sets) {
      const sorted = [...xs].sort((a, b) => a - b);
      for (const q of [0, 0.1, 0.25, 0.5, 0.9, 1]) {
        const pos = q * (sorted.length - 1);
        const lo = Math.floor(pos);
        const hi = Math.min(sorted.length - 1, lo + 1);
        const want = (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
        expect(quantile(xs, q)).toBeCloseTo(want, 12);
      }
    }
  });
});
