// A replica taking over an aggregate resumes the execution its dead owner left, whose host locks
// the dead owner's lock entries still hold (they outlive it by the lease TTL): the new run, under
// a newer aggregate fence, takes them over and completes every move instead of skipping them as
// "held by executor:<the very execution>". A run keeps the fence it started under: once the
// aggregate is held under a newer one, it stops (handed over) and writes nothing more.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { hostLockName } from '../../src/coordination/locks.js';
import { ExecutorService } from '../../src/executor/service.js';
import { host, makeExecutor, move, openWorld, server, snapshot, type World } from './sim-world.js';

let world: World | null = null;
afterEach(async () => {
  await world?.close();
  world = null;
});

describe('a takeover mid-execution', () => {
  it("resumes with the execution's own host locks, taken over from the dead owner", async () => {
    const hosts = ['c1', 'c2', 'c3', 'c4', 'c9'].map((h) => host(h));
    const servers = [1, 2, 3, 4].map((n) => server(n, n <= 2 ? 'c1' : 'c2')).concat([server(5, 'c9')]);
    world = await openWorld(snapshot(hosts, servers));
    const locks = new LocalLockService();
    const { executor, journal } = makeExecutor(world, {
      settings: { limits: { perSourceHost: 2, perDestinationHost: 2 } },
      hostLocks: locks,
    });
    const moves = [
      move(1, 1, 1, 'c1', 'c3'),
      move(2, 1, 2, 'c1', 'c4'),
      move(3, 1, 3, 'c2', 'c3'),
      move(4, 1, 4, 'c2', 'c4'),
      move(5, 1, 5, 'c9', 'c4'),
    ];
    await journal.createExecution(
      { id: 'exec-1', aggregate: 'agg', planId: null, startedAt: '2026-11-30T20:00:00Z', startedBy: 'test' },
      moves,
    );
    // What the dead owner (aggregate fence 7) left in the lock service: its execution's host
    // locks, alive until their TTL. And an operator task's lock, which must still be respected.
    for (const h of ['c1', 'c2', 'c3', 'c4'])
      await locks.tryAcquire(hostLockName(h), 'executor:exec-1', { epoch: 7 });
    await locks.tryAcquire(hostLockName('c9'), 'task:3');
    let fence = 8;
    const service = new ExecutorService(executor, {
      isPaused: () => false,
      isOwned: () => true,
      fenceOf: () => fence,
    });
    expect(await service.recoverAggregate('agg')).toEqual(['exec-1']);
    await service.idle();
    const stored = await journal.listMoves('exec-1');
    expect(stored.map((m) => [m.step, m.state, m.state === 'completed' ? null : m.detail])).toEqual([
      [1, 'completed', null],
      [2, 'completed', null],
      [3, 'completed', null],
      [4, 'completed', null],
      [5, 'skipped', 'host c9 is held by task:3'],
    ]);
    expect((await journal.getExecution('exec-1'))?.state).toBe('finished');
    // The taken-over locks went back when the moves ended; the task's stayed.
    expect((await locks.list('host/')).map((l) => `${l.name} ${l.owner}`)).toEqual(['host/c9 task:3']);

    // A run started under fence 8 stops once the aggregate is held under a newer fence.
    await journal.createExecution(
      { id: 'exec-2', aggregate: 'agg', planId: null, startedAt: '2026-11-30T21:00:00Z', startedBy: 'test' },
      [move(1, 1, 1, 'c3', 'c1'), move(2, 2, 3, 'c3', 'c2', { after: [1] })],
    );
    const ended: string[] = [];
    const second = new ExecutorService(executor, {
      isPaused: () => false,
      isOwned: () => true,
      fenceOf: () => fence,
      onEnded: (s) => ended.push(s.state),
    });
    await second.recoverAggregate('agg');
    fence = 9;
    await second.idle();
    expect(ended).toEqual(['handed-over']);
    expect((await journal.getExecution('exec-2'))?.state).toBe('running');
  });
});
