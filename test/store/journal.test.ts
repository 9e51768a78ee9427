import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlannedMove } from '../../src/executor/journal.js';
import { connect } from '../../src/store/connect.js';
import { openStore, type SqliteSynchronous, type Store, StoreError } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const T0 = '2026-11-30T12:00:00.000Z';
const T1 = '2026-11-30T12:00:05.000Z';
const T2 = '2026-11-30T12:01:00.000Z';

function plannedMoves(count: number): PlannedMove[] {
  return Array.from({ length: count }, (_, i) => ({
    step: i + 1,
    wave: Math.floor(i / 2) + 1,
    serverId: `server-${i + 1}`,
    from: 'compute-01',
    to: `compute-0${(i % 3) + 2}`,
    estimatedSeconds: 30 + i,
  }));
}

async function createExecution(store: Store, id: string, moves: PlannedMove[]): Promise<void> {
  await store.createExecution(
    { id, aggregate: 'gold', planId: '7', startedAt: T0, startedBy: 'loop:active' },
    moves,
  );
}

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'execution journal on %s',
  (_name, backend: TestBackend) => {
    describe.skipIf(!backend.available)('', () => {
      let store: Store;
      let dispose: () => Promise<void>;
      beforeEach(async () => {
        ({ store, dispose } = await openFresh(backend));
      });
      afterEach(async () => {
        await dispose();
      });

      it('stores an execution with every move pending, and reads them back', async () => {
        const moves = plannedMoves(3);
        moves[0]!.serverName = 'web-1';
        moves[2]!.after = [1, 2];
        await createExecution(store, 'exec-1', moves);
        expect(await store.getExecution('exec-1')).toEqual({
          id: 'exec-1',
          aggregate: 'gold',
          planId: '7',
          state: 'running',
          startedAt: T0,
          endedAt: null,
          startedBy: 'loop:active',
        });
        const stored = await store.listMoves('exec-1');
        expect(stored.map((m) => m.step)).toEqual([1, 2, 3]);
        expect(stored[0]).toEqual({
          ...moves[0],
          executionId: 'exec-1',
          state: 'pending',
          attempt: 1,
          novaMigrationId: null,
          issuedAt: null,
          endedAt: null,
          detail: null,
        });
        expect(stored[2]!.after).toEqual([1, 2]);
        expect(stored[1]!.after).toBeUndefined();
        expect(await store.getExecution('nope')).toBeNull();
        expect(await store.listMoves('nope')).toEqual([]);
      });

      it('creates an execution atomically: a move the database refuses leaves nothing behind', async () => {
        const moves = plannedMoves(1200);
        // NOT NULL violation in the third insert batch, after two batches went in.
        (moves[1100] as { serverId: unknown }).serverId = null;
        await expect(createExecution(store, 'exec-bad', moves)).rejects.toThrow();
        expect(await store.getExecution('exec-bad')).toBeNull();
        expect(await store.listMoves('exec-bad')).toEqual([]);
        expect(await store.listUnfinishedExecutions()).toEqual([]);
      });

      it('refuses bad executions with the reason, storing nothing', async () => {
        await createExecution(store, 'exec-1', plannedMoves(2));
        await expect(createExecution(store, 'exec-1', plannedMoves(1))).rejects.toThrow(
          /exec-1 already exists/,
        );
        expect(await store.listMoves('exec-1')).toHaveLength(2);
        const dup = [...plannedMoves(2), { ...plannedMoves(1)[0]! }];
        await expect(createExecution(store, 'exec-2', dup)).rejects.toThrow(
          /moves\[2\]\.step 1 appears twice/,
        );
        const subset = plannedMoves(2);
        subset[1]!.after = [9]; // a step outside the execution (run earlier, or not approved)
        await createExecution(store, 'exec-3', subset);
        expect((await store.listMoves('exec-3'))[1]!.after).toEqual([9]);
        const negative = plannedMoves(1);
        negative[0]!.after = [0];
        await expect(createExecution(store, 'exec-5', negative)).rejects.toThrow(
          /after must list positive steps/,
        );
        await expect(
          store.createExecution(
            { id: 'exec-4', aggregate: 'gold', planId: null, startedAt: '2026-11-30 12:00', startedBy: 'x' },
            [],
          ),
        ).rejects.toThrow(/startedAt must be an ISO-8601 time/);
        for (const id of ['exec-2', 'exec-4', 'exec-5']) expect(await store.getExecution(id)).toBeNull();
      });

      it('transitions a move only from the expected state (compare-and-set)', async () => {
        await createExecution(store, 'exec-1', plannedMoves(2));
        expect(await store.transitionMove('exec-1', 1, 'issuing', { state: 'migrating', at: T1 })).toBe(
          false,
        );
        expect(await store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: T1 })).toBe(true);
        expect(await store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: T1 })).toBe(false);
        let [m1, m2] = await store.listMoves('exec-1');
        expect(m1).toMatchObject({ state: 'issuing', issuedAt: T1, endedAt: null, novaMigrationId: null });
        expect(m2!.state).toBe('pending');

        expect(
          await store.transitionMove('exec-1', 1, 'issuing', {
            state: 'migrating',
            at: T1,
            novaMigrationId: 42,
          }),
        ).toBe(true);
        // Same state again (to record a detail): the row matched, so it counts as done.
        expect(
          await store.transitionMove('exec-1', 1, 'migrating', {
            state: 'migrating',
            at: T1,
            detail: 'running 40%',
          }),
        ).toBe(true);
        expect(await store.transitionMove('exec-1', 1, 'migrating', { state: 'completed', at: T2 })).toBe(
          true,
        );
        [m1] = await store.listMoves('exec-1');
        expect(m1).toMatchObject({
          state: 'completed',
          novaMigrationId: 42,
          issuedAt: T1,
          endedAt: T2,
          detail: 'running 40%',
          attempt: 1,
        });
      });

      it('never leaves a final state and names unknown moves', async () => {
        await createExecution(store, 'exec-1', plannedMoves(1));
        await store.transitionMove('exec-1', 1, 'pending', {
          state: 'skipped',
          at: T1,
          detail: 'server gone',
        });
        await expect(
          store.transitionMove('exec-1', 1, 'skipped', { state: 'issuing', at: T2 }),
        ).rejects.toThrow(/skipped is final/);
        expect(await store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: T2 })).toBe(false);
        const [m] = await store.listMoves('exec-1');
        expect(m).toMatchObject({ state: 'skipped', endedAt: T1, detail: 'server gone' });
        await expect(
          store.transitionMove('exec-1', 9, 'pending', { state: 'issuing', at: T2 }),
        ).rejects.toThrow(/no move execution exec-1 step 9/);
        await expect(
          store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: 'soon' }),
        ).rejects.toThrow(StoreError);
      });

      it('starts a new attempt: attempt counted, the last Nova migration id forgotten', async () => {
        await createExecution(store, 'exec-1', plannedMoves(1));
        await store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: T0 });
        await store.transitionMove('exec-1', 1, 'issuing', {
          state: 'migrating',
          at: T0,
          novaMigrationId: 5,
        });
        expect(
          await store.transitionMove('exec-1', 1, 'migrating', {
            state: 'issuing',
            at: T2,
            attempt: 2,
            detail: 'retry',
          }),
        ).toBe(true);
        const [m] = await store.listMoves('exec-1');
        expect(m).toMatchObject({
          state: 'issuing',
          attempt: 2,
          novaMigrationId: null,
          issuedAt: T2,
          detail: 'retry',
        });
      });

      it('lets exactly one of many concurrent writers win a transition', async () => {
        await createExecution(store, 'exec-1', plannedMoves(1));
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: T1, detail: `writer ${i}` }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results.indexOf(true);
        expect((await store.listMoves('exec-1'))[0]!.detail).toBe(`writer ${winner}`);
      });

      it('commits changes of many moves asked at once together, each compare-and-set on its own', async () => {
        await createExecution(store, 'exec-1', plannedMoves(6));
        await store.transitionMove('exec-1', 6, 'pending', { state: 'skipped', at: T1 });
        const results = await Promise.allSettled([
          ...[1, 2, 3, 4].map((step) =>
            store.transitionMove('exec-1', step, 'pending', { state: 'issuing', at: T1, detail: `s${step}` }),
          ),
          // Not in the state expected: refused alone.
          store.transitionMove('exec-1', 5, 'issuing', { state: 'migrating', at: T1 }),
          // A move that does not exist: an error for its caller only.
          store.transitionMove('exec-1', 99, 'pending', { state: 'issuing', at: T1 }),
        ]);
        expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
          true,
          true,
          true,
          true,
          false,
          'rejected',
        ]);
        expect(String((results[5] as PromiseRejectedResult).reason)).toMatch(
          /no move execution exec-1 step 99/,
        );
        const stored = await store.listMoves('exec-1');
        expect(stored.map((m) => [m.state, m.detail])).toEqual([
          ['issuing', 's1'],
          ['issuing', 's2'],
          ['issuing', 's3'],
          ['issuing', 's4'],
          ['pending', null],
          ['skipped', null],
        ]);
      });

      it('finishes an execution only when no migration can still be in flight', async () => {
        await createExecution(store, 'exec-1', plannedMoves(3));
        await createExecution(store, 'exec-2', plannedMoves(2));
        await store.transitionMove('exec-1', 1, 'pending', { state: 'issuing', at: T1 });
        await expect(store.finishExecution('exec-1', 'aborted', T2)).rejects.toThrow(/step 1 is issuing/);
        await store.transitionMove('exec-1', 1, 'issuing', { state: 'failed', at: T1 });
        await expect(store.finishExecution('exec-1', 'finished', T2)).rejects.toThrow(
          /step 2 is pending, step 3 is pending/,
        );
        await store.finishExecution('exec-1', 'aborted', T2);
        await store.finishExecution('exec-1', 'aborted', T2); // said twice by a restarted executor: no-op
        await expect(store.finishExecution('exec-1', 'finished', T2)).rejects.toThrow(/already aborted/);
        expect(await store.getExecution('exec-1')).toMatchObject({ state: 'aborted', endedAt: T2 });
        expect((await store.listUnfinishedExecutions()).map((e) => e.id)).toEqual(['exec-2']);

        for (const step of [1, 2])
          await store.transitionMove('exec-2', step, 'pending', { state: 'skipped', at: T1 });
        await store.finishExecution('exec-2', 'finished', T2);
        expect(await store.listUnfinishedExecutions()).toEqual([]);
        await expect(store.finishExecution('nope', 'finished', T2)).rejects.toThrow(/no execution nope/);
      });

      it('keeps everything across close and reopen, migrating only once', async () => {
        const { options, cleanup } = await backend.fresh();
        const first = await openStore(options);
        await createExecution(first, 'exec-1', plannedMoves(2));
        await first.transitionMove('exec-1', 2, 'pending', { state: 'issuing', at: T1 });
        await first.close();
        const second = await openStore(options);
        try {
          expect((await second.listUnfinishedExecutions()).map((e) => e.id)).toEqual(['exec-1']);
          expect((await second.listMoves('exec-1')).map((m) => m.state)).toEqual(['pending', 'issuing']);
        } finally {
          await second.close();
          await cleanup();
        }
      });
    });
  },
);

