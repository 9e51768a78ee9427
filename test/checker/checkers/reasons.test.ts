import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { Move } from '../../../src/model/plan.js';
import { approvedPlan, codesOf, inGold, move, plan, threeHosts } from '../fixtures.js';

// By memory (cpu counts 0 everywhere, no load measured): h1 holds s1 and s2, 8192 of 32768 MiB
// (25%); h2 holds s3 of 2048 MiB (6.25%); h3 is empty. Mean 10.42%, so h1 is 14.58 points above it.
// Imbalance 0.5 × stddev(0.25, 0.0625, 0) = 0.053115; s1 to h3 leaves (0.125, 0.0625, 0.125), 0.014731:
// a gain of 0.038383.
const snap = () => threeHosts({}, { s3: { ramMB: 2048 } });
const TRUE = 'moving s1 from h1 (cpu 0%, memory 25%) to h3 (cpu 0%, memory 0%); imbalance 0.0531 -> 0.0147';

function judged(reason: string, extra: Partial<Move> = {}, hotThreshold?: number): string[] {
  const s = snap();
  const limits = {
    maxMoves: 10,
    perHostOutgoing: 1,
    globalConcurrent: 10,
    ...(hotThreshold ? { hotThreshold } : {}),
  };
  const m: Move = { ...move(1, 1, 's1', 'h1', 'h3'), reason, gain: 0.038383, ...extra };
  return checkPlan(s, plan(s, { gold: [m] }, { limits }))
    .violations.filter((v) => v.code === 'reason-mismatch')
    .map((v) => v.detail);
}

describe('reasons', () => {
  it.each([
    ['the figures of both hosts and the imbalance, to 4 places', TRUE],
    ['the imbalance to 6 places', 'imbalance 0.053115 -> 0.014731'],
    ['the distance to the mean', "h1 is 15 points above the aggregate's memory mean"],
    ['room on a host below the mean', 'h3 has room'],
    ['a host quoted in words only', 'moving it off h1 for balance'],
    ['parentheses that quote no figures', 'vm-s1 (s1) leaves h1 (enabled)'],
  ])('passes %s', (_what, reason) => expect(judged(reason)).toEqual([]));

  it.each([
    [
      'a utilization one point off',
      'moving s1 from h1 (cpu 0%, memory 26%) to h3',
      "step 1's reason: h1 memory 26%, but it is at 25% before this step",
    ],
    [
      'an imbalance that does not move',
      'imbalance 0.0531 -> 0.0531',
      `step 1's reason: "imbalance 0.0531 -> 0.0531", but step order gives 0.053115 -> 0.014731`,
    ],
    [
      'a distance to the mean one point off',
      "h1 is 14 points above the aggregate's memory mean",
      `step 1's reason: "h1 is 14 points above the aggregate's memory mean", but it is 15 (25% against a mean of 10%)`,
    ],
    [
      'room on a host at or above the mean in every dimension',
      'h1 has room',
      `step 1's reason: "h1 has room", but it is at or above the aggregate's mean in every dimension (cpu 0%, memory 25%)`,
    ],
    [
      'a host running hot at 25%',
      'h1 runs hot',
      `step 1's reason: "h1 runs hot", but it is at cpu 0%, memory 25%, below 85%`,
    ],
    [
      'an exchange the move does not declare',
      'exchange with step 2',
      `step 1's reason: "exchange with step 2", but exchangeWith is absent`,
    ],
  ])('flags %s', (_what, reason, detail) => expect(judged(reason)).toEqual([detail]));

  it('reads "runs hot" against the plan\u2019s hot threshold', () => {
    expect(judged('h1 runs hot', {}, 0.2)).toEqual([]);
    expect(judged('h1 runs hot', {}, 0.3)).toHaveLength(1);
  });

  it('holds the recorded gain to the imbalance it quotes', () => {
    expect(judged(TRUE, { gain: 0.0053 })).toEqual([
      "step 1's reason: gain 0.0053 recorded, but the imbalance goes 0.053115 -> 0.014731",
    ]);
    expect(judged(TRUE, { gain: 0.038384 })).toEqual([]);
  });

  it('holds the direction of the quoted imbalance to the sign of the gain', () => {
    // Both quotes are right to 1 place (0.1 -> 0.0), but a gain of -0.01 says it got worse.
    const found = judged('imbalance 0.1 -> 0.0', { gain: -0.01 });
    expect(found[0]).toContain('"imbalance 0.1 -> 0.0" beside a gain of -0.01');
  });

  it('matches "makes room for step N" to makesRoomFor', () => {
    expect(judged('makes room for step 2', { makesRoomFor: 3 })).toEqual([
      `step 1's reason: "makes room for step 2", but makesRoomFor is 3`,
    ]);
  });

  it('quotes each step against the state the earlier steps leave', () => {
    // After step 1, h3 holds s1: 5000 of 32768 MiB, 15% (where the snapshot says 0%).
    const s = threeHosts({}, { s1: { ramMB: 5000 } });
    const second = (h3: string): string[] =>
      codesOf({
        snap: s,
        plan: plan(s, {
          gold: [
            move(1, 1, 's1', 'h1', 'h3'),
            { ...move(2, 2, 's3', 'h2', 'h3'), reason: `moving s3 from h2 to h3 (cpu 0%, memory ${h3})` },
          ],
        }),
      });
    expect(second('15%')).toEqual([]);
    expect(second('0%')).toEqual(['reason-mismatch']);
  });

  it('passes a plan whose reasons come from an independent replay', () => {
    const { snap: s, plan: p } = approvedPlan();
    expect(checkPlan(s, p).violations).toEqual([]);
    // g1 runs hot (88%) at step 1 only: by step 3 a1 has left it at 50%.
    expect(p.aggregates.flatMap((a) => a.moves).filter((m) => m.reason.includes('runs hot'))).toHaveLength(1);
  });

  it('uses the plan\u2019s dimension names only', () => {
    // "disk 90%" names no dimension the plan reports, so it is not a figure to check.
    expect(judged('h1 (disk 90%)')).toEqual([]);
    expect(inGold([move(1, 1, 's1', 'h1', 'h3')]).plan.aggregates[0]?.before.dimensions).toHaveProperty(
      'memory',
    );
  });
});
