// Counts live migrations in flight per source host, per destination host, per aggregate and in
// total, and hands out a slot only when every limit has room. One pool is shared by every
// execution of a process, so the global limit and a host's limit hold across aggregates; each
// aggregate's own limits (its configuration's concurrency) hold for its moves within the pool.
import { own } from '../util/maps.js';
import type { AggregateLimits, ConcurrencyLimits } from './settings.js';

export interface SlotRequest {
  source: string;
  dest: string;
  aggregate: string;
}

export interface SlotLease extends SlotRequest {
  readonly id: number;
}

export class MigrationSlots {
  private readonly bySource = new Map<string, number>();
  private readonly byDest = new Map<string, number>();
  private readonly byAggregate = new Map<string, number>();
  private total = 0;
  private nextId = 1;
  private readonly held = new Set<number>();

  constructor(readonly limits: ConcurrencyLimits) {}

  /** The aggregate's own limits, or the defaults when its configuration sets none. */
  private of(aggregate: string | undefined): AggregateLimits {
    return (
      (aggregate !== undefined && this.limits.byAggregate
        ? own(this.limits.byAggregate, aggregate)
        : undefined) ?? this.limits
    );
  }

  sourceLimit(host: string, aggregate?: string): number {
    return own(this.limits.perSourceHostOverrides, host) ?? this.of(aggregate).perSourceHost;
  }

  /** Which limit is full, or null when a slot is free. */
  blockedBy(r: SlotRequest): string | null {
    const mine = this.of(r.aggregate);
    if (this.total >= this.limits.global) return `global limit ${this.limits.global}`;
    if ((this.byAggregate.get(r.aggregate) ?? 0) >= mine.perAggregate) {
      return `aggregate ${r.aggregate} limit ${mine.perAggregate}`;
    }
    const source = this.sourceLimit(r.source, r.aggregate);
    if ((this.bySource.get(r.source) ?? 0) >= source) return `source ${r.source} limit ${source}`;
    if ((this.byDest.get(r.dest) ?? 0) >= mine.perDestinationHost) {
      return `destination ${r.dest} limit ${mine.perDestinationHost}`;
    }
    return null;
  }

  tryAcquire(r: SlotRequest): SlotLease | null {
    return this.blockedBy(r) === null ? this.take(r) : null;
  }

  /**
   * Counts a migration that is already running in Nova (found after a restart), even beyond a
   * limit: it occupies the host whether or not we would have started it now.
   */
  adopt(r: SlotRequest): SlotLease {
    return this.take(r);
  }

  release(lease: SlotLease): void {
    if (!this.held.delete(lease.id)) return;
    this.bump(this.bySource, lease.source, -1);
    this.bump(this.byDest, lease.dest, -1);
    this.bump(this.byAggregate, lease.aggregate, -1);
    this.total--;
  }

  inFlight(): { total: number; bySource: Record<string, number>; byDest: Record<string, number> } {
    return {
      total: this.total,
      bySource: Object.fromEntries(this.bySource),
      byDest: Object.fromEntries(this.byDest),
    };
  }

  private take(r: SlotRequest): SlotLease {
    this.bump(this.bySource, r.source, 1);
    this.bump(this.byDest, r.dest, 1);
    this.bump(this.byAggregate, r.aggregate, 1);
    this.total++;
    const lease = { ...r, id: this.nextId++ };
    this.held.add(lease.id);
    return lease;
  }

  private bump(m: Map<string, number>, k: string, d: number): void {
    const n = (m.get(k) ?? 0) + d;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  }
}
