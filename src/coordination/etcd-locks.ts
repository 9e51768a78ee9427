// The lock port on etcd, for several replicas. A lock is a key created, only if absent, in one
// transaction, and attached to an etcd lease of its own: the key disappears when the lease is
// revoked (release) or expires (the holder died or lost etcd). The fence is the revision of that
// transaction: etcd's revision only grows, so a later holder of any lock always has a larger fence.
//
// Keep-alive is ours, not the client's: every ttl/3 the holder renews its lease and, on each
// answer, moves its local deadline to (when the renewal was sent) + TTL − margin. A holder cut off
// from etcd sees isValid() turn false at that deadline, which is before etcd can let the lease
// expire and hand the lock to someone else: etcd's TTL starts no earlier than our send.
//
// The holder hears of it as it happens (Lease.watch): `lost` at the local deadline, while renewals
// go on, faster; `renewed` when one lands before etcd could let the lease go (etcd still had it,
// so nobody else took the key, and the fence is unchanged); a final `lost` when etcd says the
// lease is gone, when a newer epoch took the key, or once etcd may have let it expire (the last
// answered renewal's send + TTL) without a renewal answered.

import { noop } from 'cockatiel';
import { Etcd3, type IOptions } from 'etcd3';
import {
  type AcquireOptions,
  DEFAULT_LOCK_TTL_MS,
  type HeldLock,
  type Lease,
  type LeaseEvent,
  type ListOptions,
  type LockService,
  LockUnavailableError,
  supersedes,
} from './locks.js';

export interface EtcdLockOptions {
  /** Client URLs of the etcd cluster, e.g. ["http://10.0.0.1:2379"]. */
  endpoints: string[];
  /** Key prefix of every Aicerine key (default "/aicerine/"): several installations may share a cluster. */
  prefix?: string;
  /** How long one etcd call may take before the backend counts as unreachable (default 3000 ms). */
  callTimeoutMs?: number;
  /**
   * How long before the lease's etcd expiry a holder stops trusting its lock (default: a fifth of
   * the TTL, at least 1000 ms): covers a call in flight when the deadline passes and clock drift.
   */
  marginMs?: number;
  auth?: { username: string; password: string };
  tls?: { rootCertificate: Buffer; privateKey?: Buffer; certChain?: Buffer };
  now?: () => number;
}

interface Holding {
  name: string;
  owner: string;
  fence: number;
  lease: ReturnType<Etcd3['lease']>;
  leaseId: string;
  /** Taken under an epoch: a newer epoch of the same owner may take the key over (checked at renewals). */
  epoch: number | undefined;
  ttlMs: number;
  validUntil: number;
  /** When the last answered renewal (or the grant) was sent: etcd keeps the lease TTL after it, at least. */
  renewedSentAt: number;
  released: boolean;
  /** Gone for good (final lost). */
  lost: boolean;
  /** Past its local deadline, not renewed since; etcd may still renew it. */
  lapsed: boolean;
  timer: NodeJS.Timeout | null;
  /** Fires at the local deadline, then at the give-up time while lapsed. */
  deadline: NodeJS.Timeout | null;
  listeners: Set<(event: LeaseEvent) => void>;
}

/** An etcd lease (a held lock) as this service hands it out: the port's Lease, plus its deadline. */
export interface EtcdLease extends Lease {
  /** Epoch ms (the injected clock) after which isValid() is false unless a renewal lands first. */
  validUntil(): number;
}

const MIN_TTL_MS = 2000;
/** How often a lapsed holder tries to renew: it has only until etcd may let the lease go. */
const LAPSED_RETRY_MS = 200;

export class EtcdLockService implements LockService {
  readonly kind = 'etcd' as const;
  private readonly client: Etcd3;
  private readonly prefix: string;
  private readonly callTimeoutMs: number;
  private readonly now: () => number;
  private readonly held = new Set<Holding>();
  private closed = false;
  private probes = 0;

