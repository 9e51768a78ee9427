// The lock port on a real etcd (started by test/coordination/etcd-server.ts): exclusive locks,
// fences that grow across names and hand-overs, expiry of a dead holder's lock after its TTL, a
// holder cut off from etcd that stops trusting its lock before etcd can give it away, and an
// unreachable etcd reported as LockUnavailableError.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { EtcdLockService } from '../../src/coordination/etcd-locks.js';
import { LockUnavailableError, withLock } from '../../src/coordination/locks.js';
import { cuttableProxy } from './tcp-proxy.js';

const etcd = inject('etcd');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function service(endpoint = etcd?.endpoint ?? '', prefix = `/test-${randomBytes(4).toString('hex')}/`) {
  const s = new EtcdLockService({ endpoints: [endpoint], prefix, callTimeoutMs: 1000 });
  cleanups.push(() => s.close());
  return { s, prefix };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(etcd === null)('EtcdLockService', () => {
  it('gives a free lock to one holder at a time; every acquisition has a larger fence', async () => {
    const { s: a, prefix } = service();
    const { s: b } = service(etcd?.endpoint, prefix);
    const first = await a.tryAcquire('aggregate/agg-1', 'replica-a');
    expect(first).not.toBeNull();
    expect(first?.isValid()).toBe(true);
    expect(await b.tryAcquire('aggregate/agg-1', 'replica-b')).toBeNull();
    expect(await a.tryAcquire('aggregate/agg-1', 'replica-a')).toBeNull();
    const other = await b.tryAcquire('aggregate/agg-2', 'replica-b');
    expect(other!.fence).toBeGreaterThan(first!.fence);
    await first?.release();
    expect(first?.isValid()).toBe(false);
    const second = await b.tryAcquire('aggregate/agg-1', 'replica-b');
    expect(second!.fence).toBeGreaterThan(other!.fence);
    // A stale lease's release leaves the new holder alone.
    await first?.release();
    expect(second?.isValid()).toBe(true);
    expect(await a.list('aggregate/')).toEqual([
      expect.objectContaining({ name: 'aggregate/agg-1', owner: 'replica-b', fence: second!.fence }),
      expect.objectContaining({ name: 'aggregate/agg-2', owner: 'replica-b', fence: other!.fence }),
    ]);
    const ran = await withLock(a, 'aggregate/agg-1', 'replica-a', async () => 1);
    expect(ran).toEqual({ acquired: false, holder: expect.objectContaining({ owner: 'replica-b' }) });
    await a.probe();
  });

  it('lets the same owner under a newer epoch take over a live holder’s lock, which turns invalid', async () => {
    const { s: dead, prefix } = service();
    const { s: next } = service(etcd?.endpoint, prefix);
    const old = await dead.tryAcquire('host/c1', 'executor:e1', { ttlMs: 2000, epoch: 10 });
    expect(old).not.toBeNull();
    expect(await next.tryAcquire('host/c1', 'executor:e2', { ttlMs: 2000, epoch: 99 })).toBeNull();
    expect(await next.tryAcquire('host/c1', 'executor:e1', { ttlMs: 2000 })).toBeNull();
    expect(await next.tryAcquire('host/c1', 'executor:e1', { ttlMs: 2000, epoch: 10 })).toBeNull();
    // At once, not after the old holder's TTL: the old holder is still alive and renewing.
    const resumed = await next.tryAcquire('host/c1', 'executor:e1', { ttlMs: 2000, epoch: 11 });
    expect(resumed).not.toBeNull();
    expect(resumed!.fence).toBeGreaterThan(old!.fence);
    expect(await next.list('host/')).toEqual([
      expect.objectContaining({ name: 'host/c1', owner: 'executor:e1', fence: resumed!.fence, epoch: 11 }),
    ]);
    // The old holder learns at its next renewal (every TTL/3) that it was fenced out.
    const until = Date.now() + 10_000;
    while (old!.isValid() && Date.now() < until) await sleep(100);
    expect(old!.isValid()).toBe(false);
    // Its release (and its lease's revocation) leaves the new holder's key alone.
    await old!.release();
    await sleep(2500);
    expect(resumed!.isValid()).toBe(true);
    expect((await next.list('host/')).map((l) => l.owner)).toEqual(['executor:e1']);
  });

  it('keeps a held lock alive past its TTL, and frees a closed holder’s locks', async () => {
    const { s: a, prefix } = service();
    const { s: b } = service(etcd?.endpoint, prefix);
    const lease = await a.tryAcquire('host/compute1', 'task:1', { ttlMs: 2000 });
    await sleep(3500);
    expect(lease?.isValid()).toBe(true);
    expect(await b.tryAcquire('host/compute1', 'task:2', { ttlMs: 2000 })).toBeNull();
    await a.close();
    expect(lease?.isValid()).toBe(false);
    expect(await b.tryAcquire('host/compute1', 'task:2', { ttlMs: 2000 })).not.toBeNull();
  });

  it('a holder cut off from etcd stops trusting its lock before etcd lets another take it', async () => {
    const proxy = await cuttableProxy(etcd?.endpoint ?? '');
    cleanups.push(() => proxy.close());
    const { s: cutOff, prefix } = service(proxy.endpoint);
    const { s: other } = service(etcd?.endpoint, prefix);
    const lease = await cutOff.tryAcquire('aggregate/agg-9', 'replica-a', { ttlMs: 3000 });
    expect(lease).not.toBeNull();
    proxy.cut();
    const cutAt = Date.now();
    let invalidAt = 0;
    let takenAt = 0;
    while (takenAt === 0 && Date.now() - cutAt < 10_000) {
      if (invalidAt === 0 && !lease?.isValid()) invalidAt = Date.now();
      if ((await other.tryAcquire('aggregate/agg-9', 'replica-b', { ttlMs: 3000 })) !== null)
        takenAt = Date.now();
      else await sleep(50);
    }
    expect(invalidAt).toBeGreaterThan(0);
    expect(takenAt).toBeGreaterThan(0);
    // The margin (1 s by default at this TTL) separates the two.
    expect(takenAt - invalidAt).toBeGreaterThanOrEqual(500);
    // Unreachable: a clear error, nothing held.
    await expect(cutOff.tryAcquire('aggregate/agg-10', 'replica-a', { ttlMs: 3000 })).rejects.toThrow(
      LockUnavailableError,
    );
    await expect(cutOff.probe()).rejects.toThrow(
      /locks: etcd \(http:\/\/127\.0\.0\.1:\d+\) cannot grant a lease/,
    );
  });

  it('refuses a TTL etcd cannot keep', async () => {
    const { s } = service();
    await expect(s.tryAcquire('x', 'y', { ttlMs: 500 })).rejects.toThrow(
      /ttlMs must be at least 2000 on etcd, got 500/,
    );
  });
});
