// The lock port: cluster-wide, named, exclusive locks with fencing. One process uses the
// in-process implementation (local-locks.ts); several replicas use etcd (the HA issue). The task
// worker, the executor and the control loop only ever see this interface, so the balancer and the
// operator tasks share one set of host locks whatever the backend.
//
// Lock names (a path; `list(prefix)` reads a subtree):
//   tasks/table        every decision on the task table (claim, state switch, adoption, cancel)
//   tasks/purge-done   the purge of DONE tasks past their retention: one worker at a time
//   host/<host>        a compute host busy with a task (validation, evacuation) or with the
//                      executor's running moves (held for the source and the destination)
//   aggregate/<name>   an aggregate's planning and execution (one replica at a time)

export type LockBackendKind = 'local' | 'etcd';

export const LOCK_NAMES = {
  tasksTable: 'tasks/table',
  tasksPurgeDone: 'tasks/purge-done',
  hostPrefix: 'host/',
  aggregatePrefix: 'aggregate/',
} as const;

/** `host/<host>`: the one lock name of a compute host. */
export function hostLockName(host: string): string {
  return `${LOCK_NAMES.hostPrefix}${host}`;
}

/** `aggregate/<name>`. */
export function aggregateLockName(aggregate: string): string {
  return `${LOCK_NAMES.aggregatePrefix}${aggregate}`;
}

/** The host a `host/<host>` lock name names; null for any other name. */
export function hostOfLockName(name: string): string | null {
  return name.startsWith(LOCK_NAMES.hostPrefix) ? name.slice(LOCK_NAMES.hostPrefix.length) : null;
}

export interface AcquireOptions {
  /**
   * How long the lock outlives its holder's death (crash, lost network): the backend keeps the
   * lock alive while the holding process lives and lets it lapse `ttlMs` after it stops doing so.
   * The local backend dies with its process, so there it only bounds nothing; etcd uses it as the
   * lease TTL. Default 15 s.
   */
  ttlMs?: number;
  /**
   * The aggregate fence the owner acts under (an execution's host locks). A lock held by the
   * very same owner string under a smaller epoch is taken over at once: its holder was the same
   * execution run by an earlier owner of the aggregate, which a newer fence has already fenced
   * out, so waiting for its lease to lapse would only make the new owner skip work it resumes.
   * The earlier holder's lease turns invalid. Without an epoch (or with an equal or smaller one)
   * the lock stays exclusive.
   */
  epoch?: number;
  /** A line kept with the lock and shown by `list` (a replica's registration: its API address). */
  note?: string;
}

export interface ListOptions {
  /**
   * Also say when each holder last proved alive (renewedAt): one more call per lock on etcd, so
   * only for short lists (the replica registry).
   */
  renewals?: boolean;
}

export const DEFAULT_LOCK_TTL_MS = 15_000;

/** The same owner, an older epoch: the holder is fenced out (AcquireOptions.epoch). */
export function supersedes(
  held: { owner: string; epoch?: number | undefined },
  owner: string,
  epoch: number | undefined,
): boolean {
  return epoch !== undefined && held.owner === owner && held.epoch !== undefined && held.epoch < epoch;
}

/**
 * A change of a held lock's validity, as its holder learns it (Lease.watch). `lost`: isValid()
 * turned false without a release; with `final` false the backend may still renew it (its holder
 * was cut off from the backend past its local deadline, and the backend has not let it go yet),
 * and a `renewed` follows if it does. With `final` true it is gone for good.
 */
export type LeaseEvent =
  | { type: 'lost'; name: string; final: boolean; reason: string; at: number }
  | { type: 'renewed'; name: string; validUntil: number; at: number };

/** A held lock. Release it in a `finally`; `withLock` does that for you. */
export interface Lease {
  readonly name: string;
  /** Who holds it, in words: "worker:host-a:1234", "task:42", "executor:exec-9 step 3". */
  readonly owner: string;
  /**
   * Grows each time the lock changes hands (never reused, never smaller for the same name), so a
   * store can refuse a write from a stale owner whose lock lapsed while it was paused.
   */
  readonly fence: number;
  /** False once released, or once the backend lost the lock (lease expired, session lost). */
  isValid(): boolean;
  /** Gives the lock back; idempotent; never throws for a lock already lost. */
  release(): Promise<void>;
  /**
   * Calls `listener` when the lock is lost and when it is renewed after a lapse, as it happens, so
   * the holder stops acting at once rather than at its next isValid() check, and resumes under the
   * same fence when the lock comes back. Returns the unsubscribe. Absent where a held lock cannot
   * lapse while its process lives (the local backend).
   */
  watch?(listener: (event: LeaseEvent) => void): () => void;
}

/** A lock as `list` shows it: who holds it and since when. */
export interface HeldLock {
  name: string;
  owner: string;
  fence: number;
  /** Epoch ms at which it was taken. */
  since: number;
  /** The aggregate fence it was taken under (AcquireOptions.epoch), when one was given. */
  epoch?: number;
  /** AcquireOptions.note, when one was given. */
  note?: string;
  /** Epoch ms of the holder's last renewal (ListOptions.renewals). */
  renewedAt?: number;
}

export interface LockService {
  readonly kind: LockBackendKind;
  /**
   * Takes the lock when free and returns its lease; null when someone else holds it (the same
   * owner string holding it counts as someone else: locks are not re-entrant). Throws
   * LockUnavailableError when the backend cannot be reached (then nothing is known, nothing held).
   */
  tryAcquire(name: string, owner: string, options?: AcquireOptions): Promise<Lease | null>;
  /** Locks held now whose names start with `prefix` ("" for all), sorted by name. */
  list(prefix: string, options?: ListOptions): Promise<HeldLock[]>;
  /**
   * Takes and releases a lock of its own: proves the backend works end to end. Throws
   * LockUnavailableError with the reason when it does not. A worker refuses to start on failure.
   */
  probe(): Promise<void>;
  /** Releases everything this service holds and disconnects. */
  close(): Promise<void>;
}

/** The lock backend cannot be reached or answered nonsense: nothing was taken. */
export class LockUnavailableError extends Error {
  constructor(
    readonly backend: LockBackendKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LockUnavailableError';
  }
}

export type LockOutcome<T> = { acquired: true; value: T } | { acquired: false; holder: HeldLock | null };

/**
 * Runs `fn` holding the lock and releases it afterwards, also when `fn` throws. When someone else
 * holds the lock, `fn` does not run and the outcome names the holder (when it can still be read).
 * LockUnavailableError propagates: the caller decides how to show "lock backend unreachable".
 */
export async function withLock<T>(
  locks: LockService,
  name: string,
  owner: string,
  fn: (lease: Lease) => Promise<T>,
  options?: AcquireOptions,
): Promise<LockOutcome<T>> {
  const lease = await locks.tryAcquire(name, owner, options);
  if (lease === null) {
    const held = await locks.list(name).catch(() => []);
    return { acquired: false, holder: held.find((h) => h.name === name) ?? null };
  }
  try {
    return { acquired: true, value: await fn(lease) };
  } finally {
    await lease.release();
  }
}
