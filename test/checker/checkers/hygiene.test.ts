import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { Move } from '../../../src/model/plan.js';
import {
  type Case,
  codesOf,
  group,
  host,
  inGold,
  move,
  plan,
  server,
  snapshot,
  threeHosts,
} from '../fixtures.js';

// Four hosts in gold, one server on each of h1..h3 (s1, s2, s3), h4 empty; perHostOutgoing 2 so
// that only hygiene speaks.
const four = (hosts: Parameters<typeof host>[1][] = []) =>
  snapshot(
    ['h1', 'h2', 'h3', 'h4'].map((n, i) => host(n, hosts[i])),
    [server('s1', 'h1'), server('s2', 'h2'), server('s3', 'h3'), server('s4', 'h1')],
  );
const inFour = (moves: Move[], hosts?: Parameters<typeof host>[1][]) => () =>
  inGold(moves, { perHostOutgoing: 2 }, four(hosts));

const evacuation = (m: Move): Move => ({ ...m, phase: 'evacuate', mandatory: 'evacuation' });

const cases: Case[] = [
  {
    name: 'moves that touch each host once in one role',
    build: inFour([move(1, 1, 's1', 'h1', 'h4'), move(2, 1, 's2', 'h2', 'h4'), move(3, 2, 's4', 'h1', 'h4')]),
    want: [],
  },
  {
    name: 'a server moved in two waves',
    build: inFour([move(1, 1, 's1', 'h1', 'h4'), move(2, 2, 's1', 'h4', 'h3')]),
    want: ['host-send-receive', 'server-moved-twice'],
  },
  {
    name: 'a host receiving and sending in one wave',
    build: inFour([move(1, 1, 's1', 'h1', 'h2'), move(2, 1, 's2', 'h2', 'h3')]),
    want: ['host-send-receive', 'wave-send-receive'],
  },
  {
    name: 'a host receiving, then sending a wave later',
    build: inFour([move(1, 1, 's1', 'h1', 'h2'), move(2, 2, 's2', 'h2', 'h3')]),
    want: ['host-send-receive'],
  },
  {
    name: 'a declared exchange over two waves',
    build: inFour([
      { ...move(1, 1, 's1', 'h1', 'h2'), exchangeWith: 2 },
      { ...move(2, 2, 's2', 'h2', 'h1'), exchangeWith: 1 },
    ]),
    // exchange-unpaid: two equal servers trading hosts buy nothing (worth.test.ts).
    want: ['exchange-unpaid'],
  },
  {
    name: 'an exchange declared by one half only',
    build: inFour([{ ...move(1, 1, 's1', 'h1', 'h2'), exchangeWith: 2 }, move(2, 2, 's2', 'h2', 'h1')]),
    want: ['exchange-unpaid', 'host-send-receive'],
  },
  {
    name: 'a move making room for a later one into its source',
    build: inFour([{ ...move(1, 1, 's1', 'h1', 'h4'), makesRoomFor: 2 }, move(2, 2, 's2', 'h2', 'h1')]),
    want: [],
  },
  {
    name: 'the arriving move claiming to make room for the leaving one',
    build: inFour([move(1, 1, 's1', 'h1', 'h4'), { ...move(2, 2, 's2', 'h2', 'h1'), makesRoomFor: 1 }]),
    want: ['host-send-receive'],
  },
  {
    name: 'both moves mandatory',
    build: () => {
      const snap = snapshot(
        [host('h1', { status: 'disabled' }), host('h2', { status: 'disabled' }), host('h3')],
        [server('s1', 'h1'), server('s2', 'h2')],
      );
      return inGold(
        [evacuation(move(1, 1, 's1', 'h1', 'h3')), evacuation(move(2, 2, 's2', 'h2', 'h1'))],
        {},
        snap,
      );
    },
    // Only the destination-disabled of step 2: the pair itself is exempt.
    want: ['destination-disabled'],
  },
  {
    name: 'one of the two mandatory',
    build: () => {
      const snap = snapshot(
        [host('h1', { status: 'disabled' }), host('h2'), host('h3')],
        [server('s1', 'h1'), server('s2', 'h2')],
      );
      return inGold([evacuation(move(1, 1, 's1', 'h1', 'h2')), move(2, 2, 's2', 'h2', 'h3')], {}, snap);
    },
    want: ['host-send-receive'],
  },
];

describe('hygiene', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('names a server moved in two aggregates against the whole plan', () => {
    const snap = snapshot(
      [host('a1'), host('a2'), host('b1', { aggregates: ['silver'] })],
      [server('s1', 'a1'), server('s2', 'b1')],
    );
    const p = plan(snap, { gold: [move(1, 1, 's1', 'a1', 'a2')], silver: [move(1, 1, 's1', 'a2', 'b1')] });
    const twice = checkPlan(snap, p).violations.filter((v) => v.code === 'server-moved-twice');
    expect(twice).toEqual([
      {
        code: 'server-moved-twice',
        constraint: 'hygiene',
        aggregate: '*',
        server: 's1',
        detail: 'server s1 moves 2 times (gold step 1, silver step 1); a plan moves a server at most once',
      },
    ]);
  });

  it('reports a host once per wave, with every step on each side', () => {
    const snap = four();
    const p = plan(snap, {
      gold: [move(1, 1, 's1', 'h1', 'h2'), move(2, 1, 's4', 'h1', 'h2'), move(3, 1, 's2', 'h2', 'h3')],
    });
    const waves = checkPlan(snap, p, { perHostOutgoing: 2 }).violations.filter(
      (v) => v.code === 'wave-send-receive',
    );
    expect(waves.map((v) => [v.host, v.step, v.detail])).toEqual([
      ['h2', 3, 'in wave 1, h2 is the source of step 3 and the destination of steps 1, 2'],
    ]);
  });

  it('reports a host once with the number of unexcused pairs', () => {
    const snap = four();
    const p = plan(snap, {
      gold: [move(1, 1, 's1', 'h1', 'h2'), move(2, 2, 's4', 'h1', 'h2'), move(3, 3, 's2', 'h2', 'h3')],
    });
    const found = checkPlan(snap, p).violations.filter((v) => v.code === 'host-send-receive');
    expect(found.map((v) => [v.host, v.step])).toEqual([['h2', 3]]);
    expect(found[0]?.detail).toContain('source of step 3 and the destination of step 1 (1 more such pair)');
  });
});

