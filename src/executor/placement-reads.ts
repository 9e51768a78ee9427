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

interface Reading<T> {
  at: number;
  value: T;
}

export class PlacementReads {
  private readonly inventories = new Map<string, Reading<Inventories>>();
  private readonly inventoriesPending = new Map<string, Promise<Inventories | null>>();
  private readonly allocations = new Map<string, Reading<Map<string, Record<string, number>>>>();
  private readonly allocationsPending = new Map<
    string,
    Promise<Map<string, Record<string, number>> | null>
  >();

  constructor(
    private readonly cloud: Pick<
      ExecutorCloud,
      'getHostInventories' | 'getHostUsages' | 'listHostAllocations'
    >,
    private readonly clock: Clock,
    private readonly ttl = { inventoriesMs: INVENTORY_TTL_MS, allocationsMs: SOURCE_ALLOCATIONS_TTL_MS },
  ) {}

  /**
   * The host's inventories: from a reading at most ttl old, or read now when `fresh` (to refuse
   * a move for want of room). null: the host has no resource provider (never kept).
   */
  async inventoriesOf(
    host: string,
    fresh: boolean,
  ): Promise<{ inventories: Inventories | null; fresh: boolean }> {
    const kept = this.inventories.get(host);
    if (!fresh && kept && this.clock.now() - kept.at < this.ttl.inventoriesMs) {
      return { inventories: kept.value, fresh: false };
    }
    let pending = this.inventoriesPending.get(host);
    if (!pending) {
      const at = this.clock.now();
      pending = this.cloud
        .getHostInventories(host)
        .then((value) => {
          if (value) this.inventories.set(host, { at, value });
          else this.inventories.delete(host);
          return value;
        })
        .finally(() => this.inventoriesPending.delete(host));
      this.inventoriesPending.set(host, pending);
    }
    return { inventories: await pending, fresh: true };
  }

  /** The host's usages, read now; null: no resource provider. */
  usagesOf(host: string): Promise<HostRoomView['usages'] | null> {
    return this.cloud.getHostUsages(host);
  }

  /** A move towards the host failed: its next pre-flight reads the inventories again. */
  forget(host: string): void {
    this.inventories.delete(host);
  }

  /**
   * What the server holds on its source host, from a listing of that host's allocations at
   * most ttl old; undefined when the listing does not show the server (read it directly).
   */
  async listedAllocation(serverId: string, source: string): Promise<Record<string, number> | undefined> {
    const kept = this.allocations.get(source);
    let byConsumer: Map<string, Record<string, number>> | null;
    if (kept && this.clock.now() - kept.at < this.ttl.allocationsMs) byConsumer = kept.value;
    else {
      let pending = this.allocationsPending.get(source);
      if (!pending) {
        const at = this.clock.now();
        pending = this.cloud
          .listHostAllocations(source)
          .then((value) => {
            if (value) this.allocations.set(source, { at, value });
            else this.allocations.delete(source);
            return value;
          })
          .finally(() => this.allocationsPending.delete(source));
        this.allocationsPending.set(source, pending);
      }
      byConsumer = await pending;
    }
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
