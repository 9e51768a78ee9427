import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { applyHolds, cooldownHolds, hostHolds, markHeldHosts } from '../../src/loop/holds.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { cluster, host, server } from '../fixtures/cluster.js';

function hot() {
  return cluster(
    [host('a', { aggregates: ['gold'] }), host('b', { aggregates: ['gold'] })],
    [server('s1', 'a', { cpu: 6 }), server('s2', 'a', { cpu: 6 }), server('s3', 'a', { cpu: 6 })],
  );
}

describe('holds', () => {
  it('cooldowns still running become holds; expired ones do not', () => {
    const now = new Date('2026-11-29T14:00:00Z');
    const holds = cooldownHolds(
      [
        { serverId: 's1', movedAt: '2026-11-29T13:30:00Z', from: 'b', to: 'a' },
        { serverId: 's2', movedAt: '2026-11-29T12:00:00Z', from: 'b', to: 'a' },
      ],
      3600,
      now,
    );
    expect(holds).toEqual([
      { serverId: 's1', why: 'cooldown until 2026-11-29T14:30:00.000Z after its move from b to a' },
    ]);
  });

  it('the planner never moves a held server, and the snapshot given is not changed', () => {
    const snap = hot();
    const free = planSnapshot(snap, DEFAULT_POLICY);
    const moved = free.aggregates.flatMap((a) => a.moves.map((m) => m.server));
    expect(moved.length).toBeGreaterThan(0);
    const held = applyHolds(
      snap,
      moved.map((id) => ({ serverId: id, why: 'cooldown' })),
    );
    expect(snap.servers.every((s) => s.metadata === undefined)).toBe(true);
    const plan = planSnapshot(held, DEFAULT_POLICY);
    const movedNow = plan.aggregates.flatMap((a) => a.moves.map((m) => m.server));
    expect(movedNow.filter((id) => moved.includes(id))).toEqual([]);
  });

  it('the checker flags a move of a held server', () => {
    const snap = hot();
    const plan = planSnapshot(snap, DEFAULT_POLICY);
    const first = plan.aggregates[0]!.moves[0]!;
    const held = applyHolds(snap, [{ serverId: first.server, why: 'quarantined' }]);
    const result = checkPlan(held, plan);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result.violations)).toMatch(/aicerine:hold/);
  });
});

describe('hosts held by operator tasks', () => {
  const three = () =>
    cluster(
      [
        host('a', { aggregates: ['gold'] }),
        host('b', { aggregates: ['gold'] }),
        host('c', { aggregates: ['gold'] }),
      ],
      [
        server('s1', 'a', { cpu: 6 }),
        server('s2', 'a', { cpu: 6 }),
        server('s3', 'a', { cpu: 6 }),
        server('s4', 'c', { cpu: 1 }),
      ],
    );

  it('plans no move from or to a held host, and says why in the plan', () => {
    const snap = three();
    const free = planSnapshot(snap, DEFAULT_POLICY);
    expect(free.aggregates[0]!.moves.some((m) => m.to === 'b')).toBe(true);
    const held = new Map([
      ['b', 'held by task 7'],
      ['c', 'held by task 8'],
    ]);
    const planning = markHeldHosts(applyHolds(snap, hostHolds(snap, held)), held);
    expect(hostHolds(snap, held)).toEqual([{ serverId: 's4', why: 'on c, held by task 8' }]);
    const plan = planSnapshot(planning, DEFAULT_POLICY);
    const moves = plan.aggregates.flatMap((a) => a.moves);
    expect(moves.filter((m) => ['b', 'c'].includes(m.to) || ['b', 'c'].includes(m.from))).toEqual([]);
    expect(plan.aggregates[0]!.unresolved).toEqual([
      'c cannot be drained: s4 stays, held by Aicerine: on c, held by task 8',
    ]);
    expect(markHeldHosts(snap, new Map())).toBe(snap);
  });
});
