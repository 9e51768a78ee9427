// The executor's side of the one set of host locks: a move holds `host/<source>` and
// `host/<destination>` while it runs, so no operator task starts on those hosts meanwhile, and a
// move never starts on a host a task holds (validation, evacuation). The hosts an execution's
// starter already holds itself (an evacuation's source) are not locked again.
//
// The locks are the execution's, not the move's: moves of one execution share a host (three
// from one source, one arriving where another leaves), and a lock held for a sibling must not
// refuse them. Each host is taken once, counted per move using it, and given back when the last
// of them ends.
//
// Replicas: the locks carry the aggregate fence the run acts under (the epoch). A run resuming
// the execution after a takeover asks under a newer fence and takes over the entries the dead or
// cut-off previous owner still holds, instead of being refused by its own execution's locks until
// their leases lapse.
import {
  type AcquireOptions,
  hostLockName,
  type Lease,
  type LockService,
  LockUnavailableError,
} from '../coordination/locks.js';

export type MoveHostLocks =
  | { ok: true; hosts: string[] }
  /** retry: the lock backend did not answer (ask again later); else a holder refuses the move. */
  | { ok: false; why: string; retry: boolean };

export class ExecutionHostLocks {
  private readonly held = new Map<string, { lease: Lease; users: number }>();

  constructor(
    private readonly locks: LockService,
    /** Hosts the execution's starter holds itself: never locked here. */
    private readonly own: ReadonlySet<string>,
    /** The owner the locks are taken as: `executor:<execution id>`. */
    private readonly owner: string,
    /** TTL (the coordination lease TTL) and epoch (the aggregate fence of the run). */
    private readonly options: AcquireOptions = {},
  ) {}

  /** Takes (or shares) the move's hosts; all or none. */
  async acquire(hosts: readonly string[]): Promise<MoveHostLocks> {
    const taken: string[] = [];
    try {
      for (const host of [...new Set(hosts)].sort()) {
        if (this.own.has(host)) continue;
        const mine = this.held.get(host);
        if (mine?.lease.isValid()) {
          mine.users++;
          taken.push(host);
          continue;
        }
        // Not held, or held once and lost (the backend let it lapse): taken again for every user.
        const lease = await this.locks.tryAcquire(hostLockName(host), this.owner, this.options);
        if (lease === null) {
          await this.release(taken);
          const holder = (await this.locks.list(hostLockName(host))).find(
            (h) => h.name === hostLockName(host),
          );
          // This execution's own entry under the same fence: a lease of ours that lapsed and may
          // be renewed, or the lock of an earlier run of it in this process (stopped when the
          // aggregate's lease lapsed, resumed when it came back) still being given back. Or no
          // holder any more: it was given back between the two calls. Either goes away on its
          // own: wait for it rather than skip the move.
          if (holder === undefined)
            return { ok: false, why: `host ${host} was held a moment ago; trying again`, retry: true };
          if (holder.owner === this.owner)
            return {
              ok: false,
              why: `host ${host} is still held by this execution's earlier lock; waiting for it`,
              retry: true,
            };
          return { ok: false, why: `host ${host} is held by ${holder.owner}`, retry: false };
        }
        // A lapsed lease of ours that etcd gave up: its key is gone (this one took it); stop it.
        if (mine !== undefined) void mine.lease.release();
        this.held.set(host, { lease, users: (mine?.users ?? 0) + 1 });
        taken.push(host);
      }
      return { ok: true, hosts: taken };
    } catch (err) {
      await this.release(taken).catch(() => undefined);
      if (!(err instanceof LockUnavailableError)) throw err;
      return { ok: false, why: `the lock backend is unreachable: ${err.message}`, retry: true };
    }
  }

  /** Gives back a move's share of its hosts; a host's lock goes when no move of the execution uses it. */
  async release(hosts: readonly string[]): Promise<void> {
    for (const host of hosts) {
      const mine = this.held.get(host);
      if (mine === undefined) continue;
      mine.users--;
      if (mine.users > 0) continue;
      this.held.delete(host);
      await mine.lease.release();
    }
  }
}
