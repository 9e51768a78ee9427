import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { Move, Plan, PlanThreshold } from '../../../src/model/plan.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
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
  spreadMove,
  TEST_THRESHOLD,
  threeHosts,
  truthful,
} from '../fixtures.js';

// threeHosts by memory (no cpu load is measured, so cpu counts 0 everywhere): h1 holds s1 and s2,
// 8192 of 32768 MiB (25%), h2 holds s3 (12.5%), h3 is empty. Imbalance 0.5 × stddev(0.25, 0.125, 0)
// = 0.051031; s1 to h3 evens all three (gain 0.051031), s3 to h3 only swaps h2's and h3's figures
// (gain 0), s3 to h1 makes it worse.
const spread = spreadMove;

const gains: Case[] = [
  { name: 'a spread move that gains', build: () => inGold([spread(1, 1, 's1', 'h1', 'h3')]), want: [] },
  {
    name: 'a spread move that gains nothing',
    build: () => inGold([spread(1, 1, 's3', 'h2', 'h3')]),
    want: ['nonpositive-gain'],
  },
  {
    name: 'a spread move that makes it worse',
    build: () => inGold([spread(1, 1, 's3', 'h2', 'h1')]),
    want: ['nonpositive-gain'],
  },
  { name: 'a pack move that makes it worse', build: () => inGold([move(1, 1, 's3', 'h2', 'h1')]), want: [] },
  {
    name: 'a zero-gain move making room for a later step into its source, named in its reason',
    build: () =>
      inGold([
        spread(1, 1, 's3', 'h2', 'h3', { makesRoomFor: 2, reason: 'makes room for step 2' }),
        spread(2, 2, 's1', 'h1', 'h2'),
      ]),
    want: [],
  },
  {
    name: 'the same without the words in its reason',
    build: () =>
      inGold([spread(1, 1, 's3', 'h2', 'h3', { makesRoomFor: 2 }), spread(2, 2, 's1', 'h1', 'h2')]),
    want: ['nonpositive-gain'],
  },
  {
    name: 'making room for a step that does not go into its source',
    build: () =>
      inGold([
        spread(1, 1, 's3', 'h2', 'h3', { makesRoomFor: 2, reason: 'makes room for step 2' }),
        spread(2, 2, 's1', 'h1', 'h3'),
      ]),
    want: ['nonpositive-gain'],
  },
  {
    name: 'making room for a step that together with it still loses',
    build: () =>
      inGold([
        spread(1, 1, 's3', 'h2', 'h1', { makesRoomFor: 2, reason: 'makes room for step 2' }),
        spread(2, 2, 's2', 'h3', 'h2'),
      ]),
    // step 2 names s2 on h3, where it is not: the pair's gain is judged all the same.
    want: ['nonpositive-gain', 'server-not-on-source'],
  },
];

// Two hosts: h1 holds b (12288 MiB) and t (2048), 43.75%; h2 holds s (4096), 12.5%. Trading b for s
// leaves h1 at 18.75% and h2 at 37.5%: the pair gains 0.03125, its first half alone loses 0.03125.
// Trading t for s instead makes h1 50% and h2 6.25%: worse.
const pair = (): Snapshot =>
  snapshot(
    [host('h1'), host('h2')],
    [
      server('b', 'h1', { ramMB: 12288 }),
      server('t', 'h1', { ramMB: 2048 }),
      server('s', 'h2', { ramMB: 4096 }),
    ],
  );
const exchange = (big: string, words = true): Move[] => [
  spread(1, 1, big, 'h1', 'h2', { exchangeWith: 2, reason: words ? 'exchange with step 2' : 'swap' }),
  spread(2, 2, 's', 'h2', 'h1', { exchangeWith: 1, reason: words ? 'exchange with step 1' : 'swap' }),
];

const exchanges: Case[] = [
  { name: 'an exchange that pays', build: () => inGold(exchange('b'), {}, pair()), want: [] },
  {
    name: 'an exchange whose reasons do not say so',
    build: () => inGold(exchange('b', false), {}, pair()),
    want: ['exchange-unpaid'],
  },
  {
    name: 'an exchange that does not pay',
    build: () => inGold(exchange('t'), {}, pair()),
    want: ['exchange-unpaid'],
  },
  {
    name: 'an exchange pointing at itself',
    build: () =>
      inGold([spread(1, 1, 's1', 'h1', 'h3', { exchangeWith: 1, reason: 'exchange with step 1' })]),
    want: ['exchange-unpaid'],
  },
];

