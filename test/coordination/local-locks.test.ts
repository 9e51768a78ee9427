import { describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import {
  hostLockName,
  hostOfLockName,
  LockUnavailableError,
  withLock,
} from '../../src/coordination/locks.js';

describe('LocalLockService', () => {
  it('gives a free lock to one owner at a time and fences each hand-over', async () => {
    const locks = new LocalLockService(() => 1000);
    const a = await locks.tryAcquire('host/compute5', 'task:1');
    expect(a?.fence).toBe(1);
    expect(await locks.tryAcquire('host/compute5', 'task:2')).toBeNull();
    expect(await locks.tryAcquire('host/compute5', 'task:1')).toBeNull();
    await a?.release();
    expect(a?.isValid()).toBe(false);
    const b = await locks.tryAcquire('host/compute5', 'task:2');
    expect(b?.fence).toBe(2);
    expect(b?.isValid()).toBe(true);
    // A stale lease's release does not free the new holder's lock.
    await a?.release();
    expect(b?.isValid()).toBe(true);
  });

  it('lets the same owner under a newer epoch take a lock over; nobody else, no older epoch', async () => {
    const locks = new LocalLockService(() => 7);
    const old = await locks.tryAcquire('host/c1', 'executor:e1', { epoch: 4 });
    expect(old?.fence).toBe(1);
    // Another owner, no epoch, the same or an older epoch: still exclusive.
    expect(await locks.tryAcquire('host/c1', 'executor:e2', { epoch: 9 })).toBeNull();
    expect(await locks.tryAcquire('host/c1', 'executor:e1')).toBeNull();
    expect(await locks.tryAcquire('host/c1', 'executor:e1', { epoch: 4 })).toBeNull();
    expect(await locks.tryAcquire('host/c1', 'executor:e1', { epoch: 3 })).toBeNull();
    const resumed = await locks.tryAcquire('host/c1', 'executor:e1', { epoch: 5 });
    expect(resumed?.fence).toBe(2);
    expect(old?.isValid()).toBe(false);
    expect(resumed?.isValid()).toBe(true);
    expect(await locks.list('host/')).toEqual([
      { name: 'host/c1', owner: 'executor:e1', fence: 2, since: 7, epoch: 5 },
    ]);
    // The fenced-out holder's release leaves the new one's lock alone.
    await old?.release();
    expect(resumed?.isValid()).toBe(true);
    // A lock taken without an epoch is never taken over.
    await locks.tryAcquire('host/c2', 'executor:e1');
    expect(await locks.tryAcquire('host/c2', 'executor:e1', { epoch: 100 })).toBeNull();
  });

  it('lists held locks under a prefix, sorted', async () => {
    const locks = new LocalLockService(() => 5);
    await locks.tryAcquire('host/b', 'x');
    await locks.tryAcquire('host/a', 'y');
    await locks.tryAcquire('tasks/table', 'z');
    expect(await locks.list('host/')).toEqual([
      { name: 'host/a', owner: 'y', fence: 1, since: 5 },
      { name: 'host/b', owner: 'x', fence: 1, since: 5 },
    ]);
    expect((await locks.list('')).map((l) => l.name)).toEqual(['host/a', 'host/b', 'tasks/table']);
  });

  it('probes by taking and releasing a lock, and fails once closed', async () => {
    const locks = new LocalLockService();
    await locks.probe();
    expect(await locks.list('')).toEqual([]);
    await locks.close();
    await expect(locks.probe()).rejects.toBeInstanceOf(LockUnavailableError);
    await expect(locks.tryAcquire('tasks/table', 'w')).rejects.toBeInstanceOf(LockUnavailableError);
  });
});

describe('withLock', () => {
  it('runs under the lock and releases it, also when the function throws', async () => {
    const locks = new LocalLockService();
    const out = await withLock(locks, 'tasks/table', 'w1', async (lease) => {
      expect((await locks.list('tasks/'))[0]?.owner).toBe('w1');
      return lease.fence;
    });
    expect(out).toEqual({ acquired: true, value: 1 });
    await expect(
      withLock(locks, 'tasks/table', 'w1', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await locks.list('')).toEqual([]);
  });

  it('does not run when the lock is held, and names the holder', async () => {
    const locks = new LocalLockService(() => 7);
    await locks.tryAcquire('tasks/table', 'other');
    let ran = false;
    const out = await withLock(locks, 'tasks/table', 'me', async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect(out).toEqual({
      acquired: false,
      holder: { name: 'tasks/table', owner: 'other', fence: 1, since: 7 },
    });
  });
});

describe('lock names', () => {
  it('maps hosts to host/<host> and back', () => {
    expect(hostLockName('compute5')).toBe('host/compute5');
    expect(hostOfLockName('host/compute5')).toBe('compute5');
    expect(hostOfLockName('tasks/table')).toBeNull();
  });
});
