import { describe, expect, it } from 'vitest';
import { checkPlan, VIOLATION_CODES } from '../../src/checker/index.js';
import { codes, group, host, move, plan, server, snapshot } from './fixtures.js';

// gold: g1 (two 4-core servers, one measured), g2 (one), g3 (empty), g4 (disabled, one to evacuate).
// silver: s1, s2 in zone az2. Groups: db anti-affinity over a1, a2.
function cloud() {
  return snapshot(
    [
      host('g1', { vcpus: 8, ramMB: 16384 }),
      host('g2', { vcpus: 8, ramMB: 16384, load: { cpu: 3, memoryMB: 6000 } }),
      host('g3', { vcpus: 8, ramMB: 16384 }),
      host('g4', { vcpus: 16, ramMB: 32768, status: 'disabled' }),
      host('s1', { vcpus: 8, ramMB: 16384, az: 'az2', aggregates: ['silver', 'unplanned'] }),
      host('s2', { vcpus: 8, ramMB: 16384, az: 'az2', aggregates: ['silver'] }),
    ],
    [
      server('a1', 'g1', { vcpus: 4, ramMB: 8192, load: { cpu: 3.5, memoryMB: 7000 } }),
      server('a2', 'g1', { vcpus: 4, ramMB: 8192 }),
      server('b1', 'g2', { vcpus: 4, ramMB: 8192 }),
      server('e1', 'g4', { vcpus: 2, ramMB: 4096 }),
      server('x1', 's1', { vcpus: 2, ramMB: 2048 }),
      server('x2', 's1', { vcpus: 2, ramMB: 2048 }),
    ],
    [group('db', 'anti-affinity', ['a1', 'a2'])],
  );
}

describe('checkPlan', () => {
  it('passes a valid multi-wave plan over two aggregates with zero violations', () => {
    const snap = cloud();
    const p = plan(
      snap,
      {
        gold: [
          { ...move(1, 1, 'a2', 'g1', 'g3'), makesRoomFor: 2, reason: 'a2 makes room for step 2' },
          // e1 can land on g1 only once a2's claim there is released at the end of wave 1.
          { ...move(2, 2, 'e1', 'g4', 'g1'), phase: 'evacuate', mandatory: 'evacuation' },
        ],
        silver: [move(1, 1, 'x2', 's1', 's2')],
      },
      { limits: { maxMoves: 3, perHostOutgoing: 1, globalConcurrent: 2 } },
    );
    expect(checkPlan(snap, p)).toEqual({ ok: true, violations: [] });
  });

  it('collects every violation instead of stopping at the first', () => {
    const snap = cloud();
    const p = plan(
      snap,
      {
        gold: [
          move(1, 1, 'a2', 'g1', 'g2'), // g2: b1 + a2 fill its 8 cores exactly
          move(2, 1, 'a1', 'g1', 'g2'), // a second outgoing from g1, g2 over, a1 joins a2
          move(3, 1, 'ghost', 'g2', 'g3'),
          move(5, 2, 'x1', 's1', 's2'), // no step 4; a silver move listed under gold
        ],
        silver: [],
      },
      { limits: { maxMoves: 3, perHostOutgoing: 1, globalConcurrent: 10 } },
    );
    const result = checkPlan(snap, p);
    expect(result.ok).toBe(false);
    expect(codes(result.violations)).toEqual([
      'anti-affinity-worse',
      'budget-exceeded',
      'capacity-exceeded',
      'host-in-wrong-aggregate',
      'host-send-receive', // g2 receives a2 and a1 and sends ghost
      'hot-not-first', // g1 runs hot (memory 100%); ghost leaves cool g2 in the same wave
      'per-host-concurrency',
      'steps-not-ordered',
      'unknown-server',
      'wave-send-receive',
    ]);
    expect(result.violations.every((v) => VIOLATION_CODES.includes(v.code))).toBe(true);
  });

  it('lists violations in replay order: plan-wide first, then step by step', () => {
    const snap = cloud();
    const p = plan(
      snap,
      { gold: [move(1, 1, 'a2', 'g1', 'g4'), move(2, 2, 'b1', 'g2', 'g4')] },
      {
        limits: { maxMoves: 1, perHostOutgoing: 1, globalConcurrent: 10 },
      },
    );
    expect(checkPlan(snap, p).violations.map((v) => [v.constraint, v.code, v.step])).toEqual([
      ['budget', 'budget-exceeded', undefined],
      ['placement', 'destination-disabled', 1],
      ['placement', 'destination-disabled', 2],
    ]);
  });

  it('does not change the snapshot or the plan', () => {
    const snap = cloud();
    const p = plan(snap, { gold: [move(1, 1, 'a2', 'g1', 'g3')] });
    const before = JSON.stringify([snap, p]);
    checkPlan(snap, p);
    expect(JSON.stringify([snap, p])).toBe(before);
  });
});
