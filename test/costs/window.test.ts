import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitsInWindow, type WindowMove } from '../../src/costs/window.js';

const mv = (
  step: number,
  wave: number,
  from: string,
  to: string,
  s: number,
  after?: number[],
): WindowMove => ({
  step,
  wave,
  from,
  to,
  estimatedSeconds: s,
  ...(after ? { after } : {}),
});

describe('fitting a plan into what is left of a window', () => {
  it('runs waves one after another and moves of a source one at a time', () => {
    const moves = [
      mv(1, 1, 'h1', 'h2', 100),
      mv(2, 1, 'h1', 'h3', 100),
      mv(3, 1, 'h4', 'h3', 50),
      mv(4, 2, 'h2', 'h5', 30),
    ];
    const r = fitsInWindow(moves, 1000, { global: 10, perSourceHost: 1 });
    expect(r.fits.map((f) => [f.move.step, f.startSeconds, f.endSeconds])).toEqual([
      [1, 0, 100],
      [2, 100, 200],
      [3, 0, 50],
      [4, 200, 230],
    ]);
    expect(r.waits).toEqual([]);
    expect(r.predictedSeconds).toBe(230);
    expect(r.why).toBe('');
  });

  it('keeps what ends in time from the first wave that does not, and leaves later waves waiting', () => {
    const moves = [
      mv(1, 1, 'h1', 'h2', 100),
      mv(2, 1, 'h1', 'h3', 100),
      mv(3, 1, 'h4', 'h3', 50),
      mv(4, 2, 'h2', 'h5', 30),
    ];
    const r = fitsInWindow(moves, 150, { global: 10, perSourceHost: 1 });
    expect(r.fits.map((f) => f.move.step)).toEqual([1, 3]);
    expect(r.waits.map((m) => m.step)).toEqual([2, 4]);
    expect(r.predictedSeconds).toBe(100);
    expect(r.why).toBe(
      'wave 1 is predicted to end at 200 s with 150 s left in the window: 1 of its 3 moves and waves 2 wait for the next window',
    );
  });

  it('honours the global limit, per-host overrides, destinations and padded durations', () => {
    const moves = [mv(1, 1, 'h1', 'h9', 10), mv(2, 1, 'h2', 'h9', 10), mv(3, 1, 'h3', 'h8', 10)];
    expect(fitsInWindow(moves, 100, { global: 1, perSourceHost: 5 }).predictedSeconds).toBe(30);
    expect(
      fitsInWindow(moves, 100, { global: 5, perSourceHost: 1, perDestinationHost: 1 }).predictedSeconds,
    ).toBe(20);
    const padded = fitsInWindow(
      moves,
      100,
      { global: 5, perSourceHost: () => 1 },
      { secondsOf: (m) => m.estimatedSeconds * 3 },
    );
    expect(padded.predictedSeconds).toBe(30);
  });

  it('starts a move only after the moves it waits for', () => {
    const moves = [mv(1, 1, 'h1', 'h2', 40), mv(2, 2, 'h3', 'h1', 10, [1])];
    const r = fitsInWindow(moves, 100, { global: 5, perSourceHost: 1 });
    expect(r.fits.find((f) => f.move.step === 2)?.startSeconds).toBe(40);
  });

  it('nothing fits in a window that is over', () => {
    const r = fitsInWindow([mv(1, 1, 'h1', 'h2', 40)], 0, { global: 5, perSourceHost: 1 });
    expect(r.fits).toEqual([]);
    expect(r.waits.map((m) => m.step)).toEqual([1]);
  });

  it('property: what fits ends in time, respects the limits, and fits ∪ waits is the plan', () => {
    const move = fc.record({
      wave: fc.integer({ min: 1, max: 4 }),
      from: fc.constantFrom('h1', 'h2', 'h3', 'h4'),
      to: fc.constantFrom('h5', 'h6', 'h7'),
      estimatedSeconds: fc.integer({ min: 1, max: 600 }),
    });
    fc.assert(
      fc.property(
        fc.array(move, { minLength: 0, maxLength: 25 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 2 }),
        (raw, left, global, perHost) => {
          const moves = raw.map((m, i) => ({ ...m, step: i + 1 }));
          const r = fitsInWindow(moves, left, { global, perSourceHost: perHost });
          expect(
            [...r.fits.map((f) => f.move.step), ...r.waits.map((m) => m.step)].sort((a, b) => a - b),
          ).toEqual(moves.map((m) => m.step));
          for (const f of r.fits) expect(f.endSeconds).toBeLessThanOrEqual(left);
          const times = r.fits.flatMap((f) => [f.startSeconds, f.endSeconds]);
          for (const t of times) {
            const live = r.fits.filter((f) => f.startSeconds <= t && t < f.endSeconds);
            expect(live.length).toBeLessThanOrEqual(global);
            for (const h of ['h1', 'h2', 'h3', 'h4'])
              expect(live.filter((f) => f.move.from === h).length).toBeLessThanOrEqual(perHost);
          }
          // A later wave never starts before an earlier one has ended.
          for (const a of r.fits)
            for (const b of r.fits)
              if (a.move.wave < b.move.wave) expect(b.startSeconds).toBeGreaterThanOrEqual(a.endSeconds);
        },
      ),
      { numRuns: 300 },
    );
  });
});
