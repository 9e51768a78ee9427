// What every ExecutionJournal must do, as one suite any implementation can run (the in-memory
// one here; the store's SQLite and MariaDB journals can call it with their own factory).
import { describe, expect, it } from 'vitest';
import type { ExecutionJournal, PlannedMove } from '../../src/executor/journal.js';

const moves: PlannedMove[] = [
  { step: 1, wave: 1, serverId: 's1', serverName: 'vm-1', from: 'a', to: 'b', estimatedSeconds: 10 },
  { step: 2, wave: 2, serverId: 's2', from: 'a', to: 'c', after: [1], estimatedSeconds: 20 },
];
const exec = (id: string) => ({
  id,
  aggregate: 'agg',
  planId: 'plan-1',
  startedAt: '2026-11-30T21:00:00.000Z',
  startedBy: 'test',
});
const at = (s: number) => new Date(Date.parse('2026-11-30T21:00:00Z') + s * 1000).toISOString();

export function describeJournalContract(name: string, make: () => Promise<ExecutionJournal>): void {
  describe(`${name}: the journal contract`, () => {
    it('stores an execution with every move pending, attempt 1', async () => {
      const j = await make();
      await j.createExecution(exec('e1'), moves);
      expect(await j.getExecution('e1')).toMatchObject({
        id: 'e1',
        state: 'running',
        endedAt: null,
        planId: 'plan-1',
      });
      const stored = await j.listMoves('e1');
      expect(stored.map((m) => [m.step, m.state, m.attempt, m.novaMigrationId, m.issuedAt])).toEqual([
        [1, 'pending', 1, null, null],
        [2, 'pending', 1, null, null],
      ]);
      expect(stored[1]?.after).toEqual([1]);
      expect(stored[0]?.serverName).toBe('vm-1');
      expect((await j.listUnfinishedExecutions()).map((e) => e.id)).toEqual(['e1']);
    });

    it('moves only from the expected state, stamps issuedAt and endedAt, keeps what is not given', async () => {
      const j = await make();
      await j.createExecution(exec('e2'), moves);
      expect(await j.transitionMove('e2', 1, 'issuing', { state: 'migrating', at: at(1) })).toBe(false);
      expect(
        await j.transitionMove('e2', 1, 'pending', { state: 'issuing', at: at(1), detail: 'asked' }),
      ).toBe(true);
      expect(
        await j.transitionMove('e2', 1, 'issuing', { state: 'migrating', at: at(2), novaMigrationId: 7 }),
      ).toBe(true);
      let m = (await j.listMoves('e2'))[0];
      expect(m).toMatchObject({
        state: 'migrating',
        issuedAt: at(1),
        novaMigrationId: 7,
        detail: 'asked',
        endedAt: null,
      });
      expect(
        await j.transitionMove('e2', 1, 'migrating', { state: 'completed', at: at(3), detail: 'done' }),
      ).toBe(true);
      m = (await j.listMoves('e2'))[0];
      expect(m).toMatchObject({ state: 'completed', endedAt: at(3), novaMigrationId: 7, detail: 'done' });
      // Final states are never left.
      expect(await j.transitionMove('e2', 1, 'migrating', { state: 'failed', at: at(4) })).toBe(false);
      expect((await j.listMoves('e2'))[0]?.state).toBe('completed');
    });

    it('starts a new attempt forgetting the last migration id unless given', async () => {
      const j = await make();
      await j.createExecution(exec('e3'), moves);
      await j.transitionMove('e3', 1, 'pending', { state: 'issuing', at: at(1) });
      await j.transitionMove('e3', 1, 'issuing', { state: 'migrating', at: at(2), novaMigrationId: 5 });
      await j.transitionMove('e3', 1, 'migrating', {
        state: 'pending',
        at: at(3),
        detail: 'attempt 1 failed',
      });
      expect((await j.listMoves('e3'))[0]).toMatchObject({
        state: 'pending',
        novaMigrationId: 5,
        attempt: 1,
      });
      await j.transitionMove('e3', 1, 'pending', {
        state: 'issuing',
        at: at(9),
        attempt: 2,
        novaMigrationId: 5,
      });
      expect((await j.listMoves('e3'))[0]).toMatchObject({
        state: 'issuing',
        attempt: 2,
        novaMigrationId: 5,
        issuedAt: at(9),
      });
      await j.transitionMove('e3', 2, 'pending', { state: 'issuing', at: at(1) });
      await j.transitionMove('e3', 2, 'issuing', { state: 'migrating', at: at(2), novaMigrationId: 6 });
      await j.transitionMove('e3', 2, 'migrating', { state: 'pending', at: at(3) });
      await j.transitionMove('e3', 2, 'pending', { state: 'issuing', at: at(4), attempt: 2 });
      expect((await j.listMoves('e3'))[1]).toMatchObject({ attempt: 2, novaMigrationId: null });
    });

    it('finishes an execution, which then is no longer unfinished', async () => {
      const j = await make();
      await j.createExecution(exec('e4'), moves);
      await j.transitionMove('e4', 1, 'pending', { state: 'skipped', at: at(1), detail: 'gone' });
      await j.transitionMove('e4', 2, 'pending', { state: 'skipped', at: at(1), detail: 'gone' });
      await j.finishExecution('e4', 'finished', at(2));
      expect(await j.getExecution('e4')).toMatchObject({ state: 'finished', endedAt: at(2) });
      expect(await j.listUnfinishedExecutions()).toEqual([]);
    });

    it('refuses an execution id twice', async () => {
      const j = await make();
      await j.createExecution(exec('e5'), moves);
      await expect(j.createExecution(exec('e5'), moves)).rejects.toThrow();
    });
  });
}
