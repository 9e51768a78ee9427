import { describe, expect, it } from 'vitest';
import type { NovaMigration } from '../../src/cloud/openstack/nova.js';
import { historyContextFromSnapshot, samplesFromHistory } from '../../src/costs/history.js';
import { host, server, snapshot } from '../sim/fixtures.js';

let nextId = 1;
function mig(
  server: string,
  source: string,
  dest: string | null,
  created: string,
  updated: string | null,
  status = 'completed',
  type = 'live-migration',
): NovaMigration {
  return {
    id: nextId++,
    uuid: null,
    serverId: server,
    migrationType: type,
    status,
    sourceCompute: source,
    destCompute: dest,
    createdAt: created,
    updatedAt: updated,
  };
}

const RAM: Record<string, number> = { a: 2048, b: 4096, c: 8192, d: 8192 };
const AGG: Record<string, string[]> = { h1: ['gold'], h2: ['gold'], h3: ['silver'], h4: [] };
const ctx = {
  ramOf: (id: string) => RAM[id],
  aggregatesOf: (h: string) => AGG[h] ?? [],
};

describe('cost samples from os-migrations', () => {
  it('times a migration from its request to its final status (Nova times are UTC without a zone)', () => {
    const r = samplesFromHistory(
      [mig('a', 'h1', 'h2', '2026-11-01T10:00:00.000000', '2026-11-01T10:00:12.000000')],
      ctx,
    );
    expect(r.samples).toEqual([
      {
        aggregate: 'gold',
        serverId: 'a',
        ramMB: 2048,
        seconds: 12,
        outcome: 'completed',
        source: 'nova-history',
        endedAt: '2026-11-01T10:00:12.000Z',
        novaMigrationId: expect.any(Number),
      },
    ]);
  });

  it('starts a migration that queued behind another of the same source when that one ended', () => {
    const r = samplesFromHistory(
      [
        mig('a', 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:20'),
        mig('b', 'h1', 'h2', '2026-11-01T10:00:01', '2026-11-01T10:00:50'),
        mig('c', 'h1', 'h2', '2026-11-01T10:00:02', '2026-11-01T10:01:30'),
        // Another source is not a queue for h1.
        mig('d', 'h2', 'h1', '2026-11-01T10:00:05', '2026-11-01T10:00:35'),
      ],
      ctx,
    );
    const secs = Object.fromEntries(r.samples.map((s) => [s.serverId, [s.seconds, s.queuedSeconds ?? 0]]));
    expect(secs).toEqual({ a: [20, 0], b: [30, 19], c: [40, 48], d: [30, 0] });
    expect(r.queueCorrected).toBe(2);
  });

  it('lets as many run at once as the source allows', () => {
    const list = [
      mig('a', 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:20'),
      mig('b', 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:30'),
      mig('c', 'h1', 'h2', '2026-11-01T10:00:01', '2026-11-01T10:00:50'),
    ];
    const two = samplesFromHistory(list, { ...ctx, concurrencyOf: () => 2 });
    expect(two.samples.map((s) => s.seconds)).toEqual([20, 30, 30]);
  });

  it('does not count a migration refused by the scheduler (error) as holding a slot', () => {
    const r = samplesFromHistory(
      [
        mig('a', 'h1', null, '2026-11-01T10:00:00', '2026-11-01T10:00:01', 'error'),
        mig('b', 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:25'),
      ],
      ctx,
    );
    expect(r.samples.map((s) => [s.serverId, s.outcome, s.seconds])).toEqual([
      ['a', 'error', 1],
      ['b', 'completed', 25],
    ]);
  });

  it('leaves out what cannot be a sample, saying why', () => {
    const r = samplesFromHistory(
      [
        mig('gone', 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:20'),
        mig('a', 'h1', 'h2', '2026-11-01T10:00:00', null, 'running'),
        mig('a', 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:20', 'confirmed', 'resize'),
        mig('a', 'h1', 'h2', '2026-11-01T10:00:30', '2026-11-01T10:00:20'),
      ],
      ctx,
    );
    expect(r.samples).toEqual([]);
    expect(r.skipped).toEqual({
      'server deleted (RAM unknown)': 1,
      'not finished': 1,
      'not a live migration': 1,
      'bad timestamps': 1,
    });
  });

  it('counts a migration for the aggregates both hosts share, else the source, else _unassigned_', () => {
    const r = samplesFromHistory(
      [
        mig('a', 'h1', 'h3', '2026-11-01T10:00:00', '2026-11-01T10:00:10'),
        mig('b', 'h4', 'h1', '2026-11-01T10:00:00', '2026-11-01T10:00:10'),
        mig('c', 'h2', 'h1', '2026-11-01T10:00:00', '2026-11-01T10:00:10'),
      ],
      { ...ctx, dirtyRateOf: (id: string) => (id === 'c' ? 120 : undefined) },
    );
    expect(r.samples.map((s) => [s.serverId, s.aggregate, s.dirtyRateMBps])).toEqual([
      ['a', 'gold', undefined],
      ['c', 'gold', 120],
      ['b', '_unassigned_', undefined],
    ]);
  });

  it('takes RAM, dirty rates, aggregates and per-host limits from a snapshot the caller already has', () => {
    const snap = snapshot(
      [
        host('h1', { aggregates: ['gold'], maxConcurrentLiveMigrations: 2 }),
        host('h2', { aggregates: ['gold'] }),
      ],
      [
        server(1, 'h2', 4096, { dirtyRateMBps: 30 }),
        server(2, 'h2', 2048, { load: { cpu: 1, dirtyRateMBps: 80 } }),
        server(3, 'h2', 1024),
      ],
    );
    const [a, b, c] = snap.servers.map((x) => x.id) as [string, string, string];
    const r = samplesFromHistory(
      [
        mig(a, 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:20'),
        mig(b, 'h1', 'h2', '2026-11-01T10:00:00', '2026-11-01T10:00:30'),
        mig(c, 'h1', 'h2', '2026-11-01T10:00:01', '2026-11-01T10:00:50'),
      ],
      historyContextFromSnapshot(snap),
    );
    expect(r.samples.map((x) => [x.ramMB, x.dirtyRateMBps, x.aggregate, x.seconds])).toEqual([
      [4096, 30, 'gold', 20],
      [2048, 80, 'gold', 30],
      [1024, undefined, 'gold', 30],
    ]);
  });
});
