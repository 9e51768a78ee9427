// Counts live migrations in flight per source host, per destination host, per aggregate and in
// total, and hands out a slot only when every limit has room. One pool is shared by every
// execution of a process, so the global limit and a host's limit hold across aggregates.

import { own } from '../util/maps.js';
import type { ConcurrencyLimits } from './settings.js';

export interface SlotRequest {
  source: string;
  dest: string;
  aggregate: string;
}

export interface SlotLease extends SlotRequest {
  readonly id: number;
}

/** An aggregate's own limits (its configuration's `concurrency`), for its executions' moves. */
export type AggregateLimits = Pick<
  ConcurrencyLimits,
  'perSourceHost' | 'perDestinationHost' | 'perAggregate'
>;

export class MigrationSlots {
  private readonly bySource = new Map<string, number>();
  private readonly byDest = new Map<string, number>();
  private readonly byAggregate = new Map<string, number>();
  private total = 0;
  private nextId = 1;
  private readonly held = new Set<number>();

  constructor(
    readonly limits: ConcurrencyLimits,
    /** Per aggregate name: its own limits instead of the pool's for moves of its executions. */
    private readonly aggregateLimits: Readonly<Record<string, AggregateLimits>> = {},
  ) {}

  sourceLimit(host: string, aggregate?: string): number {
    const mine = aggregate === undefined ? undefined : own(this.aggregateLimits, aggregate);
    return own(this.limits.perSourceHostOverrides, host) ?? mine?.perSourceHost ?? this.limits.perSourceHost;
  }

  /** Which limit is full, or null when a slot is free. */
  blockedBy(r: SlotRequest): string | null {
    const mine = own(this.aggregateLimits, r.aggregate);
    const perAggregate = mine?.perAggregate ?? this.limits.perAggregate;
    const perDestination = mine?.perDestinationHost ?? this.limits.perDestinationHost;
    const perSource = this.sourceLimit(r.source, r.aggregate);
    if (this.total >= this.limits.global) return `global limit ${this.limits.global}`;
    if ((this.byAggregate.get(r.aggregate) ?? 0) >= perAggregate) {
      return `aggregate ${r.aggregate} limit ${perAggregate}`;
    }
    if ((this.bySource.get(r.source) ?? 0) >= perSource) {
      return `source ${r.source} limit ${perSource}`;
    }
    if ((this.byDest.get(r.dest) ?? 0) >= perDestination) {
      return `destination ${r.dest} limit ${perDestination}`;
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
