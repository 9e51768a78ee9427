import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlannedMove } from '../../src/executor/journal.js';
import { openStore, type Store, StoreError } from '../../src/store/index.js';
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
