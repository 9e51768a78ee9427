// The service's wave check: the moves of a later wave judged on a fresh reading with the same
// rule as the loop's start check, against the stored plan the execution runs.
import { describe, expect, it } from 'vitest';
import type { MoveRecord } from '../../src/executor/journal.js';
import type { Plan } from '../../src/model/plan.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { waveGainCheck } from '../../src/service/wave-check.js';
import { cluster, host, server } from '../fixtures/cluster.js';

function world(): Snapshot {
  const hosts = ['a', 'b', 'c', 'd'].map((n) => host(n, { aggregates: ['gold'], vcpus: 16 }));
  const servers = [
    ...[1, 2, 3, 4, 5, 6].map((i) => server(`s${i}`, 'a', { cpu: 2 })),
    server('s7', 'b', { cpu: 1 }),
    server('s8', 'c', { cpu: 1 }),
  ];
  const snap = cluster(hosts, servers);
  for (const h of snap.hosts) {
    const on = snap.servers.filter((s) => s.host === h.name);
    h.load = { cpu: on.reduce((a, s) => a + (s.load?.cpu ?? 0), 0), memoryMB: 0 };
  }
  return snap;
}

function records(plan: Plan): MoveRecord[] {
  return plan.aggregates[0]!.moves.map((m) => ({
    executionId: 'e1',
    step: m.step,
    wave: m.wave,
    serverId: m.server,
    from: m.from,
    to: m.to,
    estimatedSeconds: 60,
    state: 'pending',
    attempt: 1,
    novaMigrationId: null,
    issuedAt: null,
    endedAt: null,
    detail: null,
  }));
}

const execution = (planId: string | null) => ({
  id: 'e1',
  aggregate: 'gold',
  planId,
  state: 'running' as const,
  startedAt: '2026-11-28T23:00:00.000Z',
  endedAt: null,
  startedBy: 'loop:active',
});

describe('waveGainCheck', () => {
  const plan = planSnapshot(world(), DEFAULT_POLICY);
  const moves = records(plan);

  it('keeps the moves that still pay on the reading', async () => {
    expect(moves.length).toBeGreaterThan(1);
    let reads = 0;
    const check = waveGainCheck({
      plan: async (id) => (id === 'p1' ? plan : null),
      read: async () => {
        reads++;
        return world();
      },
      dimensions: () => DEFAULT_POLICY.dimensions,
    });
    expect(await check({ execution: execution('p1'), wave: 2, moves })).toEqual([]);
    expect(reads).toBe(1);
  });

  it('drops, with the figures, the moves that no longer pay once the load has spread by itself', async () => {
    const check = waveGainCheck({
      plan: async () => plan,
      read: async () => {
        const snap = world();
        for (const s of snap.servers) s.load = { cpu: 0.5, memoryMB: s.load?.memoryMB ?? 0 };
        for (const h of snap.hosts) h.load = { cpu: 2, memoryMB: h.load?.memoryMB ?? 0 };
        return snap;
      },
      dimensions: () => DEFAULT_POLICY.dimensions,
    });
    const dropped = await check({ execution: execution('p1'), wave: 2, moves });
    expect(dropped.length).toBeGreaterThan(0);
    for (const d of dropped)
      expect(d.why).toMatch(
        /no longer pays on fresh figures: imbalance|needed step \d+, which no longer pays/,
      );
    expect(dropped.map((d) => d.step).every((s) => moves.some((m) => m.step === s))).toBe(true);
  });

  it('reads nothing for an operator task (no plan), a purged plan, or moves the plan does not hold', async () => {
    let reads = 0;
    const check = waveGainCheck({
      plan: async (id) => (id === 'p1' ? plan : null),
      read: async () => {
        reads++;
        return world();
      },
      dimensions: () => DEFAULT_POLICY.dimensions,
    });
    expect(await check({ execution: execution(null), wave: 2, moves })).toEqual([]);
    expect(await check({ execution: execution('purged'), wave: 2, moves })).toEqual([]);
    const other = moves.map((m) => ({ ...m, serverId: `not-${m.serverId}` }));
    expect(await check({ execution: execution('p1'), wave: 2, moves: other })).toEqual([]);
    expect(reads).toBe(0);
  });
});
