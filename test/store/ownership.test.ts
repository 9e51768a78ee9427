// Fencing of replicas' writes on both backends: a write carrying an older owner's fence is
// refused in its own transaction and changes nothing; a newer owner's write claims the aggregate.
import { afterEach, describe, expect, it } from 'vitest';
import type { PlannedMove } from '../../src/executor/journal.js';
import { FencedOutError, type OwnerFence, type Store } from '../../src/store/index.js';
import { openFresh, testBackends } from './backends.js';

const AT = '2026-12-01T00:00:00.000Z';
const moves: PlannedMove[] = [
  { step: 1, wave: 1, serverId: 's1', from: 'h1', to: 'h2', estimatedSeconds: 10 },
  { step: 2, wave: 1, serverId: 's2', from: 'h1', to: 'h3', estimatedSeconds: 10 },
];
const fence = (n: number, owner = `replica-${n}`): OwnerFence => ({ aggregate: 'agg-a', fence: n, owner });

for (const backend of testBackends()) {
  describe.skipIf(!backend.available)(`ownership fencing (${backend.name})`, () => {
    let dispose: () => Promise<void> = async () => {};
    afterEach(async () => dispose());
    const open = async (): Promise<Store> => {
      const opened = await openFresh(backend);
      dispose = opened.dispose;
      return opened.store;
    };

    it('refuses a write whose fence is older than the recorded one, and changes nothing', async () => {
      const store = await open();
      const old = store.fencedJournal(() => fence(5));
      await old.createExecution(
        { id: 'e1', aggregate: 'agg-a', planId: null, startedAt: AT, startedBy: 'loop:active' },
        moves,
      );
      expect(await old.transitionMove('e1', 1, 'pending', { state: 'issuing', at: AT })).toBe(true);
      expect((await store.ownership.get('agg-a'))?.fence).toBe(5);

      // A new owner takes over: its claim is recorded before it acts.
      await store.ownership.claim(fence(9), AT);
      await expect(old.transitionMove('e1', 2, 'pending', { state: 'issuing', at: AT })).rejects.toThrow(
        FencedOutError,
      );
      await expect(old.finishExecution('e1', 'aborted', AT)).rejects.toThrow(
        /fence 5 refused, replica-9 holds fence 9/,
      );
      await expect(
        old.createExecution(
          { id: 'e2', aggregate: 'agg-a', planId: null, startedAt: AT, startedBy: 'loop:active' },
          moves,
        ),
      ).rejects.toThrow(FencedOutError);
      expect((await store.listMoves('e1')).map((m) => m.state)).toEqual(['issuing', 'pending']);
      expect(await store.getExecution('e2')).toBeNull();
      expect((await store.getExecution('e1'))?.state).toBe('running');

      // The new owner writes, with its fence on the move.
      const next = store.fencedJournal(() => fence(9));
      expect(
        await next.transitionMove('e1', 1, 'issuing', { state: 'migrating', at: AT, novaMigrationId: 7 }),
      ).toBe(true);
      expect(await next.transitionMove('e1', 2, 'pending', { state: 'skipped', at: AT })).toBe(true);
      // An older claim is refused too.
      await expect(store.ownership.claim(fence(6), AT)).rejects.toThrow(FencedOutError);
      expect(await store.ownership.list()).toEqual([
        { aggregate: 'agg-a', fence: 9, owner: 'replica-9', claimedAt: AT },
      ]);
    });

    it('a newer fence claims by writing; a process that knows it lost the lease writes nothing', async () => {
      const store = await open();
      const first = store.fencedJournal(() => fence(3));
      await first.createExecution(
        { id: 'e1', aggregate: 'agg-a', planId: null, startedAt: AT, startedBy: 'loop:active' },
        moves,
      );
      const lost = store.fencedJournal(() => {
        throw new Error('aggregate agg-a: lease lost');
      });
      await expect(lost.transitionMove('e1', 1, 'pending', { state: 'issuing', at: AT })).rejects.toThrow(
        /lease lost/,
      );
      const second = store.fencedJournal(() => fence(4));
      expect(await second.transitionMove('e1', 1, 'pending', { state: 'issuing', at: AT })).toBe(true);
      expect((await store.ownership.get('agg-a'))?.fence).toBe(4);
      await expect(first.transitionMove('e1', 2, 'pending', { state: 'issuing', at: AT })).rejects.toThrow(
        FencedOutError,
      );
      // Another aggregate has its own fence.
      const other = store.fencedJournal(() => ({ aggregate: 'agg-b', fence: 1, owner: 'replica-1' }));
      await other.createExecution(
        { id: 'e3', aggregate: 'agg-b', planId: null, startedAt: AT, startedBy: 'loop:active' },
        moves,
      );
      expect((await store.ownership.list()).map((o) => [o.aggregate, o.fence])).toEqual([
        ['agg-a', 4],
        ['agg-b', 1],
      ]);
    });

    it('names what is wrong with a fence', async () => {
      const store = await open();
      await expect(store.ownership.claim({ aggregate: 'agg-a', fence: 0, owner: 'r' }, AT)).rejects.toThrow(
        /aggregate agg-a: fence must be a positive integer, got 0/,
      );
      await expect(
        store.ownership.claim({ aggregate: 'agg-a', fence: 2, owner: 'r' }, 'yesterday'),
      ).rejects.toThrow(/claim at must be an ISO-8601 time/);
    });
  });
}
