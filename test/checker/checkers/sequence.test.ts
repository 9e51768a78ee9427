import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { Move } from '../../../src/model/plan.js';
import { type Case, codesOf, inGold, move, plan, threeHosts } from '../fixtures.js';

const withMoves = (moves: Move[]) => () => inGold(moves);
const dependent = (after: number[], wave = 2): Move => ({ ...move(2, wave, 's3', 'h2', 'h3'), after });

const cases: Case[] = [
  {
    name: 'steps 1..n in two waves',
    build: withMoves([
      move(1, 1, 's1', 'h1', 'h3'),
      move(2, 1, 's3', 'h2', 'h3'),
      move(3, 2, 's2', 'h1', 'h3'),
    ]),
    want: [],
  },
  {
    name: 'a gap in the steps',
    build: withMoves([move(2, 1, 's1', 'h1', 'h3')]),
    want: ['steps-not-ordered'],
  },
  {
    name: 'a step used twice',
    build: withMoves([move(1, 1, 's1', 'h1', 'h3'), move(1, 1, 's3', 'h2', 'h3')]),
    want: ['steps-not-ordered'],
  },
  {
    name: 'moves not listed in step order',
    build: withMoves([move(2, 1, 's3', 'h2', 'h3'), move(1, 1, 's1', 'h1', 'h3')]),
    want: ['steps-not-ordered'],
  },
  { name: 'waves start at 2', build: withMoves([move(1, 2, 's1', 'h1', 'h3')]), want: ['wave-order'] },
  {
    name: 'a wave going back as steps go forward',
    build: withMoves([
      move(1, 1, 's1', 'h1', 'h3'),
      move(2, 2, 's3', 'h2', 'h3'),
      move(3, 1, 's2', 'h1', 'h3'),
    ]),
    want: ['wave-order'],
  },
  {
    name: 'waves jumping a number',
    build: withMoves([move(1, 1, 's1', 'h1', 'h3'), move(2, 3, 's2', 'h1', 'h3')]),
    want: ['wave-order'],
  },
  {
    name: 'a server moving twice in one wave',
    build: withMoves([move(1, 1, 's1', 'h1', 'h2'), move(2, 1, 's1', 'h2', 'h3')]),
    // Hygiene flags the same plan too: a server moved twice, h2 sending and receiving.
    want: ['host-send-receive', 'moved-twice-in-wave', 'server-moved-twice', 'wave-send-receive'],
  },
  {
    name: 'a server moving in two waves',
    build: withMoves([move(1, 1, 's1', 'h1', 'h2'), move(2, 2, 's1', 'h2', 'h3')]),
    // Sequence allows it; hygiene does not (docs/checker.md, "hygiene").
    want: ['host-send-receive', 'server-moved-twice'],
  },
  {
    name: 'a dependency on an earlier wave',
    build: withMoves([move(1, 1, 's1', 'h1', 'h3'), dependent([1])]),
    want: [],
  },
  {
    name: 'a dependency on a move of the same wave',
    build: withMoves([move(1, 1, 's1', 'h1', 'h3'), dependent([1], 1)]),
    want: ['bad-dependency'],
  },
  {
    name: 'a dependency on a step that does not exist',
    build: withMoves([move(1, 1, 's1', 'h1', 'h3'), dependent([7])]),
    want: ['bad-dependency'],
  },
  {
    name: 'a dependency that is not a list',
    build: withMoves([
      move(1, 1, 's1', 'h1', 'h3'),
      { ...move(2, 2, 's3', 'h2', 'h3'), after: JSON.parse('"1"') as number[] },
    ]),
    want: ['bad-dependency'],
  },
  {
    name: 'an aggregate listed twice',
    build: () => {
      const snap = threeHosts();
      const p = plan(snap, { gold: [] });
      return { snap, plan: { ...p, aggregates: [...p.aggregates, ...p.aggregates] } };
    },
    want: ['duplicate-aggregate'],
  },
];

describe('sequence', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('says which steps are missing', () => {
    const { snap, plan: p } = withMoves([move(1, 1, 's1', 'h1', 'h3'), move(4, 2, 's3', 'h2', 'h3')])();
    const [v] = checkPlan(snap, p).violations;
    expect(v).toMatchObject({ code: 'steps-not-ordered', constraint: 'sequence', aggregate: 'gold' });
    expect(v?.detail).toBe('2 moves but step 2 missing (steps must be 1..2)');
  });

  it('replays a wave that comes back as a wave of its own', () => {
    // Steps 1 and 3 share wave 1 but step 2 (wave 2) sits between them: they are not in flight
    // together, so h1's two outgoing migrations do not break the per-host limit.
    const { snap, plan: p } = withMoves([
      move(1, 1, 's1', 'h1', 'h3'),
      move(2, 2, 's3', 'h2', 'h3'),
      move(3, 1, 's2', 'h1', 'h3'),
    ])();
    expect(checkPlan(snap, p).violations.map((v) => [v.code, v.step])).toEqual([['wave-order', 3]]);
  });
});
