// Crash safety: the executor's process dies at each journal state (and between a call to Nova
// and the journal write after it); a new executor on the same journal resolves every unfinished
// move from Nova's records, never sends a live migration twice, and finishes the execution.
import { afterEach, describe, expect, it } from 'vitest';
import type { ExecutionSummary } from '../../src/executor/index.js';
import type { ExecutionJournal } from '../../src/executor/journal.js';
import { MemoryJournal } from '../../src/executor/memory-journal.js';
import { openStore } from '../../src/store/index.js';
import { type CrashPoint, death, dyingClock, dyingCloud, dyingJournal, type Proc } from './crash-doubles.js';
import {
  host,
  makeExecutor,
  migrationsByServer,
  move,
  noStop,
  openWorld,
  server,
  serverId,
  snapshot,
  type World,
} from './sim-world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const moves = [move(1, 1, 1, 'c1', 'c2'), move(2, 1, 2, 'c1', 'c3'), move(3, 2, 3, 'c2', 'c3')];

interface Scenario {
  name: string;
  point: CrashPoint;
  hold?: boolean;
  failFirst?: boolean;
  expectFirst: { state: string; attempt: number; simStatuses: string[] };
}

const scenarios: Scenario[] = [
  {
    name: 'before the intent is stored (pending)',
    point: { kind: 'transition', when: 'before', to: 'issuing', step: 1 },
    expectFirst: { state: 'completed', attempt: 1, simStatuses: ['completed'] },
  },
  {
    name: 'intent stored (issuing), call never sent',
    point: { kind: 'call', when: 'before', call: 'liveMigrate', serverId: serverId(1) },
    // The attempt that never reached Nova is counted; the move goes back to pending and runs.
    expectFirst: { state: 'completed', attempt: 2, simStatuses: ['completed'] },
  },
  {
    name: 'call accepted by Nova, crash before its answer is stored (issuing)',
    point: { kind: 'call', when: 'after', call: 'liveMigrate', serverId: serverId(1) },
    expectFirst: { state: 'completed', attempt: 1, simStatuses: ['completed'] },
  },
  {
    name: 'migration id stored (migrating)',
    point: { kind: 'transition', when: 'after', to: 'migrating', step: 1 },
    expectFirst: { state: 'completed', attempt: 1, simStatuses: ['completed'] },
  },
  {
    name: 'abort intent stored (aborting), DELETE never sent',
    point: { kind: 'transition', when: 'after', to: 'aborting', step: 1 },
    hold: true,
    expectFirst: { state: 'failed', attempt: 1, simStatuses: ['cancelled'] },
  },
  {
    name: 'DELETE sent, crash before the outcome is stored (aborting)',
    point: { kind: 'call', when: 'after', call: 'abortLiveMigration', serverId: serverId(1) },
    hold: true,
    expectFirst: { state: 'failed', attempt: 1, simStatuses: ['cancelled'] },
  },
  {
    name: 'a failed attempt waiting for its retry (pending after a failure)',
    point: { kind: 'transition', when: 'after', to: 'pending', from: 'migrating', step: 1 },
    failFirst: true,
    expectFirst: { state: 'completed', attempt: 2, simStatuses: ['failed', 'completed'] },
  },
  {
    name: 'a move final, the execution still running (completed)',
    point: { kind: 'transition', when: 'after', to: 'completed', step: 1 },
    expectFirst: { state: 'completed', attempt: 1, simStatuses: ['completed'] },
  },
];

// The simulator's migrations change state on its virtual clock and tell no one: polled.
async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const journals: [string, () => Promise<ExecutionJournal>][] = [
  ['memory', async () => new MemoryJournal()],
  ['store SQLite', () => openStore({ kind: 'sqlite', path: ':memory:' })],
];