  constructor(private readonly options: EtcdLockOptions) {
    if (options.endpoints.length === 0) throw new Error('locks: etcd needs at least one endpoint');
    this.prefix = options.prefix ?? '/aicerine/';
    this.callTimeoutMs = options.callTimeoutMs ?? 3000;
    this.now = options.now ?? Date.now;
    const clientOptions: IOptions = {
      hosts: options.endpoints,
      dialTimeout: this.callTimeoutMs,
      // Every call has a deadline, and no retry policy of the client's: an unreachable etcd is a
      // LockUnavailableError within callTimeoutMs, and the caller decides what to do.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + this.callTimeoutMs }),
      faultHandling: { host: () => noop, global: noop },
      ...(options.auth ? { auth: options.auth } : {}),
      ...(options.tls ? { credentials: options.tls } : {}),
    };
    this.client = new Etcd3(clientOptions);
  }

  private key(name: string): string {
    return `${this.prefix}locks/${name}`;
  }

  private unavailable(what: string, err: unknown): LockUnavailableError {
    const why = err instanceof Error ? err.message : String(err);
    return new LockUnavailableError(
      'etcd',
      `locks: etcd (${this.options.endpoints.join(', ')}) ${what}: ${why}`,
      {
        cause: err,
      },
    );
  }

  async tryAcquire(name: string, owner: string, options?: AcquireOptions): Promise<EtcdLease | null> {
    if (this.closed)
      throw new LockUnavailableError('etcd', `locks: the etcd lock service is closed (acquiring ${name})`);
    if (name === '' || owner === '') throw new Error('locks: a lock has a name and an owner');
    const ttlMs = options?.ttlMs ?? DEFAULT_LOCK_TTL_MS;
    if (!Number.isFinite(ttlMs) || ttlMs < MIN_TTL_MS)
      throw new RangeError(`locks: ${name}: ttlMs must be at least ${MIN_TTL_MS} on etcd, got ${ttlMs}`);
    const ttlSeconds = Math.ceil(ttlMs / 1000);
    const sentAt = this.now();
    const lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    // The lease's 'lost' events are ours to judge (isValid); an unhandled 'error' would crash.
    lease.on('lost', () => {});
    let leaseId: string;
    try {
      leaseId = await lease.grant();
    } catch (err) {
      lease.release();
      throw this.unavailable(`cannot grant a lease for ${name}`, err);
    }
    const since = this.now();
    const epoch = options?.epoch;
    const note = options?.note;
    const value = JSON.stringify({
      owner,
      since,
      ...(epoch !== undefined ? { epoch } : {}),
      ...(note !== undefined ? { note } : {}),
    });
    let result: Awaited<ReturnType<ReturnType<Etcd3['if']>['commit']>>;
    try {
      result = await this.client
        .if(this.key(name), 'Create', '==', 0)
        .then(this.client.put(this.key(name)).value(value).lease(leaseId))
        .commit();
      if (!result.succeeded && epoch !== undefined) {
        // Held: by an earlier run of the same owner under an older epoch, it is taken over in
        // place, provided nobody changed the key since it was read.
        const kv = (await this.client.get(this.key(name)).exec()).kvs[0];
        if (kv !== undefined && supersedes(parseHolder(kv.value.toString()), owner, epoch)) {
          result = await this.client
            .if(this.key(name), 'Mod', '==', kv.mod_revision)
            .then(this.client.put(this.key(name)).value(value).lease(leaseId))
            .commit();
        }
      }
    } catch (err) {
      await this.revokeQuietly(lease);
      throw this.unavailable(`cannot take ${name}`, err);
    }
    if (!result.succeeded) {
      await this.revokeQuietly(lease);
      return null;
    }
    const holding: Holding = {
      name,
      owner,
      fence: Number(result.header.revision),
      lease,
      leaseId: String(leaseId),
      epoch,
      ttlMs: ttlSeconds * 1000,
      validUntil: sentAt + ttlSeconds * 1000 - this.margin(ttlSeconds * 1000),
      renewedSentAt: sentAt,
      released: false,
      lost: false,
      lapsed: false,
      timer: null,
      deadline: null,
      listeners: new Set(),
    };
    this.held.add(holding);
    this.scheduleKeepAlive(holding);
    this.scheduleDeadline(holding);
    return {
      name,
      owner,
      fence: holding.fence,
      isValid: () => this.isValid(holding),
      validUntil: () => holding.validUntil,
      release: () => this.release(holding),
      watch: (listener) => {
        holding.listeners.add(listener);
        return () => holding.listeners.delete(listener);
      },
    };
  }

