// Reading Nova's records about an attempt: the awkward cases of a real cloud, without one.
import { describe, expect, it } from 'vitest';
import { findAttemptMigration, judge } from '../../src/executor/attempt.js';
import type { LiveMigrationView, ServerView } from '../../src/executor/ports.js';
import { backoffSeconds, resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';

const T0 = Date.parse('2026-11-30T21:00:00Z');
const mig = (
  id: number,
  status: string,
  createdS: number,
  extra: Partial<LiveMigrationView> = {},
): LiveMigrationView => ({
  id,
  serverId: 's',
  status,
  source: 'a',
  dest: 'b',
  createdAt: T0 + createdS * 1000,
  updatedAt: null,
  ...extra,
});
const srv = (host: string, taskState: string | null = null, status = 'ACTIVE'): ServerView => ({
  id: 's',
  status,
  taskState,
  host,
  fault: null,
});
const mv = { from: 'a', to: 'b' };
const issuing = (novaMigrationId: number | null = null) => ({
  ...mv,
  state: 'issuing' as const,
  issuedAt: new Date(T0).toISOString(),
  novaMigrationId,
});

describe('findAttemptMigration', () => {
  it('finds the newest record of this source and destination created since the intent', () => {
    const found = findAttemptMigration(issuing(), [mig(9, 'accepted', 1), mig(3, 'failed', -3600)], 60_000);
    expect(found?.id).toBe(9);
  });

  it('ignores records older than the intent less the clock skew, and other routes', () => {
    const list = [
      mig(3, 'failed', -120),
      mig(4, 'completed', 5, { dest: 'c' }),
      mig(5, 'running', 5, { source: 'x' }),
    ];
    expect(findAttemptMigration(issuing(), list, 60_000)).toBeUndefined();
    expect(findAttemptMigration(issuing(), [mig(3, 'failed', -30)], 60_000)?.id).toBe(3);
  });

  it('on a retry, ignores the previous attempt (and older) however recent', () => {
    expect(findAttemptMigration(issuing(7), [mig(7, 'failed', -5)], 60_000)).toBeUndefined();
    expect(findAttemptMigration(issuing(7), [mig(8, 'queued', 1), mig(7, 'failed', -5)], 60_000)?.id).toBe(8);
  });

  it('when migrating, is the stored id and nothing else', () => {
    const rec = {
      ...mv,
      state: 'migrating' as const,
      issuedAt: new Date(T0).toISOString(),
      novaMigrationId: 7,
    };
    expect(findAttemptMigration(rec, [mig(8, 'running', 1), mig(7, 'running', 0)], 60_000)?.id).toBe(7);
  });

  it('accepts a record whose destination is not filled in yet', () => {
    expect(findAttemptMigration(issuing(), [mig(9, 'accepted', 1, { dest: null })], 60_000)?.id).toBe(9);
  });
});

describe('judge', () => {
  it('is not done while the server is ACTIVE on the destination but the record still runs', () => {
    expect(judge(mv, srv('b'), mig(1, 'running', 0))).toEqual({ kind: 'running', status: 'running' });
  });
  it('is done when both say so', () => {
    expect(judge(mv, srv('b'), mig(1, 'completed', 0)).kind).toBe('completed');
  });
  it('waits while the server still has a task state, whatever the record says', () => {
    expect(judge(mv, srv('a', 'migrating'), mig(1, 'failed', 0)).kind).toBe('running');
  });
  it('fails an attempt that left the server idle on its source', () => {
    expect(judge(mv, srv('a'), mig(1, 'cancelled', 0))).toMatchObject({
      kind: 'failed',
      status: 'cancelled',
    });
  });
  it('calls anything else an anomaly: ERROR, elsewhere, gone', () => {
    expect(judge(mv, srv('a', null, 'ERROR'), mig(1, 'error', 0)).kind).toBe('anomaly');
    expect(judge(mv, srv('b'), mig(1, 'failed', 0)).kind).toBe('anomaly');
    expect(judge(mv, srv('c'), mig(1, 'completed', 0)).kind).toBe('anomaly');
    expect(judge(mv, null, mig(1, 'completed', 0)).kind).toBe('anomaly');
  });
});

describe('settings and slots', () => {
  it('doubles the backoff from each failure up to the ceiling', () => {
    const r = { attempts: 5, backoffBaseSeconds: 30, backoffMaxSeconds: 100 };
    expect([1, 2, 3, 4].map((n) => backoffSeconds(n, r))).toEqual([30, 60, 100, 100]);
  });
  it('names the key and the value it refuses', () => {
    expect(() => resolveExecutorSettings({ limits: { perSourceHost: 0 } })).toThrow(
      'executor.limits.perSourceHost: expected an integer >= 1, got 0',
    );
    expect(() =>
      resolveExecutorSettings({ retry: { backoffBaseSeconds: 10, backoffMaxSeconds: 5 } }),
    ).toThrow(/backoffMaxSeconds: expected at least backoffBaseSeconds \(10\), got 5/);
    expect(() => resolveExecutorSettings({ onStop: 'drop' as 'abort' })).toThrow(/onStop/);
  });
  it('hands out a slot only when every limit has room, and says which one is full', () => {
    const slots = new MigrationSlots(
      resolveExecutorSettings({
        limits: {
          perSourceHost: 1,
          perSourceHostOverrides: { a: 2 },
          perDestinationHost: 2,
          perAggregate: 3,
          global: 4,
        },
      }).limits,
    );
    const l1 = slots.tryAcquire({ source: 'a', dest: 'x', aggregate: 'g' });
    expect(slots.tryAcquire({ source: 'a', dest: 'x', aggregate: 'g' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'a', dest: 'y', aggregate: 'g' })).toBe('source a limit 2');
    expect(slots.blockedBy({ source: 'b', dest: 'x', aggregate: 'g' })).toBe('destination x limit 2');
    expect(slots.tryAcquire({ source: 'b', dest: 'y', aggregate: 'g' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'c', dest: 'z', aggregate: 'g' })).toBe('aggregate g limit 3');
    expect(slots.tryAcquire({ source: 'c', dest: 'z', aggregate: 'h' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'd', dest: 'w', aggregate: 'h' })).toBe('global limit 4');
    slots.release(l1!);
    slots.release(l1!);
    expect(slots.inFlight().total).toBe(3);
    expect(slots.blockedBy({ source: 'd', dest: 'w', aggregate: 'h' })).toBeNull();
  });

  it('holds each aggregate to its own limits while several aggregates share the pool', () => {
    const slots = new MigrationSlots(
      resolveExecutorSettings({
        limits: {
          perSourceHost: 2,
          perDestinationHost: 2,
          perAggregate: 10,
          global: 20,
          byAggregate: { gold: { perSourceHost: 1, perDestinationHost: 1, perAggregate: 2 } },
        },
      }).limits,
    );
    // gold: one per source, one per destination, two in all; silver: the defaults.
    expect(slots.tryAcquire({ source: 'g1', dest: 'g9', aggregate: 'gold' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'g1', dest: 'g8', aggregate: 'gold' })).toBe('source g1 limit 1');
    expect(slots.blockedBy({ source: 'g2', dest: 'g9', aggregate: 'gold' })).toBe('destination g9 limit 1');
    expect(slots.tryAcquire({ source: 's1', dest: 's9', aggregate: 'silver' })).not.toBeNull();
    expect(slots.tryAcquire({ source: 's1', dest: 's9', aggregate: 'silver' })).not.toBeNull();
    expect(slots.tryAcquire({ source: 'g2', dest: 'g8', aggregate: 'gold' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'g3', dest: 'g7', aggregate: 'gold' })).toBe('aggregate gold limit 2');
    expect(slots.blockedBy({ source: 's2', dest: 's8', aggregate: 'silver' })).toBeNull();
    expect(() =>
      resolveExecutorSettings({
        limits: { byAggregate: { gold: { perSourceHost: 0, perDestinationHost: 1, perAggregate: 1 } } },
      }),
    ).toThrow(/limits\.byAggregate\.gold\.perSourceHost/);
  });
});
