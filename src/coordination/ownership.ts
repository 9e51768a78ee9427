// One owner per aggregate among the live replicas. Each replica registers itself (a lock named
// replica/<id>, so the registry is as live as the lock backend's leases), computes by rendezvous
// hashing which aggregates it should own, and on every pass: drops the aggregates whose lease it
// lost, hands over those another replica should now own (stop acting first, then release), and
// takes the free ones it should own (take the lease, then the hooks claim the store's fence and
// resume what the previous owner left). Two replicas never act on one aggregate: acting needs a
// valid lease, a lease is given only once the previous one is released or expired, and a holder
// cut off from the lock backend stops trusting its lease before the backend can expire it.
//
// Where the backend tells (Lease.watch, etcd), a lapsed lease stops the aggregate's work at once
// (hooks.lost), not at the next pass; the aggregate stays held while the backend may still renew
// the lease, and a renewal resumes the work under the same fence (hooks.acquired again, which
// claims nothing new and resumes what stopped). Only a lease gone for good gives it up.

import { type Logger, silentLogger } from '../cloud/log.js';
import type { OwnerFence } from '../store/ownership.js';
import { aggregateLockName, type Lease, type LeaseEvent, LOCK_NAMES, type LockService } from './locks.js';
import { aggregatesOf } from './rendezvous.js';

export const REPLICA_LOCK_PREFIX = 'replica/';

export interface OwnershipHooks {
  /**
   * The replica holds the aggregate's lease; resolve once it may act (the store's fence claimed,
   * unfinished executions resumed). Throwing gives the lease back.
   */
  acquired(aggregate: string, lease: Lease): Promise<void>;
  /** The aggregate is being given back: resolve once nothing more is written or sent for it. */
  releasing(aggregate: string): Promise<void>;
  /**
   * The lease was lost (expired, backend unreachable too long) or lapsed (its holder stopped
   * trusting it, the backend may still renew it): nothing acts on it any more.
   */
  lost(aggregate: string): void;
  /** A lapsed lease was renewed, and `acquired` has resumed the aggregate's work under the same fence. */
  renewed?(aggregate: string): void;
}

export interface OwnershipOptions {
  locks: LockService;
  /** Unique among the replicas (a host name, a pod name). */
  replicaId: string;
  /** Every aggregate to shard (configured and discovered). */
  aggregates: () => readonly string[];
  /** Lease TTL: how long an aggregate stays without an owner after its owner dies. */
  ttlMs: number;
  /** How often membership is read and ownership rebalanced. */
  intervalMs: number;
  hooks: OwnershipHooks;
  logger?: Logger;
  now?: () => number;
  /** Where this replica's API answers (shown by GET /v1/replicas), when it serves one. */
  address?: string;
}

/** A live replica as the lock backend shows it (GET /v1/replicas, `aicerine status`). */
export interface ReplicaStatus {
  id: string;
  /** Its API address, as it registered it; null when it serves none. */
  address: string | null;
  /** When it registered (ISO time). */
  since: string;
  /** When it last renewed its registration: its heartbeat (ISO time); null when unknown. */
  lastHeartbeat: string | null;
  /** The aggregates it holds, with the fence of each. */
  aggregates: { aggregate: string; fence: number }[];
  /** The replica answering the request. */
  self: boolean;
}

/** Who owns which aggregate, read from the lock backend by any replica. */
export interface ReplicaDirectory {
  replicaId: string;
  replicas(): Promise<ReplicaStatus[]>;
  /** The owner and fence of each aggregate held now. */
  owners(): Promise<Map<string, { replica: string; fence: number }>>;
}

/**
 * After this replica lost its leases or its registration (the lock backend was unreachable, or
 * restarted): what it held and which replicas were live then. Until every one of them has
 * registered again, or `settleMs` has passed since this replica is back, it takes back only what
 * it held: the first replica back would otherwise win every aggregate and hand half of them
 * back a moment later, each change of hands a pause of the aggregate's work.
 */