describe('worth: gains and exchanges', () => {
  it.each(gains)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));
  it.each(exchanges)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('quotes the replayed gain', () => {
    const { snap, plan: p } = inGold([spread(1, 1, 's3', 'h2', 'h1')]);
    const [v] = checkPlan(snap, p).violations;
    // 0.5 × stddev(0.375, 0, 0) = 0.088388, from 0.051031.
    expect(v?.detail).toBe(
      'spread step 1 gains -0.037357 (step-order replay), and it makes room for no later step',
    );
  });
});

// Level 3's figures over 60 s and 4 GiB: max(0.005 + 0.00005 × 60, 0.04 + 0.02 + 0.005 × 4) = 0.08
// objective units, over 3 hosts 0.026667 a move.
const LEVEL3: PlanThreshold = {
  level: 3,
  mandatoryOnly: false,
  perMove: 0.04,
  perMinute: 0.02,
  perGiB: 0.005,
  minGain: 0.005,
  migrationCostPerSecond: 0.00005,
  softGroupPenalty: 0.5,
};

function underThreshold(snap: Snapshot, moves: Move[], threshold: PlanThreshold = LEVEL3): Plan {
  return plan(
    snap,
    { gold: moves },
    { limits: { maxMoves: 10, perHostOutgoing: 1, globalConcurrent: 10, threshold } },
  );
}

const sixty = (extra: Partial<Move> = {}): Move =>
  spread(1, 1, 's1', 'h1', 'h3', { estimatedSeconds: 60, ...extra });
const test = (bar: number, worth = 0.051031) => ({ threshold: { worth, bar } });

