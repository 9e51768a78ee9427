import { describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { ExecutionHostLocks } from '../../src/executor/host-locks.js';
import { SwitchableLocks } from '../tasks/rig.js';

const held = async (locks: LocalLockService) => (await locks.list('host/')).map((l) => [l.name, l.owner]);

describe("the executor's host locks", () => {
  it('holds source and destination for a move, skipping the hosts its starter holds', async () => {
    const locks = new LocalLockService();
    const mine = new ExecutionHostLocks(locks, new Set(['c5']), 'executor:e1');
    const out = await mine.acquire(['c5', 'c2']);
    expect(out).toEqual({ ok: true, hosts: ['c2'] });
    expect(await held(locks)).toEqual([['host/c2', 'executor:e1']]);
    if (out.ok) await mine.release(out.hosts);
    expect(await locks.list('host/')).toEqual([]);
  });

  it("shares a host between the execution's own moves and gives it back after the last", async () => {
    const locks = new LocalLockService();
    const mine = new ExecutionHostLocks(locks, new Set(), 'executor:e1');
    // Two moves from c1, and one arriving on c1 while they leave it.
    const a = await mine.acquire(['c1', 'c2']);
    const b = await mine.acquire(['c1', 'c3']);
    const c = await mine.acquire(['c4', 'c1']);
    expect([a.ok, b.ok, c.ok]).toEqual([true, true, true]);
    expect(await held(locks)).toEqual([
      ['host/c1', 'executor:e1'],
      ['host/c2', 'executor:e1'],
      ['host/c3', 'executor:e1'],
      ['host/c4', 'executor:e1'],
    ]);
    // Another execution (or a task) is still kept off every one of them.
    const other = new ExecutionHostLocks(locks, new Set(), 'executor:e2');
    expect(await other.acquire(['c1', 'c9'])).toEqual({
      ok: false,
      why: 'host c1 is held by executor:e1',
      retry: false,
    });
    if (a.ok) await mine.release(a.hosts);
    if (b.ok) await mine.release(b.hosts);
    expect((await held(locks)).map(([n]) => n)).toEqual(['host/c1', 'host/c4']);
    if (c.ok) await mine.release(c.hosts);
    expect(await locks.list('host/')).toEqual([]);
  });

  it('a run resuming the execution under a newer fence takes over the previous owner’s locks', async () => {
    const locks = new LocalLockService();
    const dead = new ExecutionHostLocks(locks, new Set(), 'executor:e1', { epoch: 3, ttlMs: 4000 });
    expect((await dead.acquire(['c1', 'c2'])).ok).toBe(true);
    // Without a newer fence (a second run of the same owner, in the process that holds them),
    // the move waits for the execution's earlier lock to go rather than being skipped.
    const same = new ExecutionHostLocks(locks, new Set(), 'executor:e1', { epoch: 3 });
    expect(await same.acquire(['c1', 'c2'])).toEqual({
      ok: false,
      why: "host c1 is still held by this execution's earlier lock; waiting for it",
      retry: true,
    });
    const resumed = new ExecutionHostLocks(locks, new Set(), 'executor:e1', { epoch: 4 });
    expect(await resumed.acquire(['c1', 'c2'])).toEqual({ ok: true, hosts: ['c1', 'c2'] });
    // Another execution under a newer fence is still kept off.
    const other = new ExecutionHostLocks(locks, new Set(), 'executor:e2', { epoch: 9 });
    expect((await other.acquire(['c2', 'c7'])).ok).toBe(false);
    expect((await locks.list('host/')).map((l) => [l.name, l.epoch])).toEqual([
      ['host/c1', 4],
      ['host/c2', 4],
    ]);
  });

  it('refuses a move touching a host a task holds, and takes nothing', async () => {
    const locks = new LocalLockService();
    await locks.tryAcquire('host/c3', 'task:9');
    const mine = new ExecutionHostLocks(locks, new Set(), 'executor:e1');
    const first = await mine.acquire(['c1', 'c2']);
    expect(await mine.acquire(['c1', 'c3'])).toEqual({
      ok: false,
      why: 'host c3 is held by task:9',
      retry: false,
    });
    // The refused move's share of c1 was given back: c1 goes with the first move.
    if (first.ok) await mine.release(first.hosts);
    expect((await locks.list('host/')).map((l) => l.name)).toEqual(['host/c3']);
  });

  it('asks again later when the lock backend does not answer', async () => {
    const locks = new SwitchableLocks(new LocalLockService());
    locks.down = 'etcd: timeout';
    const mine = new ExecutionHostLocks(locks, new Set(), 'executor:e1');
    expect(await mine.acquire(['c1', 'c3'])).toMatchObject({ ok: false, retry: true });
  });
});
