import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLeft, emergencyBudgetLeft, tightestBudget } from '../../src/config/budget.js';

const T0 = Date.parse('2026-12-05T22:00:00Z');
const min = (m: number) => new Date(T0 + m * 60_000);
const moment = { now: min(120), cycleStartedAt: min(115), windowOpenedAt: min(0) };

describe('budgetLeft', () => {
  it('counts the cycle, the window and the rolling day, and names the binding limit', () => {
    // 3 moves yesterday evening (within 24 h), 4 in this window, 1 of them in this cycle.
    const started = [min(-600), min(-500), min(-400), min(10), min(20), min(30), min(116)];
    const v = budgetLeft({ perCycle: 5, perWindow: 6, perDay: 100 }, started, moment);
    expect(v.uses).toEqual([
      { scope: 'cycle', limit: 5, used: 1, left: 4 },
      { scope: 'window', limit: 6, used: 4, left: 2 },
      { scope: 'day', limit: 100, used: 7, left: 93 },
    ]);
    expect(v.remaining).toBe(2);
    expect(v.binding?.scope).toBe('window');
    expect(v.reason).toBe('aggregate window budget: 4 of 6 moves started since the window opened, 2 left');
  });

  it('the day is the last 24 hours, not the calendar day', () => {
    const started = [min(120 - 24 * 60), min(120 - 24 * 60 + 1)];
    const v = budgetLeft({ perDay: 2 }, started, moment);
    // The first is exactly 24 h old: still counted; a minute later it is not.
    expect(v.remaining).toBe(0);
    expect(budgetLeft({ perDay: 2 }, started, { ...moment, now: min(121) }).remaining).toBe(1);
  });

  it('on a tie the longest-lived limit binds, and nothing goes below zero', () => {
    const started = [min(116), min(117), min(118)];
    const v = budgetLeft({ perCycle: 3, perDay: 2 }, started, moment);
    expect(v.remaining).toBe(0);
    expect(v.binding).toEqual({ scope: 'day', limit: 2, used: 3, left: 0 });
    expect(v.reason).toContain('aggregate day budget: 3 of 2 moves started in the last 24 h, 0 left');
  });

  it('outside a window the per-window limit does not apply; without limits nothing binds', () => {
    const v = budgetLeft({ perWindow: 0 }, [], { ...moment, windowOpenedAt: null });
    expect(v).toMatchObject({ remaining: Number.POSITIVE_INFINITY, binding: null, uses: [] });
    expect(v.reason).toBe('no aggregate budget limits these moves');
  });

  it('ignores moves stamped in the future (clock skew between replicas)', () => {
    expect(budgetLeft({ perCycle: 1 }, [min(130)], moment).remaining).toBe(1);
  });

  it('remaining is the minimum over the limits of limit - count (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -2000, max: 130 })),
        fc.option(fc.nat(20), { nil: undefined }),
        fc.option(fc.nat(20), { nil: undefined }),
        fc.option(fc.nat(40), { nil: undefined }),
        (ms, perCycle, perWindow, perDay) => {
          const v = budgetLeft({ perCycle, perWindow, perDay }, ms.map(min), moment);
          const past = ms.filter((m) => m <= 120);
          const lefts = [
            perCycle === undefined
              ? Number.POSITIVE_INFINITY
              : perCycle - past.filter((m) => m >= 115).length,
            perWindow === undefined
              ? Number.POSITIVE_INFINITY
              : perWindow - past.filter((m) => m >= 0).length,
            perDay === undefined
              ? Number.POSITIVE_INFINITY
              : perDay - past.filter((m) => m >= 120 - 1440).length,
          ];
          expect(v.remaining).toBe(Math.max(0, Math.min(...lefts)));
        },
      ),
    );
  });
});

describe('emergency and combined budgets', () => {
  it('the emergency budget counts only emergency moves and has no window limit', () => {
    const v = emergencyBudgetLeft({ perCycle: 2, perDay: 10 }, [min(116)], moment);
    expect(v).toMatchObject({ owner: 'emergency', remaining: 1 });
    expect(v.reason).toBe('emergency cycle budget: 1 of 2 moves started this cycle, 1 left');
  });

  it('tightestBudget picks the verdict with the fewest moves left', () => {
    const agg = budgetLeft({ perCycle: 5 }, [], moment);
    const glob = budgetLeft({ perDay: 3 }, [min(1), min(2)], moment, 'global');
    expect(tightestBudget([agg, glob])).toBe(glob);
    expect(tightestBudget([agg, glob]).reason).toBe(
      'global day budget: 2 of 3 moves started in the last 24 h, 1 left',
    );
    expect(tightestBudget([]).remaining).toBe(Number.POSITIVE_INFINITY);
  });
});