describe('worth: the threshold', () => {
  const thresholdCases: Case[] = [
    {
      name: 'a move that clears its bar and records it',
      build: () => ({ snap: threeHosts(), plan: underThreshold(threeHosts(), [sixty(test(0.026667))]) }),
      want: [],
    },
    {
      name: 'a move without its threshold test',
      build: () => ({ snap: threeHosts(), plan: underThreshold(threeHosts(), [sixty()]) }),
      want: ['below-threshold'],
    },
    {
      name: 'a move recording a bar 0.0000333 off',
      build: () => ({ snap: threeHosts(), plan: underThreshold(threeHosts(), [sixty(test(0.0267))]) }),
      want: ['below-threshold'],
    },
    {
      name: 'a plan without limits.threshold is not held to one',
      build: () => inGold([sixty()]),
      want: [],
    },
    {
      name: 'mandatory moves only',
      build: () => ({
        snap: threeHosts(),
        plan: underThreshold(threeHosts(), [sixty(test(0.026667))], {
          ...LEVEL3,
          level: 1,
          mandatoryOnly: true,
        }),
      }),
      want: ['below-threshold'],
    },
    {
      name: 'an evacuation is exempt, even under mandatory moves only',
      build: () => {
        const snap = threeHosts({ h1: { status: 'disabled' } });
        const m = sixty({ phase: 'evacuate', mandatory: 'evacuation' });
        return { snap, plan: underThreshold(snap, [m], { ...LEVEL3, mandatoryOnly: true }) };
      },
      want: [],
    },
  ];
  it.each(thresholdCases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('takes the stricter of minGain plus the per-second cost and the figures', () => {
    // max(0.2 + 0.001 × 60, 0) = 0.26, over 3 hosts 0.086667: above the gain of 0.051031.
    const t = { ...LEVEL3, perMove: 0, perMinute: 0, perGiB: 0, minGain: 0.2, migrationCostPerSecond: 0.001 };
    const snap = threeHosts();
    const found = checkPlan(snap, underThreshold(snap, [sixty(test(0.086667))], t)).violations;
    expect(found.map((v) => [v.code, v.detail])).toEqual([
      ['below-threshold', 'step 1 is worth 0.051031, below the bar 0.086667 their cost asks for'],
    ]);
  });

  it('counts memory copied: 16 GiB at 0.005 a GiB raises the bar to 0.04 + 0.02 + 0.08 = 0.14', () => {
    const snap = threeHosts({}, { s1: { ramMB: 16384 } });
    const found = checkPlan(snap, underThreshold(snap, [sixty(test(0.026667))])).violations;
    expect(found.map((v) => v.detail)).toContain(
      'step 1 records bar 0.026667, recomputed 0.046667 (60 s, s1 16384 MiB, 3 hosts)',
    );
  });

  it('credits a soft-group move with the violations it removes', () => {
    // s2 leaving s1 on h1 for h2 only swaps h1's and h2's figures (gain 0) but ends the soft
    // anti-affinity violation: worth 0.5 × 1 / 3 = 0.166667.
    const soft = (groups: ReturnType<typeof group>[]) => {
      const snap = threeHosts({}, {}, groups);
      const m = spread(1, 1, 's2', 'h1', 'h2', { phase: 'affinity', softGroup: true, estimatedSeconds: 60 });
      return codesOf({ snap, plan: underThreshold(snap, [{ ...m, ...test(0.026667, 0.166667) }]) });
    };
    expect(soft([group('web', 'soft-anti-affinity', ['s1', 's2'])])).toEqual([]);
    expect(soft([])).toEqual(['below-threshold']);
  });

  it('judges a make-room pair and an exchange together', () => {
    const limits = { maxMoves: 10, perHostOutgoing: 1, globalConcurrent: 10, threshold: TEST_THRESHOLD };
    const snap = threeHosts();
    const room = truthful(
      snap,
      plan(
        snap,
        { gold: [spread(1, 1, 's3', 'h2', 'h3', { makesRoomFor: 2 }), spread(2, 2, 's1', 'h1', 'h2')] },
        { limits },
      ),
    );
    expect(checkPlan(snap, room).violations).toEqual([]);
    // Step 1 alone is worth nothing against its bar.
    const alone = truthful(snap, plan(snap, { gold: [spread(1, 1, 's3', 'h2', 'h3')] }, { limits }));
    expect(codesOf({ snap, plan: alone })).toEqual(['below-threshold', 'nonpositive-gain']);

    const two = pair();
    const traded = truthful(two, plan(two, { gold: exchange('b') }, { limits }));
    expect(checkPlan(two, traded).violations).toEqual([]);
  });
});

describe('worth: mandatory labels', () => {
  const hard =
    (policy: 'anti-affinity' | 'soft-anti-affinity', members = ['s1', 's2']) =>
    () => {
      const snap = threeHosts({}, {}, [group('db', policy, members)]);
      return inGold(
        [{ ...move(1, 1, 's2', 'h1', 'h3'), phase: 'affinity', mandatory: 'hard-group' }],
        {},
        snap,
      );
    };
  const labels: Case[] = [
    {
      name: 'an evacuation of a disabled host',
      build: () =>
        inGold(
          [{ ...move(1, 1, 's1', 'h1', 'h3'), phase: 'evacuate', mandatory: 'evacuation' }],
          {},
          threeHosts({ h1: { status: 'disabled' } }),
        ),
      want: [],
    },
    {
      name: 'an evacuation of a host that is up and enabled',
      build: () => inGold([{ ...move(1, 1, 's1', 'h1', 'h3'), phase: 'evacuate', mandatory: 'evacuation' }]),
      want: ['mandatory-mislabelled'],
    },
    {
      name: 'an evacuation label on a spread move',
      build: () =>
        inGold(
          [spread(1, 1, 's1', 'h1', 'h3', { mandatory: 'evacuation' })],
          {},
          threeHosts({ h1: { status: 'disabled' } }),
        ),
      want: ['mandatory-mislabelled'],
    },
    { name: 'a hard-group repair', build: hard('anti-affinity'), want: [] },
    {
      name: 'a "hard-group" move for a soft group',
      build: hard('soft-anti-affinity'),
      want: ['mandatory-mislabelled'],
    },
    {
      name: 'a hard-group move that repairs nothing',
      build: hard('anti-affinity', ['s2', 's3']),
      want: ['mandatory-mislabelled'],
    },
  ];
  it.each(labels)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));
});