describe('hot hosts first', () => {
  // h1 runs hot: 15 busy cores of 16 (94%). h2 and h3 are cool.
  const hot = () =>
    threeHosts({ h1: { load: { cpu: 15 } }, h2: { load: { cpu: 2 } }, h3: { load: { cpu: 1 } } });
  const withHot = (moves: Move[], hotThreshold?: number) => () => {
    const snap = hot();
    const limits = {
      maxMoves: 10,
      perHostOutgoing: 1,
      globalConcurrent: 10,
      ...(hotThreshold ? { hotThreshold } : {}),
    };
    return { snap, plan: plan(snap, { gold: moves }, { limits }) };
  };

  const hotCases: Case[] = [
    {
      name: 'a cool move in the wave after the last move off a hot host',
      build: withHot([move(1, 1, 's1', 'h1', 'h3'), move(2, 2, 's3', 'h2', 'h3')]),
      want: [],
    },
    {
      name: 'a cool move in the same wave as a move off a hot host',
      build: withHot([move(1, 1, 's1', 'h1', 'h3'), move(2, 1, 's3', 'h2', 'h3')]),
      want: ['hot-not-first'],
    },
    {
      name: 'a cool move before a later move off a hot host',
      build: withHot([move(1, 1, 's3', 'h2', 'h3'), move(2, 2, 's1', 'h1', 'h3')]),
      want: ['hot-not-first'],
    },
    {
      name: 'nothing runs hot at the plan threshold of 95%',
      build: withHot([move(1, 1, 's3', 'h2', 'h3'), move(2, 2, 's1', 'h1', 'h3')], 0.95),
      want: [],
    },
    {
      name: 'h2 runs hot too at 10%',
      build: withHot([move(1, 1, 's3', 'h2', 'h3'), move(2, 2, 's1', 'h1', 'h3')], 0.1),
      want: [],
    },
  ];
  it.each(hotCases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  // While hot: h1 runs at 15 cores of 16 (94%) with s1 and s2 on it; s3 on cool h2. Moving s1
  // (4 cores) off in wave 1 leaves h1 at 11 (69%); moving 1 core leaves it at 14 (88%), still hot.
  const whileHot = (s1Cpu: number, moves: Move[]) => () => {
    const snap = threeHosts(
      { h1: { load: { cpu: 15 } }, h2: { load: { cpu: 2 } }, h3: { load: { cpu: 1 } } },
      { s1: { load: { cpu: s1Cpu } }, s2: { load: { cpu: 2 } }, s3: { load: { cpu: 2 } } },
    );
    const limits = { maxMoves: 10, perHostOutgoing: 1, globalConcurrent: 10 };
    return { snap, plan: plan(snap, { gold: moves }, { limits }) };
  };
  const coolInBetween = [
    move(1, 1, 's1', 'h1', 'h3'),
    move(2, 2, 's3', 'h2', 'h3'),
    move(3, 3, 's2', 'h1', 'h3'),
  ];
  const whileHotCases: Case[] = [
    {
      name: 'a cool move once wave 1 has cooled the hot host, before its next move',
      build: whileHot(4, coolInBetween),
      want: [],
    },
    {
      name: 'a cool move while the hot host is still hot at the start of its next move',
      build: whileHot(1, coolInBetween),
      want: ['hot-not-first'],
    },
    {
      name: 'the cooled host still sending beside the cool move: relief ended in wave 1',
      build: whileHot(4, [
        move(1, 1, 's1', 'h1', 'h3'),
        move(2, 2, 's3', 'h2', 'h3'),
        move(3, 2, 's2', 'h1', 'h3'),
      ]),
      want: [],
    },
    {
      name: 'a cool move in wave 1 beside the move that relieves the hot host',
      build: whileHot(4, [move(1, 1, 's1', 'h1', 'h3'), move(2, 1, 's3', 'h2', 'h3')]),
      want: ['hot-not-first'],
    },
  ];
  it.each(whileHotCases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('says until which wave the hot hosts are relieved', () => {
    const found = checkPlan(whileHot(1, coolInBetween)().snap, whileHot(1, coolInBetween)().plan).violations;
    expect(found.find((v) => v.code === 'hot-not-first')?.detail).toBe(
      'step 2 moves off h2, which does not run hot, in wave 2, while hot hosts (h1, at or above 85%) are relieved until wave 3',
    );
  });

  it('exempts a mandatory move off a cool host', () => {
    const snap = threeHosts({ h1: { load: { cpu: 15 } }, h2: { status: 'disabled' } }, {}, [
      group('db', 'anti-affinity', ['s1', 's2']),
    ]);
    const p = plan(snap, {
      gold: [evacuation(move(1, 1, 's3', 'h2', 'h3')), move(2, 2, 's1', 'h1', 'h3')],
    });
    expect(codesOf({ snap, plan: p })).toEqual([]);
  });
});
