// The lock port inside one process: enough when one Aicerine process runs (the default). Every
// lock dies with the process, so there is nothing to expire: a lease stays valid until released.
// Fences count per name from 1 and never go back within the process's life.

import {
  type AcquireOptions,
  type HeldLock,
  type Lease,
  type ListOptions,
  type LockService,
  LockUnavailableError,
  supersedes,
} from './locks.js';

interface Holding {
  owner: string;
  fence: number;
  since: number;
  epoch: number | undefined;
  note: string | undefined;
  token: symbol;
}

export class LocalLockService implements LockService {
  readonly kind = 'local' as const;
  private readonly held = new Map<string, Holding>();
  private readonly lastFence = new Map<string, number>();
  private closed = false;
  private probes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async tryAcquire(name: string, owner: string, options?: AcquireOptions): Promise<Lease | null> {
    if (this.closed)
      throw new LockUnavailableError('local', `locks: the local lock service is closed (acquiring ${name})`);
    if (name === '' || owner === '') throw new Error('locks: a lock has a name and an owner');
    const current = this.held.get(name);
    if (current !== undefined && !supersedes(current, owner, options?.epoch)) return null;
    const fence = (this.lastFence.get(name) ?? 0) + 1;
    this.lastFence.set(name, fence);
    const holding: Holding = {
      owner,
      fence,
      since: this.now(),
      epoch: options?.epoch,
      note: options?.note,
      token: Symbol(name),
    };
    this.held.set(name, holding);
    const isValid = () => this.held.get(name)?.token === holding.token;
    return {
      name,
      owner,
      fence,
      isValid,
      release: async () => {
        if (isValid()) this.held.delete(name);
      },
    };
  }

  async list(prefix: string, options?: ListOptions): Promise<HeldLock[]> {
    return [...this.held.entries()]
      .filter(([name]) => name.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, h]) => ({
        name,
        owner: h.owner,
        fence: h.fence,
        since: h.since,
        ...(h.epoch !== undefined ? { epoch: h.epoch } : {}),
        ...(h.note !== undefined ? { note: h.note } : {}),
        // In one process a holder is alive as long as the lock is held.
        ...(options?.renewals ? { renewedAt: this.now() } : {}),
      }));
  }

  async probe(): Promise<void> {
    if (this.closed) throw new LockUnavailableError('local', 'locks: the local lock service is closed');
    this.probes += 1;
    const name = `probe/${process.pid}-${this.probes}`;
    const lease = await this.tryAcquire(name, `probe:${process.pid}`);
    if (lease === null)
      throw new LockUnavailableError('local', `locks: the probe lock ${name} is already held`);
    await lease.release();
  }

  async close(): Promise<void> {
    this.held.clear();
    this.closed = true;
  }
}
