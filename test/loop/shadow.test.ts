import { describe, expect, it } from 'vitest';
import { shadowReport } from '../../src/loop/shadow.js';
import type { AggregatePlan, Move } from '../../src/model/plan.js';
import type { MigrationRecord } from '../../src/model/snapshot.js';

const mv = (server: string): Move => ({
  step: 1,
  wave: 1,
  server,
  from: 'a',
  to: 'b',
  phase: 'spread',
  reason: 'r',
  estimatedSeconds: 5,
});
const plan = (servers: string[], before: number, after: number): AggregatePlan => ({
  name: 'gold',
  moves: servers.map(mv),
  before: { imbalance: before, dimensions: {} },
  after: { imbalance: after, dimensions: {} },
  hostsFreed: [],
  unresolved: [],
});
const mig = (serverId: string, source: string, dest: string, finishedAt: string): MigrationRecord => ({
  serverId,
  source,
  dest,
  status: 'completed',
  ramMB: 1024,
  startedAt: finishedAt,
  finishedAt,
});

describe('shadow report', () => {
  it('compares the plans made with what the cloud did, within the period and the aggregate', () => {
    const r = shadowReport({
      aggregate: 'gold',
      from: '2026-11-29T00:00:00Z',
      to: '2026-11-30T00:00:00Z',
      plans: [
        { at: '2026-11-29T01:00:00Z', plan: plan(['s1', 's2'], 0.3, 0.2) },
        { at: '2026-11-29T13:00:00Z', plan: plan(['s2', 's3', 's4'], 0.31, 0.18) },
      ],
      migrations: [
        mig('s3', 'a', 'c', '2026-11-29T05:00:00Z'),
        mig('s9', 'b', 'a', '2026-11-29T06:00:00Z'),
        mig('s1', 'x', 'y', '2026-11-29T07:00:00Z'),
        mig('s2', 'a', 'b', '2026-11-30T07:00:00Z'),
      ],
      hosts: new Set(['a', 'b', 'c']),
      imbalanceAtStart: 0.3,
      imbalanceAtEnd: 0.33,
    });
    expect(r).toMatchObject({
      plansMade: 2,
      serversWouldMove: 4,
      movesInLatestPlan: 3,
      latestPromise: { before: 0.31, after: 0.18 },
      migrationsInCloud: 2,
      serversMovedInCloud: 2,
      overlap: 1,
    });
    expect(r.summary).toEqual([
      '2 plan(s) made; 4 distinct server(s) would have moved, 3 in the latest plan',
      'the latest plan promised imbalance 0.31 -> 0.18',
      'the cloud itself made 2 live migration(s) touching this aggregate (2 server(s)), 1 of which Aicerine would also have moved',
      'measured imbalance went 0.3 -> 0.33 without Aicerine acting',
    ]);
  });

  it('a quiet day says so', () => {
    const r = shadowReport({
      aggregate: 'gold',
      from: '2026-11-29T00:00:00Z',
      to: '2026-11-30T00:00:00Z',
      plans: [],
      migrations: [],
      hosts: new Set(['a']),
      imbalanceAtStart: null,
      imbalanceAtEnd: null,
    });
    expect(r.summary).toEqual([
      '0 plan(s) made; 0 distinct server(s) would have moved',
      'the cloud itself made 0 live migration(s) touching this aggregate (0 server(s)), 0 of which Aicerine would also have moved',
    ]);
    expect(r.latestPromise).toBeNull();
  });
});