describe.each(journals)('restart after a crash (%s journal)', (_name, makeJournal) => {
  for (const sc of scenarios) {
    it(`reconciles a crash ${sc.name}`, async () => {
      const servers = [server(1, 'c1'), server(2, 'c1'), server(3, 'c2')];
      world = await openWorld(snapshot([host('c1'), host('c2'), host('c3')], servers), { speed: 40 });
      if (sc.hold) world.cloud.timing.holdSeconds = 3600;
      if (sc.failFirst) world.cloud.failServers.add(serverId(1));
      const durable = await makeJournal();
      const proc: Proc = { dead: false };
      const settings = {
        limits: { perSourceHost: 2 },
        retry: sc.hold ? { attempts: 1 } : { attempts: 3, backoffBaseSeconds: 10 },
      };
      const timeoutFor = sc.hold ? () => 20 : () => 600;
      const first = makeExecutor(
        {
          executorCloud: dyingCloud(world.executorCloud, proc, sc.point),
          clock: dyingClock(world.clock, proc),
        },
        { journal: dyingJournal(durable, proc, sc.point), settings, timeoutFor },
      );
      const abandoned = first.executor.start(
        { aggregate: 'agg', planId: 'p', startedBy: 'test', moves, executionId: 'exec-1' },
        { deadline: null, shouldStop: noStop },
      );
      abandoned.catch(() => {});
      await death(proc, `the crash ${sc.name}`);
      world.cloud.failServers.clear();

      const second = makeExecutor(world, { journal: durable, settings, timeoutFor });
      const [summary] = (await second.executor.recover(() => ({
        deadline: null,
        shouldStop: noStop,
      }))) as [ExecutionSummary];
      expect(summary.executionId).toBe('exec-1');
      // A timeout's abort is one move's failure, not the execution's.
      expect(summary.state).toBe('finished');
      expect(summary.moves.every((m) => ['completed', 'failed', 'skipped'].includes(m.state))).toBe(true);
      expect(await durable.listUnfinishedExecutions()).toEqual([]);
      const first1 = summary.moves[0]!;
      expect({ state: first1.state, attempt: first1.attempt }).toEqual({
        state: sc.expectFirst.state,
        attempt: sc.expectFirst.attempt,
      });
      const byServer = migrationsByServer(world.cloud);
      expect(byServer.get(serverId(1))?.map((m) => m.status)).toEqual(sc.expectFirst.simStatuses);
      // Every move accounted for once, and the journal agrees with the cloud.
      for (const rec of summary.moves) {
        const sim = world.cloud.serversByUuid.get(rec.serverId)!;
        const done = (byServer.get(rec.serverId) ?? []).filter((m) => m.status === 'completed');
        expect(done.length).toBeLessThanOrEqual(1);
        if (rec.state === 'completed') {
          expect(sim.host).toBe(rec.to);
          expect(done[0]?.id).toBe(rec.novaMigrationId);
        } else {
          expect(sim.host).toBe(rec.from);
          expect(done).toHaveLength(0);
        }
        expect(sim.taskState).toBeNull();
      }
      expect(world.cloud.migrations.every((m) => m.status !== 'running' && m.status !== 'queued')).toBe(true);
    });
  }
});

describe('restart while aborting for an operator', () => {
  it('finishes the abort, starts nothing new, and ends the execution aborted', async () => {
    const servers = [server(1, 'c1'), server(2, 'c1'), server(3, 'c2')];
    world = await openWorld(snapshot([host('c1'), host('c2'), host('c3')], servers), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const durable = new MemoryJournal();
    const proc: Proc = { dead: false };
    const point: CrashPoint = {
      kind: 'call',
      when: 'after',
      call: 'abortLiveMigration',
      serverId: serverId(1),
    };
    // One migration at a time from c1: step 2 waits, pending, when the process dies.
    const settings = { limits: { perSourceHost: 1 }, retry: { attempts: 3 } };
    let abort: string | null = null;
    const first = makeExecutor(
      { executorCloud: dyingCloud(world.executorCloud, proc, point), clock: dyingClock(world.clock, proc) },
      { journal: dyingJournal(durable, proc, point), settings, timeoutFor: () => 3600 },
    );
    first.executor
      .start(
        { aggregate: 'agg', planId: 'p', startedBy: 'test', moves, executionId: 'exec-1' },
        { deadline: null, shouldStop: noStop, abortRequested: () => abort },
      )
      .catch(() => {});
    await waitFor(() => world!.cloud.migrations.some((m) => m.status === 'running'), 'a migration running');
    abort = 'aborted by operator:carol';
    await death(proc, 'the crash after the DELETE');
    expect((await durable.listMoves('exec-1')).find((m) => m.step === 1)?.state).toBe('aborting');

    // The new process knows nothing of the operator's request but what the journal says.
    const second = makeExecutor(world, { journal: durable, settings, timeoutFor: () => 3600 });
    const [summary] = (await second.executor.recover(() => ({ deadline: null, shouldStop: noStop }))) as [
      ExecutionSummary,
    ];
    expect(summary.state).toBe('aborted');
    expect((await durable.getExecution('exec-1'))?.state).toBe('aborted');
    expect(summary.moves.map((m) => m.state)).toEqual(['failed', 'skipped', 'skipped']);
    // Nothing was issued after the restart: one migration in all, cancelled.
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['cancelled']);
  });
});
