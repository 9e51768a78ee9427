// Placement as pre-flight reads it, shared by every move of the process (like service-reads.ts):
// a destination's usages are read at every pre-flight, its inventories come from a reading at
// most INVENTORY_TTL_MS old, and a server's allocation from one listing of its source host's
// allocations instead of one read per server.
//
// Why that is safe (each read avoided keeps the safety it gave):
// - Inventories (total, reserved, allocation ratio) change only when an operator or the compute
//   host's resource tracker changes them, not with migrations. Only a "yes, it fits" is ever
//   given on a reading kept from earlier: a "no room" is decided again on inventories read now
//   (preflight.ts), and a failed attempt towards a host forgets its reading. A "yes" on an
//   inventory shrunk meanwhile is caught by Nova itself: the conductor claims the destination in
//   Placement, atomically against the inventory of that moment, and refuses the migration (an
//   attempt failed, retried on a fresh reading).
// - A server's allocation changes only when the server is resized, migrated, shelved or
//   evacuated. Pre-flight reads the server itself in the same round trip (ACTIVE, no task state,
//   on its source), and takes the listed amounts only when they match the server's flavor (RAM
//   and vCPUs): a resize since the listing shows as a mismatch, and the server's own allocation
//   is read then, as before. A server the listing does not show is read directly too.
import type { Clock, ExecutorCloud, HostRoomView } from './ports.js';

/** How long one reading of a host's inventories answers pre-flights' "it fits" (virtual ms on a simulator's clock). */
export const INVENTORY_TTL_MS = 300_000;
/** How long one listing of a source host's allocations answers for its servers. */
export const SOURCE_ALLOCATIONS_TTL_MS = 300_000;

type Inventories = HostRoomView['inventories'];

/**
 * Readings of one kind per host, each kept with the time it was taken, and at most one read
 * of a host in flight: pre-flights that ask together share it. A null answer (no resource
 * provider) is never kept.
 */
class KeptReadings<T> {
  private readonly kept = new Map<string, { at: number; value: T }>();
  private readonly pending = new Map<string, Promise<T | null>>();

  constructor(private readonly clock: Clock) {}

  /** The reading of `host` if it is younger than `ttlMs`. */
  young(host: string, ttlMs: number): T | undefined {
    const k = this.kept.get(host);
    return k && this.clock.now() - k.at < ttlMs ? k.value : undefined;
  }

  /** A reading taken now (or joined, if one is under way), then kept. */
  read(host: string, read: () => Promise<T | null>): Promise<T | null> {
    let pending = this.pending.get(host);
    if (!pending) {
      const at = this.clock.now();
      pending = read()
        .then((value) => {
          if (value) this.kept.set(host, { at, value });
          else this.kept.delete(host);
          return value;
        })
        .finally(() => this.pending.delete(host));
      this.pending.set(host, pending);
    }
    return pending;
  }

  forget(host: string): void {
    this.kept.delete(host);
  }
}

export class PlacementReads {
  private readonly inventories: KeptReadings<Inventories>;
  private readonly allocations: KeptReadings<Map<string, Record<string, number>>>;

  constructor(
    private readonly cloud: Pick<
      ExecutorCloud,
      'getHostInventories' | 'getHostUsages' | 'listHostAllocations'
    >,
    clock: Clock,
    private readonly ttl = { inventoriesMs: INVENTORY_TTL_MS, allocationsMs: SOURCE_ALLOCATIONS_TTL_MS },
  ) {
    this.inventories = new KeptReadings(clock);
    this.allocations = new KeptReadings(clock);
  }

  /**
   * The host's inventories: from a reading at most ttl old, or read now when `fresh` (to refuse
   * a move for want of room). null: the host has no resource provider (never kept).
   */
  async inventoriesOf(
    host: string,
    fresh: boolean,
  ): Promise<{ inventories: Inventories | null; fresh: boolean }> {
    const kept = fresh ? undefined : this.inventories.young(host, this.ttl.inventoriesMs);
    if (kept) return { inventories: kept, fresh: false };
    return {
      inventories: await this.inventories.read(host, () => this.cloud.getHostInventories(host)),
      fresh: true,
    };
  }

  /** The host's usages, read now; null: no resource provider. */
  usagesOf(host: string): Promise<HostRoomView['usages'] | null> {
    return this.cloud.getHostUsages(host);
  }

  /**
   * Takes the readings pre-flights keep (destinations' inventories, sources' allocations) now,
   * for hosts whose moves are about to start; a failure is left for the pre-flight to meet.
   */
  async warm(sources: Iterable<string>, destinations: Iterable<string>): Promise<void> {
    const reads: Promise<unknown>[] = [];
    for (const host of new Set(destinations)) reads.push(this.inventoriesOf(host, false));
    for (const host of new Set(sources)) {
      if (this.allocations.young(host, this.ttl.allocationsMs) === undefined)
        reads.push(this.allocations.read(host, () => this.cloud.listHostAllocations(host)));
    }
    await Promise.allSettled(reads);
  }

  /** A move towards the host failed: its next pre-flight reads the inventories again. */
  forget(host: string): void {
    this.inventories.forget(host);
  }

  /**
   * What the server holds on its source host, from a listing of that host's allocations at
   * most ttl old; undefined when the listing does not show the server (read it directly).
   */
  async listedAllocation(serverId: string, source: string): Promise<Record<string, number> | undefined> {
    const byConsumer =
      this.allocations.young(source, this.ttl.allocationsMs) ??
      (await this.allocations.read(source, () => this.cloud.listHostAllocations(source)));
    return byConsumer?.get(serverId);
  }
}

/**
 * Whether amounts listed earlier are still the server's: they match its flavor's RAM and vCPUs
 * (a server with dedicated CPUs holds PCPU, not VCPU). No flavor known: not trusted.
 */
export function matchesFlavor(
  amounts: Record<string, number>,
  flavor: { vcpus: number; ramMB: number } | undefined,
): boolean {
  if (!flavor) return false;
  if (amounts.MEMORY_MB !== flavor.ramMB) return false;
  return amounts.VCPU === undefined || amounts.VCPU === flavor.vcpus;
}
