// The lock port on a real etcd (started by test/coordination/etcd-server.ts): exclusive locks,
// fences that grow across names and hand-overs, expiry of a dead holder's lock after its TTL, a
// holder cut off from etcd that stops trusting its lock before etcd can give it away, and an
// unreachable etcd reported as LockUnavailableError.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { EtcdLockService } from '../../src/coordination/etcd-locks.js';
import { type Lease, type LeaseEvent, LockUnavailableError, withLock } from '../../src/coordination/locks.js';
import { cuttableProxy } from './tcp-proxy.js';

const etcd = inject('etcd');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function service(
  endpoint = etcd?.endpoint ?? '',
  prefix = `/test-${randomBytes(4).toString('hex')}/`,
  marginMs?: number,
) {
  const s = new EtcdLockService({
    endpoints: [endpoint],
    prefix,
    callTimeoutMs: 1000,
    ...(marginMs !== undefined ? { marginMs } : {}),
  });
  cleanups.push(() => s.close());
  return { s, prefix };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A lease's events as they come; `next()` waits for the next one not yet taken. */
function events(lease: Lease) {
  const seen: LeaseEvent[] = [];
  const waiting: (() => void)[] = [];
  const stop = lease.watch!((e) => {
    seen.push(e);
    for (const w of waiting.splice(0)) w();
  });
  cleanups.push(async () => {
    stop();
  });
  let taken = 0;
  return {
    seen,
    async next(): Promise<LeaseEvent> {
      while (seen.length <= taken) await new Promise<void>((r) => waiting.push(r));
      return seen[taken++]!;
    },
  };
}

/** `p`, or a failure naming `what` after `ms`. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves with the wall time at which etcd deletes the key (its lease expired or was revoked). */
function deletion(key: string): Promise<number> {
  const client = new Etcd3({ hosts: etcd?.endpoint ?? '' });
  cleanups.push(async () => client.close());
  return new Promise((resolve, reject) => {
    client
      .watch()
      .key(key)
      .create()
      .then((w) => w.on('delete', () => resolve(Date.now())), reject);
  });
}

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
    const oldEvents = events(old!);
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
    // The old holder learns at its next renewal (every TTL/3) that it was fenced out, and hears it.
    expect(await oldEvents.next()).toEqual(
      expect.objectContaining({
        type: 'lost',
        name: 'host/c1',
        final: true,
        reason: 'taken over under a newer epoch',
      }),
    );
    expect(old!.isValid()).toBe(false);
    // Its release (and its lease's revocation) leaves the new holder's key alone.
    await old!.release();
    // Past the old lease's TTL on etcd's own clock (nothing happens to wait for: the test is that
    // nothing does).
    await sleep(2500);
    expect(resumed!.isValid()).toBe(true);
    expect((await next.list('host/')).map((l) => l.owner)).toEqual(['executor:e1']);
  });

  it('keeps a held lock alive past its TTL, and frees a closed holder’s locks', async () => {
    const { s: a, prefix } = service();
    const { s: b } = service(etcd?.endpoint, prefix);
    const lease = await a.tryAcquire('host/compute1', 'task:1', { ttlMs: 2000 });
    // Past the TTL on etcd's own clock: only renewals, which announce nothing, keep the lock.
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
    const heard = events(lease!);
    // etcd lets another take the lock when it deletes the key: the watch says when.
    const deleted = deletion(`${prefix}locks/aggregate/agg-9`);
    proxy.cut();
    const lapsed = await within(10_000, 'the cut-off holder to stop trusting its lock', heard.next());
    expect(lapsed).toEqual(expect.objectContaining({ type: 'lost', name: 'aggregate/agg-9' }));
    expect(lease?.isValid()).toBe(false);
    const invalidAt = lapsed.at;
    const takenAt = await within(10_000, 'etcd to let the lock go', deleted);
    expect(await other.tryAcquire('aggregate/agg-9', 'replica-b', { ttlMs: 3000 })).not.toBeNull();
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

  it('tells its holder at once when a lock lapses, and when etcd renews it under the same fence', async () => {
    const proxy = await cuttableProxy(etcd?.endpoint ?? '');
    cleanups.push(() => proxy.close());
    // TTL 8 s, trusted until 4 s after a renewal was sent: a lapsed lock has 4 s to come back.
    const { s: holder, prefix } = service(proxy.endpoint, undefined, 4000);
    const { s: other } = service(etcd?.endpoint, prefix);
    const lease = (await holder.tryAcquire('aggregate/agg-e', 'replica-a', { ttlMs: 8000 }))!;
    const heard = events(lease);
    // etcd stops answering this holder (connections open, nothing flows).
    proxy.freeze();
    const lost = await heard.next();
    expect(lost).toEqual(expect.objectContaining({ type: 'lost', name: 'aggregate/agg-e', final: false }));
    expect(lost.type === 'lost' && lost.reason).toMatch(/^no renewal answered since .*; still renewing$/);
    expect(lease.isValid()).toBe(false);
    // etcd still has it: nobody else can take it while its holder waits for a renewal.
    expect(await other.tryAcquire('aggregate/agg-e', 'replica-b', { ttlMs: 8000 })).toBeNull();
    proxy.thaw();
    const renewed = await heard.next();
    expect(renewed).toEqual(expect.objectContaining({ type: 'renewed', name: 'aggregate/agg-e' }));
    expect(renewed.at).toBeGreaterThan(lost.at);
    expect(lease.isValid()).toBe(true);
    expect(await other.list('aggregate/')).toEqual([
      expect.objectContaining({ name: 'aggregate/agg-e', owner: 'replica-a', fence: lease.fence }),
    ]);
    expect(heard.seen).toHaveLength(2);
  });

  it('gives a lapsed lock up for good before etcd can hand it to another holder', async () => {
    const proxy = await cuttableProxy(etcd?.endpoint ?? '');
    cleanups.push(() => proxy.close());
    const { s: holder, prefix } = service(proxy.endpoint, undefined, 2000);
    const { s: other } = service(etcd?.endpoint, prefix);
    const lease = (await holder.tryAcquire('aggregate/agg-f', 'replica-a', { ttlMs: 4000 }))!;
    const heard = events(lease);
    const deleted = deletion(`${prefix}locks/aggregate/agg-f`);
    proxy.freeze();
    const lapsed = await heard.next();
    expect(lapsed).toEqual(expect.objectContaining({ type: 'lost', final: false }));
    const gone = await heard.next();
    expect(gone).toEqual(expect.objectContaining({ type: 'lost', final: true }));
    expect(gone.type === 'lost' && gone.reason).toMatch(/etcd may have let the lease expire$/);
    expect(lease.isValid()).toBe(false);
    // The holder had stopped (the first event) before etcd let the key go.
    const deletedAt = await deleted;
    expect(lapsed.at).toBeLessThan(deletedAt);
    const next = await other.tryAcquire('aggregate/agg-f', 'replica-b', { ttlMs: 4000 });
    expect(next!.fence).toBeGreaterThan(lease.fence);
    // Thawed, the old holder's renewals are over: no renewal comes back.
    proxy.thaw();
    await lease.release();
    expect(heard.seen).toHaveLength(2);
  });

  it('refuses a TTL etcd cannot keep', async () => {
    const { s } = service();
    await expect(s.tryAcquire('x', 'y', { ttlMs: 500 })).rejects.toThrow(
      /ttlMs must be at least 2000 on etcd, got 500/,
    );
  });
});