  private emit(h: Holding, event: LeaseEvent): void {
    for (const l of [...h.listeners]) {
      try {
        l(event);
      } catch {
        // A listener's failure is its own: the others still hear, the lock goes on.
      }
    }
  }

  /** At the local deadline: lapse (unless renewed meanwhile); while lapsed: give up at etcd's earliest expiry. */
  private scheduleDeadline(h: Holding): void {
    if (h.deadline) clearTimeout(h.deadline);
    h.deadline = null;
    if (h.released || h.lost) return;
    const at = h.lapsed ? h.renewedSentAt + h.ttlMs : h.validUntil;
    h.deadline = setTimeout(() => this.onDeadline(h), Math.max(0, at - this.now()) + 1);
    h.deadline.unref();
  }

  private onDeadline(h: Holding): void {
    h.deadline = null;
    if (h.released || h.lost) return;
    const now = this.now();
    if (h.lapsed) {
      if (now >= h.renewedSentAt + h.ttlMs) {
        this.lose(
          h,
          `no renewal answered since ${new Date(h.renewedSentAt).toISOString()}: etcd may have let the lease expire`,
        );
        h.lease.release();
        return;
      }
    } else if (now >= h.validUntil) {
      h.lapsed = true;
      this.emit(h, {
        type: 'lost',
        name: h.name,
        final: false,
        reason: `no renewal answered since ${new Date(h.renewedSentAt).toISOString()}; still renewing`,
        at: now,
      });
      // Renew at once and often: only until etcd's earliest expiry can the lock come back.
      if (h.timer) {
        clearTimeout(h.timer);
        h.timer = null;
        void this.keepAlive(h);
      }
    }
    this.scheduleDeadline(h);
  }

  /** Gone for good: tells the listeners, stops renewing. */
  private lose(h: Holding, reason: string): void {
    if (h.lost || h.released) return;
    h.lost = true;
    h.lapsed = false;
    this.held.delete(h);
    if (h.timer) clearTimeout(h.timer);
    if (h.deadline) clearTimeout(h.deadline);
    h.timer = null;
    h.deadline = null;
    this.emit(h, { type: 'lost', name: h.name, final: true, reason, at: this.now() });
  }

  private margin(ttlMs: number): number {
    return this.options.marginMs ?? Math.max(1000, Math.round(ttlMs / 5));
  }

  private isValid(h: Holding): boolean {
    return !h.released && !h.lost && !h.lapsed && this.now() < h.validUntil;
  }

  private scheduleKeepAlive(h: Holding): void {
    if (h.released || h.lost) return;
    const every = Math.max(200, Math.floor(h.ttlMs / 3));
    h.timer = setTimeout(() => void this.keepAlive(h), h.lapsed ? Math.min(every, LAPSED_RETRY_MS) : every);
    h.timer.unref();
  }

  private async keepAlive(h: Holding): Promise<void> {
    h.timer = null;
    if (h.released || h.lost) return;
    const sentAt = this.now();
    try {
      const res = await h.lease.keepaliveOnce({ deadline: Date.now() + this.callTimeoutMs });
      if (h.released || h.lost) return;
      if (Number(res.TTL) <= 0) {
        // etcd no longer knows the lease: it expired (we were cut off too long) or was revoked.
        this.lose(h, 'etcd says the lease expired');
        h.lease.release();
        return;
      }
      if (h.epoch !== undefined && !(await this.stillMine(h))) {
        // A newer epoch of the same owner took the key over: this holder is fenced out.
        this.lose(h, 'taken over under a newer epoch');
        await this.revokeQuietly(h.lease);
        return;
      }
      if (h.released || h.lost) return;
      h.renewedSentAt = Math.max(h.renewedSentAt, sentAt);
      h.validUntil = Math.max(h.validUntil, sentAt + Number(res.TTL) * 1000 - this.margin(h.ttlMs));
      if (h.lapsed && this.now() < h.validUntil) {
        // etcd still had the lease: nobody could take the key meanwhile, the fence is unchanged.
        h.lapsed = false;
        this.emit(h, { type: 'renewed', name: h.name, validUntil: h.validUntil, at: this.now() });
      }
      this.scheduleDeadline(h);
    } catch {
      // Unreachable for now: the lock stays valid until its local deadline (then lapses, see
      // onDeadline), renewals go on.
    }
    this.scheduleKeepAlive(h);
  }

