// Aggregate ownership across an outage of the lock backend: every lease is lost; when the backend
// comes back, the replica back first takes back only what it held (not every aggregate, to hand
// half back a moment later), so no aggregate changes hands twice in one recovery. A replica that
// does not come back has its aggregates taken once the settle time has passed.
import { describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import {
  type AcquireOptions,
  type HeldLock,
  type Lease,
  type LeaseEvent,
  type LockService,
  LockUnavailableError,
} from '../../src/coordination/locks.js';
import { AggregateOwnership } from '../../src/coordination/ownership.js';
import { assignAggregates } from '../../src/coordination/rendezvous.js';

/** A lock backend that can go away: every call fails, and every lock it gave is gone (lapsed). */
class OutageLocks implements LockService {
  readonly kind = 'local' as const;
  private readonly inner = new LocalLockService();
  private readonly given = new Set<{ lease: Lease; dead: boolean }>();
  private down = false;
  async tryAcquire(name: string, owner: string, options?: AcquireOptions): Promise<Lease | null> {
    if (this.down) throw new LockUnavailableError('local', 'backend down');
    const lease = await this.inner.tryAcquire(name, owner, options);
    if (lease === null) return null;
    const g = { lease, dead: false };
    this.given.add(g);
    return { ...lease, isValid: () => !g.dead && lease.isValid(), release: () => lease.release() };
  }
  async list(prefix: string): Promise<HeldLock[]> {
    if (this.down) throw new LockUnavailableError('local', 'backend down');
    return this.inner.list(prefix);
  }
  async probe(): Promise<void> {}
  async close(): Promise<void> {}
  outage(): void {
    this.down = true;
    for (const g of this.given) {
      g.dead = true;
      void g.lease.release();
    }
    this.given.clear();
  }
  restore(): void {
    this.down = false;
  }
}

const AGGREGATES = ['agg-a', 'agg-b', 'agg-c', 'agg-d'];

function replica(id: string, locks: LockService, clock: { now: number }, changes: string[]) {
  return new AggregateOwnership({
    locks,
    replicaId: id,
    aggregates: () => AGGREGATES,
    ttlMs: 5000,
    // Passes are driven by the test.
    intervalMs: 1_000_000,
    now: () => clock.now,
    hooks: {
      acquired: async (a) => void changes.push(`${a} ${id}`),
      releasing: async (a) => void changes.push(`${a} -${id}`),
      lost: (a) => void changes.push(`${a} lost ${id}`),
    },
  });
}

describe('aggregate ownership across an outage of the lock backend', () => {
  it('each replica takes back what it held; no aggregate changes hands twice', async () => {
    const locks = new OutageLocks();
    const clock = { now: 0 };
    const changes: string[] = [];
    const r1 = replica('r1', locks, clock, changes);
    const r2 = replica('r2', locks, clock, changes);
    await r1.start();
    await r2.start();
    await r1.rebalance();
    await r2.rebalance();
    const split = assignAggregates(AGGREGATES, ['r1', 'r2']);
    expect(r1.owned()).toEqual(AGGREGATES.filter((a) => split.get(a) === 'r1'));
    expect(r2.owned()).toEqual(AGGREGATES.filter((a) => split.get(a) === 'r2'));
    const before = { r1: r1.owned(), r2: r2.owned() };

    locks.outage();
    await r1.rebalance();
    await r2.rebalance();
    expect([r1.owned(), r2.owned()]).toEqual([[], []]);
    locks.restore();
    changes.length = 0;
    clock.now += 1000;
    // r1 is back first: r2 has not registered again yet.
    await r1.rebalance();
    expect(r1.owned()).toEqual(before.r1);
    await r2.rebalance();
    for (let i = 0; i < 3; i++) {
      clock.now += 1000;
      await r1.rebalance();
      await r2.rebalance();
    }
    expect({ r1: r1.owned(), r2: r2.owned() }).toEqual(before);
    // One change of hands per aggregate: taken by its old owner, never by the other first.
    for (const a of AGGREGATES) expect(changes.filter((c) => c.startsWith(`${a} `))).toHaveLength(1);
    await r1.stop();
    await r2.stop();
  });

  it('takes the aggregates of a replica that does not come back once the settle time has passed', async () => {
    const locks = new OutageLocks();
    const clock = { now: 0 };
    const changes: string[] = [];
    const r1 = replica('r1', locks, clock, changes);
    const r2 = replica('r2', locks, clock, changes);
    await r1.start();
    await r2.start();
    await r1.rebalance();
    const mine = r1.owned();
    locks.outage();
    await r1.rebalance();
    await r2.stop();
    locks.restore();
    clock.now += 1000;
    await r1.rebalance();
    expect(r1.owned()).toEqual(mine);
    clock.now += 5000; // the TTL since r1 is back: r2 would have registered by now
    await r1.rebalance();
    expect(r1.owned()).toEqual(AGGREGATES);
    await r1.stop();
  });
});

/** Local locks whose leases the test lapses, renews and loses, telling their watchers as etcd would. */
class WatchedLocks implements LockService {
  readonly kind = 'local' as const;
  private readonly inner = new LocalLockService();
  readonly leases = new Map<
    string,
    { lapsed: boolean; gone: boolean; listeners: Set<(e: LeaseEvent) => void> }
  >();
  async tryAcquire(name: string, owner: string, options?: AcquireOptions): Promise<Lease | null> {
    const lease = await this.inner.tryAcquire(name, owner, options);
    if (lease === null) return null;
    const g = { lapsed: false, gone: false, listeners: new Set<(e: LeaseEvent) => void>() };
    this.leases.set(name, g);
    return {
      ...lease,
      isValid: () => !g.lapsed && !g.gone && lease.isValid(),
      release: () => lease.release(),
      watch: (l) => {
        g.listeners.add(l);
        return () => g.listeners.delete(l);
      },
    };
  }
  list(prefix: string): Promise<HeldLock[]> {
    return this.inner.list(prefix);
  }
  async probe(): Promise<void> {}
  async close(): Promise<void> {}
  private tell(name: string, e: LeaseEvent): void {
    for (const l of this.leases.get(name)!.listeners) l(e);
  }
  lapse(name: string): void {
    this.leases.get(name)!.lapsed = true;
    this.tell(name, { type: 'lost', name, final: false, reason: 'no renewal answered', at: 0 });
  }
  renew(name: string): void {
    this.leases.get(name)!.lapsed = false;
    this.tell(name, { type: 'renewed', name, validUntil: 1, at: 0 });
  }
  lose(name: string): void {
    this.leases.get(name)!.gone = true;
    this.tell(name, { type: 'lost', name, final: true, reason: 'etcd says the lease expired', at: 0 });
  }
}

describe('aggregate ownership on lease events', () => {
  it('stops at once when a lease lapses, resumes under the same fence when it is renewed, gives it up when it is gone', async () => {
    const locks = new WatchedLocks();
    const clock = { now: 0 };
    const changes: string[] = [];
    const renewed: string[] = [];
    const r1 = new AggregateOwnership({
      locks,
      replicaId: 'r1',
      aggregates: () => ['agg-a'],
      ttlMs: 5000,
      intervalMs: 1_000_000,
      now: () => clock.now,
      hooks: {
        acquired: async (a, lease) => void changes.push(`${a} r1 fence ${lease.fence}`),
        releasing: async (a) => void changes.push(`${a} -r1`),
        lost: (a) => void changes.push(`${a} lost r1`),
        renewed: (a) => void renewed.push(a),
      },
    });
    await r1.start();
    expect(r1.isReady('agg-a')).toBe(true);
    const fence = r1.fenceOf('agg-a').fence;

    // Lapsed: stopped at once (no pass ran), writes refused, the aggregate still held.
    locks.lapse('aggregate/agg-a');
    expect(changes.at(-1)).toBe('agg-a lost r1');
    expect(r1.isReady('agg-a')).toBe(false);
    expect(() => r1.fenceOf('agg-a')).toThrow(/does not own aggregate agg-a/);
    // A pass while it is lapsed neither drops it nor calls lost again.
    await r1.rebalance();
    expect(changes.filter((c) => c === 'agg-a lost r1')).toHaveLength(1);

    // Renewed: the work resumes under the same fence.
    locks.renew('aggregate/agg-a');
    await r1.rebalance();
    await Promise.resolve();
    expect(renewed).toEqual(['agg-a']);
    expect(r1.isReady('agg-a')).toBe(true);
    expect(r1.fenceOf('agg-a').fence).toBe(fence);
    expect(changes).toEqual([`agg-a r1 fence ${fence}`, 'agg-a lost r1', `agg-a r1 fence ${fence}`]);

    // Lapsed, then gone for good: stopped once, dropped, and taken again under a new fence.
    locks.lapse('aggregate/agg-a');
    locks.lose('aggregate/agg-a');
    await r1.rebalance();
    expect(changes.filter((c) => c === 'agg-a lost r1')).toHaveLength(2);
    clock.now += 10_000; // past the settle time of the recovery the loss started
    await r1.rebalance();
    expect(r1.isReady('agg-a')).toBe(true);
    expect(r1.fenceOf('agg-a').fence).toBeGreaterThan(fence);
    expect(renewed).toEqual(['agg-a']);
    await r1.stop();
  });
});
