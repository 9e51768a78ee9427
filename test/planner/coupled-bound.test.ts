// The coupled relaxation's inner step: the N largest gains a server can make by moving to its
// cheapest host of its zone. The bound is only a bound if that step misses no cheaper host, so
// its hull-and-sweep shortcut is held against a scan of every host.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestVertex, type CoupledInput, sweepOrder } from '../../src/planner/objectives/coupled-bound.js';

const unit = fc.double({ min: 0, max: 1, noNaN: true });

const problem = fc
  .record({
    n: fc.integer({ min: 2, max: 25 }),
    m: fc.integer({ min: 1, max: 50 }),
    zones: fc.integer({ min: 1, max: 3 }),
  })
  .chain(({ n, m, zones }) =>
    fc.record({
      n: fc.constant(n),
      alpha: fc.tuple(unit, unit),
      u0: fc.array(unit, { minLength: 2 * n, maxLength: 2 * n }),
      // Some hosts without capacity in a dimension, some servers idle or idle in one dimension.
      phys: fc.array(fc.oneof(fc.constant(0), fc.double({ min: 1, max: 10, noNaN: true })), {
        minLength: 2 * n,
        maxLength: 2 * n,
      }),
      zone: fc.array(fc.integer({ min: 0, max: zones - 1 }), { minLength: n, maxLength: n }),
      home: fc.array(fc.integer({ min: -1, max: n - 1 }), { minLength: m, maxLength: m }),
      strayZone: fc.array(fc.integer({ min: 0, max: zones - 1 }), { minLength: m, maxLength: m }),
      load: fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 3, noNaN: true })), {
        minLength: 2 * m,
        maxLength: 2 * m,
      }),
      y: fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 2 * n, maxLength: 2 * n }),
      moves: fc.integer({ min: 1, max: m }),
    }),
  );

describe('coupled bound: best vertex', () => {
  it('finds the same N largest gains as a scan of every host of the zone', () => {
    fc.assert(
      fc.property(problem, (p) => {
        const m = p.home.length;
        const input: CoupledInput = {
          n: p.n,
          D: 2,
          alpha: Float64Array.from(p.alpha),
          u0: Float64Array.from(p.u0),
          phys: Float64Array.from(p.phys),
          zone: Int32Array.from(p.zone),
          home: Int32Array.from(p.home),
          moverZone: Int32Array.from(p.home, (h, s) => (h >= 0 ? p.zone[h]! : p.strayZone[s]!)),
          load: Float64Array.from(p.load),
        };
        const y = Float64Array.from(p.y);
        const scratch = { gain: new Float64Array(m), to: new Int32Array(m) };
        bestVertex(input, y, p.moves, sweepOrder(input), scratch, new Float64Array(2 * p.n));

        const z = (h: number, d: number) =>
          p.phys[2 * h + d]! > 0 ? (p.alpha[d]! * p.y[2 * h + d]!) / p.phys[2 * h + d]! : 0;
        const cost = (s: number, h: number) => p.load[2 * s]! * z(h, 0) + p.load[2 * s + 1]! * z(h, 1);
        const scanned: number[] = [];
        for (let s = 0; s < m; s++) {
          const home = input.home[s]!;
          let min = Number.POSITIVE_INFINITY;
          for (let h = 0; h < p.n; h++)
            if (h !== home && p.zone[h] === input.moverZone[s]) min = Math.min(min, cost(s, h));
          const gain = (home >= 0 ? cost(s, home) : 0) - min;
          scanned.push(Number.isFinite(gain) ? Math.max(0, gain) : 0);
        }
        const top = (xs: number[]) =>
          [...xs]
            .sort((a, b) => b - a)
            .slice(0, p.moves)
            .reduce((a, b) => a + b, 0);
        expect(top([...scratch.gain])).toBeCloseTo(top(scanned), 12);
      }),
      { numRuns: 2000, seed: 11 },
    );
  });
});