  /** The key is still attached to this holder's etcd lease (not taken over under a newer epoch). */
  private async stillMine(h: Holding): Promise<boolean> {
    const kv = (await this.client.get(this.key(h.name)).exec()).kvs[0];
    return kv !== undefined && String(kv.lease) === h.leaseId;
  }

  private async revokeQuietly(lease: ReturnType<Etcd3['lease']>): Promise<void> {
    try {
      await lease.revoke({ deadline: Date.now() + this.callTimeoutMs });
    } catch {
      // It expires by its TTL.
      lease.release();
    }
  }

  private async release(h: Holding): Promise<void> {
    if (h.released) return;
    h.released = true;
    if (h.timer) clearTimeout(h.timer);
    if (h.deadline) clearTimeout(h.deadline);
    h.timer = null;
    h.deadline = null;
    this.held.delete(h);
    if (!h.lost) await this.revokeQuietly(h.lease);
  }

  async list(prefix: string, options?: ListOptions): Promise<HeldLock[]> {
    if (this.closed) throw new LockUnavailableError('etcd', 'locks: the etcd lock service is closed');
    try {
      const base = this.key('');
      const res = await this.client.getAll().prefix(this.key(prefix)).exec();
      const out = await Promise.all(
        res.kvs.map(async (kv): Promise<HeldLock> => {
          const name = kv.key.toString().slice(base.length);
          const { owner, since, epoch, note } = parseHolder(kv.value.toString());
          return {
            name,
            owner,
            // mod_revision: a lock taken over in place (a newer epoch) changed hands at that revision.
            fence: Number(kv.mod_revision),
            since,
            ...(epoch !== undefined ? { epoch } : {}),
            ...(note !== undefined ? { note } : {}),
            ...(options?.renewals ? await this.renewedAt(String(kv.lease)) : {}),
          };
        }),
      );
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (err) {
      throw this.unavailable(`cannot list locks under ${JSON.stringify(prefix)}`, err);
    }
  }

  /** When the holder last renewed the lease: its granted TTL less what is left of it. */
  private async renewedAt(leaseId: string): Promise<{ renewedAt?: number }> {
    if (leaseId === '0') return {};
    const ttl = await this.client.leaseClient.leaseTimeToLive({ ID: leaseId });
    const left = Number(ttl.TTL);
    if (left < 0) return {};
    return { renewedAt: this.now() - (Number(ttl.grantedTTL) - left) * 1000 };
  }

  async probe(): Promise<void> {
    this.probes += 1;
    const lease = await this.tryAcquire(`probe/${process.pid}-${this.probes}-${this.now()}`, 'probe', {
      ttlMs: 5000,
    });
    if (lease === null) throw new LockUnavailableError('etcd', 'locks: etcd probe lock was already held');
    await lease.release();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.held].map((h) => this.release(h)));
    this.closed = true;
    this.client.close();
  }
}

/** A lock key's value: who took it, when, under which epoch (an unparsable value names the owner). */
function parseHolder(raw: string): { owner: string; since: number; epoch?: number; note?: string } {
  try {
    const v = JSON.parse(raw) as { owner?: unknown; since?: unknown; epoch?: unknown; note?: unknown };
    return {
      owner: typeof v.owner === 'string' ? v.owner : '',
      since: typeof v.since === 'number' ? v.since : 0,
      ...(typeof v.epoch === 'number' ? { epoch: v.epoch } : {}),
      ...(typeof v.note === 'string' ? { note: v.note } : {}),
    };
  } catch {
    return { owner: raw, since: 0 };
  }
}
