import { describe, expect, it } from 'vitest';
import { type DecisionInput, decide } from '../../src/loop/decide.js';
import type { AggregatePlan, Move, MovePhase } from '../../src/model/plan.js';

function move(step: number, wave: number, from: string, phase: MovePhase = 'spread', after?: number[]): Move {
  return {
    step,
    wave,
    server: `s${step}`,
    from,
    to: 'z',
    phase,
    reason: 'r',
    estimatedSeconds: 10,
    ...(after ? { after } : {}),
  };
}

const stats = (imbalance: number) => ({ imbalance, dimensions: {} });

function plan(moves: Move[], imbalance = 0.2): AggregatePlan {
  return { name: 'gold', moves, before: stats(imbalance), after: stats(0.1), hostsFreed: [], unresolved: [] };
}

function input(p: AggregatePlan, over: Partial<DecisionInput> = {}): DecisionInput {
  return {
    mode: 'active',
    pausedGlobal: false,
    pausedAggregate: false,
    health: { aggregate: 'gold', verdict: 'ok', reasons: [], at: '2026-11-29T14:00:00Z' },
    window: { open: true, secondsLeft: 3600 },
    plan: p,
    emergencyHosts: new Set(),
    approvedSteps: new Set(),
    budget: { remaining: 100, binding: 'per cycle (100)' },
    emergencyBudget: { remaining: 10, binding: 'emergency per day (10)' },
    startImbalance: 0.1,
    secondsOf: (m) => m.estimatedSeconds,
    ...over,
  };
}

const steps = (ms: Move[]) => ms.map((m) => m.step);
const three = plan([move(1, 1, 'a'), move(2, 1, 'b'), move(3, 2, 'a', 'spread', [1])]);

describe('what of a plan starts now', () => {
  it('active, window open, budget ample: every move', () => {
    const d = decide(input(three));
    expect(steps(d.start)).toEqual([1, 2, 3]);
    expect(d.waiting).toEqual([]);
  });

  it.each([
    [{ mode: 'observe' as const }, 'observe mode: plan stored, nothing executed'],
    [{ pausedGlobal: true }, 'paused (global)'],
    [{ pausedAggregate: true }, 'paused (this aggregate)'],
    [
      { health: { aggregate: 'gold', verdict: 'blocked' as const, reasons: ['stale: x'], at: '' } },
      'data-health gate: stale: x',
    ],
  ])('%o starts nothing and says why', (over, why) => {
    const d = decide(input(three, over));
    expect(d.start).toEqual([]);
    expect(d.summary).toBe(why);
    expect(d.waiting.every((w) => w.why === why)).toBe(true);
  });

  it('assisted: only approved moves, and a move whose prerequisite is not approved waits', () => {
    const d = decide(input(three, { mode: 'assisted', approvedSteps: new Set([2, 3]) }));
    expect(steps(d.start)).toEqual([2]);
    expect(d.waiting).toEqual([
      { step: 1, why: 'awaiting approval' },
      { step: 3, why: 'needs step 1 first, which does not start now' },
    ]);
  });

  it('the budget cuts the plan and names the limit that binds', () => {
    const d = decide(input(three, { budget: { remaining: 1, binding: 'per window (5, 4 used)' } }));
    expect(steps(d.start)).toEqual([1]);
    expect(d.waiting).toEqual([
      { step: 2, why: 'budget: per window (5, 4 used)' },
      { step: 3, why: 'budget: per window (5, 4 used)' },
    ]);
  });

  it('only whole waves that fit in what is left of the window start', () => {
    const d = decide(input(three, { window: { open: true, secondsLeft: 15 } }));
    expect(steps(d.start)).toEqual([1, 2]);
    expect(d.waiting[0]!.why).toMatch(
      /does not fit in what is left of the window \(5 s left, wave 2 needs 10 s\)/,
    );
  });

  it('outside the window only emergency moves start, under the emergency budget', () => {
    const p = plan([move(1, 1, 'bad', 'evacuate'), move(2, 1, 'bad', 'evacuate'), move(3, 1, 'a')]);
    const d = decide(
      input(p, {
        window: { open: false, secondsLeft: 0 },
        emergencyHosts: new Set(['bad']),
        emergencyBudget: { remaining: 1, binding: 'emergency per day (3, 2 used)' },
      }),
    );
    expect(steps(d.start)).toEqual([1]);
    expect(d.emergency).toBe(true);
    expect(d.waiting).toEqual([
      { step: 2, why: 'emergency budget: emergency per day (3, 2 used)' },
      { step: 3, why: 'outside the maintenance window' },
    ]);
  });

  it('outside the window with no emergency nothing starts', () => {
    const d = decide(input(three, { window: { open: false, secondsLeft: 0 } }));
    expect(d.start).toEqual([]);
    expect(d.summary).toBe('outside the maintenance window: waiting');
  });

  it('hysteresis: a balancing-only plan below the start threshold waits; an evacuation does not', () => {
    const low = decide(input(plan(three.moves, 0.05)));
    expect(low.start).toEqual([]);
    expect(low.summary).toMatch(/below the start threshold 0\.1/);
    const evac = plan([move(1, 1, 'a', 'evacuate')], 0.05);
    expect(steps(decide(input(evac)).start)).toEqual([1]);
  });

  it('an aggregate in cooldown starts no balancing move, says until when, and still evacuates', () => {
    const until = '2026-12-01T03:00:00.000Z';
    const held = decide(input(plan(three.moves, 0.5), { cooldownUntil: until }));
    expect(held.start).toEqual([]);
    expect(held.summary).toBe(`aggregate cooldown until ${until}: no balancing now (imbalance 0.5)`);
    expect(held.waiting.every((w) => w.why === `aggregate cooldown until ${until}`)).toBe(true);
    const evac = plan([move(1, 1, 'a', 'evacuate')], 0.5);
    expect(steps(decide(input(evac, { cooldownUntil: until })).start)).toEqual([1]);
  });

  it('hysteresis holds back soft-group moves like balancing ones; a hard repair goes', () => {
    // Both are phase affinity in the plan: softGroup alone tells them apart.
    const soft = plan([{ ...move(1, 1, 'a', 'affinity'), softGroup: true }], 0.05);
    expect(decide(input(soft)).start).toEqual([]);
    const hard = plan([move(1, 1, 'a', 'affinity')], 0.05);
    expect(steps(decide(input(hard)).start)).toEqual([1]);
    const both = plan(
      [{ ...move(1, 1, 'a', 'affinity'), softGroup: true }, move(2, 1, 'b', 'affinity')],
      0.05,
    );
    expect(steps(decide(input(both)).start)).toEqual([1, 2]);
  });

  it('an empty plan does nothing quietly', () => {
    expect(decide(input(plan([])))).toEqual({
      start: [],
      emergency: false,
      waiting: [],
      summary: 'nothing to do',
    });
  });
});
