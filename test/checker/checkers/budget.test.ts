import { describe, expect, it } from 'vitest';
import { type Case, codesOf, inGold, move, plan, threeHosts, twoAggregates } from '../fixtures.js';

const twoMoves = [move(1, 1, 's1', 'h1', 'h3'), move(2, 2, 's2', 'h1', 'h3')];
const planLimits = { maxMoves: 1, perHostOutgoing: 1, globalConcurrent: 9 };
const withPlanLimits = () => {
  const snap = threeHosts();
  return { snap, plan: plan(snap, { gold: twoMoves }, { limits: planLimits }) };
};

const cases: Case[] = [
  {
    name: 'over the budget given in the options',
    build: () => inGold(twoMoves, { maxMoves: 1 }),
    want: ['budget-exceeded'],
  },
  { name: 'at the budget', build: () => inGold(twoMoves, { maxMoves: 2 }), want: [] },
  {
    name: 'over the budget the plan says it was made under',
    build: withPlanLimits,
    want: ['budget-exceeded'],
  },
  {
    name: 'the options override the plan\u2019s own limit',
    build: () => ({ ...withPlanLimits(), options: { maxMoves: 5 } }),
    want: [],
  },
  {
    name: 'the budget counts all aggregates together',
    build: () => {
      const snap = twoAggregates();
      const moves = { gold: [move(1, 1, 's1', 'a1', 'a2')], silver: [move(1, 1, 's2', 'b1', 'b2')] };
      return { snap, plan: plan(snap, moves), options: { maxMoves: 1 } };
    },
    want: ['budget-exceeded'],
  },
  { name: 'no budget given: unchecked', build: () => inGold(twoMoves), want: [] },
];

describe('budget (guarantee 6)', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));
});