interface Recovery {
  held: Set<string>;
  peers: Set<string>;
  /** Set when this replica is registered again; null while it is not. */
  settlesAt: number | null;
}

/** A write or a call for an aggregate this replica does not own now. */
export class NotOwnerError extends Error {
  constructor(
    readonly aggregate: string,
    replica: string,
  ) {
    super(`replica ${replica} does not own aggregate ${aggregate} (lease lost or handed over)`);
    this.name = 'NotOwnerError';
  }
}

interface Held {
  lease: Lease;
  releasing: boolean;
  /** The acquired hook has finished: the previous owner's executions are resumed here. */
  ready: boolean;
  /** hooks.lost was called for this lease (it lapsed or is gone); a renewal clears it. */
  stopped: boolean;
  /** The backend said the lease is gone for good. */
  gone: boolean;
  unwatch: () => void;
}

export class AggregateOwnership implements ReplicaDirectory {
  private readonly held = new Map<string, Held>();
  private registration: Lease | null = null;
  /** The registration lapsed and the backend may still renew it: no pass acts meanwhile. */
  private registrationLapsed = false;
  /** No pass has registered yet (start-up is not a recovery). */
  private firstPass = true;
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;
  private stopped = false;
  private readonly log: Logger;
  /** The live replicas as the last pass read them. */
  private live: string[] = [];
  private recovery: Recovery | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: OwnershipOptions) {
    this.log = opts.logger ?? silentLogger;
    this.now = opts.now ?? Date.now;
  }

  get replicaId(): string {
    return this.opts.replicaId;
  }

  /** True while this replica may act on the aggregate. */
  holds(aggregate: string): boolean {
    const h = this.held.get(aggregate);
    return h !== undefined && !h.releasing && h.lease.isValid();
  }

  /** The fence every write for the aggregate carries; throws NotOwnerError when not held now. */
  fenceOf(aggregate: string): OwnerFence {
    const h = this.held.get(aggregate);
    if (h === undefined || h.releasing || !h.lease.isValid())
      throw new NotOwnerError(aggregate, this.opts.replicaId);
    return { aggregate, fence: h.lease.fence, owner: this.opts.replicaId };
  }

  /**
   * True once the aggregate is held and taken over (fence claimed, the previous owner's executions
   * resumed): only then may something new start on it (the loop plans it).
   */
  isReady(aggregate: string): boolean {
    return this.holds(aggregate) && this.held.get(aggregate)?.ready === true;
  }

  /** Aggregates held now, sorted. */
  owned(): string[] {
    return [...this.held.keys()].filter((a) => this.holds(a)).sort();
  }

  /** Live replicas as the last pass read them. */
  liveReplicas(): string[] {
    return [...this.live];
  }

  async owners(): Promise<Map<string, { replica: string; fence: number }>> {
    const held = await this.opts.locks.list(LOCK_NAMES.aggregatePrefix);
    return new Map(
      held.map((l) => [
        l.name.slice(LOCK_NAMES.aggregatePrefix.length),
        { replica: l.owner, fence: l.fence },
      ]),
    );
  }

  async replicas(): Promise<ReplicaStatus[]> {
    const [registered, owners] = await Promise.all([
      this.opts.locks.list(REPLICA_LOCK_PREFIX, { renewals: true }),
      this.owners(),
    ]);
    const iso = (ms: number) => new Date(ms).toISOString();
    return registered.map((r) => {
      const id = r.name.slice(REPLICA_LOCK_PREFIX.length);
      return {
        id,
        address: r.note ?? null,
        since: iso(r.since),
        lastHeartbeat: r.renewedAt !== undefined ? iso(r.renewedAt) : null,
        aggregates: [...owners]
          .filter(([, o]) => o.replica === id)
          .map(([aggregate, o]) => ({ aggregate, fence: o.fence }))
          .sort((a, b) => (a.aggregate < b.aggregate ? -1 : 1)),
        self: id === this.opts.replicaId,
      };
    });
  }

  /** Registers the replica (refused when a live replica has the same id) and starts rebalancing. */
  async start(): Promise<void> {
    await this.register(true);
    await this.rebalance();
    this.schedule();
  }

  /** Hands every aggregate back (stop acting, then release), and leaves the registry. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
    await Promise.all([...this.held.keys()].map((a) => this.handOver(a)));
    await this.registration?.release();
    this.registration = null;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.rebalance().finally(() => this.schedule());
    }, this.opts.intervalMs);
  }

  private async register(first: boolean): Promise<void> {
    const lease = await this.opts.locks.tryAcquire(
      `${REPLICA_LOCK_PREFIX}${this.opts.replicaId}`,
      this.opts.replicaId,
      { ttlMs: this.opts.ttlMs, ...(this.opts.address !== undefined ? { note: this.opts.address } : {}) },
    );
    if (lease === null) {
      if (first)
        throw new Error(
          `coordination: replica id ${this.opts.replicaId} is already registered by a live replica (each replica needs its own coordination.replicaId)`,
        );
      return;
    }
    this.registration = lease;
    this.registrationLapsed = false;
    lease.watch?.((e) => {
      if (this.registration !== lease) return;
      this.registrationLapsed = e.type === 'lost' && !e.final;
      if (e.type === 'lost' && e.final) void this.rebalance();
    });
  }

  /** One pass: drop lost leases, read membership, hand over and take aggregates. */
  rebalance(): Promise<void> {
    if (this.pass) return this.pass;
    this.pass = this.rebalanceOnce()
      .catch((e: unknown) => {
        this.log.warn('coordination: rebalance pass failed; the next one tries again', {
          error: e instanceof Error ? e.message : String(e),
        });
      })
      .finally(() => {
        this.pass = null;
      });
    return this.pass;
  }

  private async rebalanceOnce(): Promise<void> {
    const lostNow: string[] = [];
    for (const [aggregate, h] of this.held) {
      if (h.releasing || h.lease.isValid()) continue;
      // Lapsed, and the backend said so: it may still renew it (a renewed or final event follows).
      if (h.stopped && !h.gone) continue;
      this.held.delete(aggregate);
      h.unwatch();
      lostNow.push(aggregate);
      if (!h.stopped) {
        this.log.warn(`coordination: lease of aggregate ${aggregate} lost; stopped acting on it`);
        this.opts.hooks.lost(aggregate);
      }
      // Stops its renewals: a lease renewed after it was dropped here would keep the key from
      // everyone, this replica included.
      void h.lease.release();
    }
    if (this.stopped) return;
    if (this.registrationLapsed && this.registration?.isValid() === false) return;
    const registered = this.registration?.isValid() === true;
    if (lostNow.length > 0 || (!registered && !this.firstPass)) this.startRecovery(lostNow);
    if (!registered) {
      void this.registration?.release();
      this.registration = null;
      await this.register(false);
      if (this.registration === null) return;
    }
    this.firstPass = false;
    this.live = (await this.opts.locks.list(REPLICA_LOCK_PREFIX))
      .map((l) => l.name.slice(REPLICA_LOCK_PREFIX.length))
      .sort();
    let wanted = new Set(aggregatesOf(this.opts.replicaId, [...new Set(this.opts.aggregates())], this.live));
    const recovery = this.settle();
    if (recovery !== null) wanted = new Set([...wanted].filter((a) => recovery.held.has(a)));
    const leaving = [...this.held.keys()].filter((a) => !wanted.has(a));
    await Promise.all(leaving.map((a) => this.handOver(a)));
    // Every free one at once: a dead owner's aggregates are taken together, not one after
    // another's claim and resume (each a few store round trips, slow on a loaded machine).
    const taking = await Promise.allSettled(
      [...wanted].filter((a) => !this.held.has(a)).map((aggregate) => this.take(aggregate)),
    );
    const failed = taking.find((t): t is PromiseRejectedResult => t.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  /** Takes a free aggregate this replica should own: its lease, then the hooks' takeover. */
  private async take(aggregate: string): Promise<void> {
    if (this.stopped) return;
    const lease = await this.opts.locks.tryAcquire(aggregateLockName(aggregate), this.opts.replicaId, {
      ttlMs: this.opts.ttlMs,
    });
    if (lease === null) return; // its previous owner has not handed it over yet
    if (this.stopped) {
      await lease.release();
      return;
    }
    const h: Held = {
      lease,
      releasing: false,
      ready: false,
      stopped: false,
      gone: false,
      unwatch: () => {},
    };
    this.held.set(aggregate, h);
    h.unwatch = lease.watch?.((e) => this.onLeaseEvent(aggregate, h, e)) ?? h.unwatch;
    try {
      await this.opts.hooks.acquired(aggregate, lease);
      h.ready = true;
      this.log.info(`coordination: owns aggregate ${aggregate} (fence ${lease.fence})`);
    } catch (e) {
      this.log.warn(`coordination: could not take over aggregate ${aggregate}; giving it back`, {
        error: e instanceof Error ? e.message : String(e),
      });
      await this.handOver(aggregate);
    }
  }

  /** A held aggregate's lease lapsed, came back, or is gone: stop at once, resume, or give it up. */
  private onLeaseEvent(aggregate: string, h: Held, e: LeaseEvent): void {
    if (this.held.get(aggregate) !== h || h.releasing) return;
    if (e.type === 'lost') {
      if (e.final) h.gone = true;
      if (!h.stopped) {
        h.stopped = true;
        h.ready = false;
        this.log.warn(
          `coordination: lease of aggregate ${aggregate} ${e.final ? 'lost' : 'lapsed'} (${e.reason}); stopped acting on it`,
        );
        this.opts.hooks.lost(aggregate);
      }
      if (e.final) void this.rebalance();
      return;
    }
    if (!h.stopped || h.gone) return;
    h.stopped = false;
    this.log.info(
      `coordination: lease of aggregate ${aggregate} renewed (fence ${h.lease.fence}); acting on it again`,
    );
    void this.opts.hooks.acquired(aggregate, h.lease).then(
      () => {
        if (this.held.get(aggregate) !== h || h.stopped || h.releasing) return;
        h.ready = true;
        this.opts.hooks.renewed?.(aggregate);
      },
      (err: unknown) => {
        this.log.warn(
          `coordination: could not resume aggregate ${aggregate} after its renewal; giving it back`,
          {
            error: err instanceof Error ? err.message : String(err),
          },
        );
        void this.handOver(aggregate);
      },
    );
  }

  /** Remembers what was held and who was live, at the first sign of an outage. */
  private startRecovery(lostNow: readonly string[]): void {
    if (this.recovery === null) {
      this.recovery = {
        held: new Set([...this.held.keys(), ...lostNow]),
        peers: new Set(this.live.filter((r) => r !== this.opts.replicaId)),
        settlesAt: null,
      };
      return;
    }
    for (const a of [...this.held.keys(), ...lostNow]) this.recovery.held.add(a);
    this.recovery.settlesAt = null;
  }

  /** The recovery in force after this pass's membership read, or null once it has settled. */
  private settle(): Recovery | null {
    const r = this.recovery;
    if (r === null) return null;
    r.settlesAt ??= this.now() + this.opts.ttlMs;
    const missing = [...r.peers].filter((p) => !this.live.includes(p));
    if (missing.length === 0 || this.now() >= r.settlesAt) {
      this.recovery = null;
      this.log.info(
        missing.length === 0
          ? 'coordination: every replica is back; ownership rebalances'
          : `coordination: replicas ${missing.join(', ')} did not come back; ownership rebalances`,
      );
      return null;
    }
    return r;
  }

  private async handOver(aggregate: string): Promise<void> {
    const h = this.held.get(aggregate);
    if (h === undefined || h.releasing) return;
    h.releasing = true;
    try {
      await this.opts.hooks.releasing(aggregate);
    } finally {
      h.unwatch();
      await h.lease.release();
      this.held.delete(aggregate);
      this.log.info(`coordination: handed over aggregate ${aggregate}`);
    }
  }
}
