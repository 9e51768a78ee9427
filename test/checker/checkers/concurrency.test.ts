import { describe, expect, it } from 'vitest';
import { type Case, codesOf, inGold, move, plan, threeHosts, twoAggregates } from '../fixtures.js';

// Two moves out of h1 (s1, s2) and one out of h2 (s3), all to h3.
const fromH1Twice = [move(1, 1, 's1', 'h1', 'h3'), move(2, 1, 's2', 'h1', 'h3')];
const fromEach = [move(1, 1, 's1', 'h1', 'h3'), move(2, 1, 's3', 'h2', 'h3')];
const planLimits = { maxMoves: 10, perHostOutgoing: 2, globalConcurrent: 10 };

const cases: Case[] = [
  {
    name: 'two outgoing from one host, default limit 1',
    build: () => inGold(fromH1Twice),
    want: ['per-host-concurrency'],
  },
  {
    name: 'two outgoing from one host in separate waves',
    build: () => inGold([move(1, 1, 's1', 'h1', 'h3'), move(2, 2, 's2', 'h1', 'h3')]),
    want: [],
  },
  { name: 'limit 2 from the options', build: () => inGold(fromH1Twice, { perHostOutgoing: 2 }), want: [] },
  {
    name: 'limit 2 from the plan',
    build: () => {
      const snap = threeHosts();
      return { snap, plan: plan(snap, { gold: fromH1Twice }, { limits: planLimits }) };
    },
    want: [],
  },
  {
    name: 'the host\u2019s own max_concurrent_live_migrations replaces the plan\u2019s limit',
    build: () => inGold(fromH1Twice, undefined, threeHosts({ h1: { maxConcurrentLiveMigrations: 2 } })),
    want: [],
  },
  {
    name: 'the host\u2019s own limit also tightens',
    build: () =>
      inGold(fromH1Twice, { perHostOutgoing: 5 }, threeHosts({ h1: { maxConcurrentLiveMigrations: 1 } })),
    want: ['per-host-concurrency'],
  },
  {
    name: 'global limit 1 with moves from two hosts in one wave',
    build: () => inGold(fromEach, { globalConcurrent: 1 }),
    want: ['global-concurrency'],
  },
  {
    name: 'global limit 2 with moves from two hosts in one wave',
    build: () => inGold(fromEach, { globalConcurrent: 2 }),
    want: [],
  },
  {
    name: 'the global limit applies per aggregate',
    build: () => {
      const snap = twoAggregates();
      const moves = { gold: [move(1, 1, 's1', 'a1', 'a2')], silver: [move(1, 1, 's2', 'b1', 'b2')] };
      return { snap, plan: plan(snap, moves), options: { globalConcurrent: 1 } };
    },
    want: [],
  },
];

describe('concurrency (guarantee 4)', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));
});
