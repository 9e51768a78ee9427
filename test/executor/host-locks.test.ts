import { describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { lockMoveHosts } from '../../src/executor/host-locks.js';
import { SwitchableLocks } from '../tasks/rig.js';

describe("the executor's host locks", () => {
  it('holds source and destination for a move, skipping the hosts its starter holds', async () => {
    const locks = new LocalLockService();
    const out = await lockMoveHosts(locks, ['c5', 'c2'], new Set(['c5']), 'executor:e1 step 1');
    expect(out.ok).toBe(true);
    expect((await locks.list('host/')).map((l) => [l.name, l.owner])).toEqual([
      ['host/c2', 'executor:e1 step 1'],
    ]);
    if (out.ok) await Promise.all(out.leases.map((l) => l.release()));
    expect(await locks.list('host/')).toEqual([]);
  });

  it('refuses a move touching a host a task holds, and takes nothing', async () => {
    const locks = new LocalLockService();
    await locks.tryAcquire('host/c3', 'task:9');
    expect(await lockMoveHosts(locks, ['c1', 'c3'], new Set(), 'executor:e1 step 2')).toEqual({
      ok: false,
      why: 'host c3 is held by task:9',
      retry: false,
    });
    expect((await locks.list('host/')).map((l) => l.name)).toEqual(['host/c3']);
  });

  it('asks again later when the lock backend does not answer', async () => {
    const locks = new SwitchableLocks(new LocalLockService());
    locks.down = 'etcd: timeout';
    expect(await lockMoveHosts(locks, ['c1', 'c3'], new Set(), 'executor:e1 step 2')).toMatchObject({
      ok: false,
      retry: true,
    });
  });
});