describe('execution journal on SQLite: group commit', () => {
  it('writes the changes asked in one turn of the event loop in one commit', async () => {
    const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
    const { options, cleanup } = await sqlite.fresh();
    if (options.kind !== 'sqlite') throw new Error('expected a SQLite store');
    const store = await openStore(options);
    // A second connection reads how many frames the write-ahead log holds: each commit appends
    // the pages it changed, so twelve commits of one row each write at least twelve frames.
    const probe = new BetterSqlite3(options.path);
    const walFrames = (mode: 'TRUNCATE' | 'PASSIVE') =>
      (probe.pragma(`wal_checkpoint(${mode})`) as { log: number }[])[0]!.log;
    try {
      await createExecution(store, 'exec-1', plannedMoves(24));
      walFrames('TRUNCATE');
      expect(walFrames('PASSIVE')).toBe(0);
      const steps = Array.from({ length: 12 }, (_, i) => i + 1);
      const results = await Promise.all(
        steps.map((step) => store.transitionMove('exec-1', step, 'pending', { state: 'issuing', at: T1 })),
      );
      expect(results.every(Boolean)).toBe(true);
      const frames = walFrames('PASSIVE');
      expect(frames).toBeGreaterThan(0);
      expect(frames).toBeLessThan(steps.length);
      // Asked one after the other (each awaited), each change is its own commit.
      walFrames('TRUNCATE');
      for (const step of steps)
        await store.transitionMove('exec-1', step, 'issuing', { state: 'migrating', at: T1 });
      expect(walFrames('PASSIVE')).toBeGreaterThanOrEqual(steps.length);
    } finally {
      probe.close();
      await store.close();
      await cleanup();
    }
  });
});

describe('SQLite store: synchronous', () => {
  it('sets when a commit reaches the disk, full unless asked otherwise, and refuses other values', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aic-sync-'));
    try {
      // SQLite's codes: 1 NORMAL, 2 FULL.
      const level = async (synchronous?: SqliteSynchronous) => {
        const ctx = connect({
          kind: 'sqlite',
          path: join(dir, 'a.db'),
          ...(synchronous !== undefined ? { synchronous } : {}),
        });
        try {
          return (await sql<{ synchronous: number }>`pragma synchronous`.execute(ctx.db)).rows[0]
            ?.synchronous;
        } finally {
          await ctx.db.destroy();
        }
      };
      expect(await level()).toBe(2);
      expect(await level('full')).toBe(2);
      expect(await level('normal')).toBe(1);
      expect(() =>
        connect({ kind: 'sqlite', path: join(dir, 'a.db'), synchronous: 'off' as SqliteSynchronous }),
      ).toThrow('store: synchronous must be one of full, normal, got "off"');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
