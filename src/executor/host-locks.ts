// The executor's side of the one set of host locks: a move holds `host/<source>` and
// `host/<destination>` while it runs, so no operator task starts on those hosts meanwhile, and a
// move never starts on a host a task holds (validation, evacuation). The hosts an execution's
// starter already holds itself (an evacuation's source) are not locked again.
import { hostLockName, type Lease, type LockService, LockUnavailableError } from '../coordination/locks.js';

export type MoveHostLocks =
  | { ok: true; leases: Lease[] }
  /** retry: the lock backend did not answer (ask again later); else a holder refuses the move. */
  | { ok: false; why: string; retry: boolean };

export async function lockMoveHosts(
  locks: LockService,
  hosts: readonly string[],
  own: ReadonlySet<string>,
  owner: string,
): Promise<MoveHostLocks> {
  const leases: Lease[] = [];
  const giveBack = () => Promise.all(leases.map((l) => l.release()));
  try {
    for (const host of [...new Set(hosts)].sort()) {
      if (own.has(host)) continue;
      const lease = await locks.tryAcquire(hostLockName(host), owner);
      if (lease === null) {
        await giveBack();
        const holder = (await locks.list(hostLockName(host))).find((h) => h.name === hostLockName(host));
        return { ok: false, why: `host ${host} is held by ${holder?.owner ?? 'someone else'}`, retry: false };
      }
      leases.push(lease);
    }
    return { ok: true, leases };
  } catch (err) {
    await giveBack().catch(() => undefined);
    if (!(err instanceof LockUnavailableError)) throw err;
    return { ok: false, why: `the lock backend is unreachable: ${err.message}`, retry: true };
  }
}
