// Placement's data model: resource providers with generations, inventories, traits, aggregates,
// and consumers holding allocations. Usages are kept as running sums of allocations so a read
// costs the size of the answer, not the number of consumers.

export interface InventoryRecord {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

export interface ResourceProvider {
  uuid: string;
  name: string;
  generation: number;
  inventories: Map<string, InventoryRecord>;
  traits: Set<string>;
  aggregates: Set<string>;
  usage: Map<string, number>;
  consumers: Set<string>;
}

export interface Consumer {
  uuid: string;
  projectId: string;
  userId: string;
  generation: number;
  /** Provider uuid -> resource class -> amount. */
  allocations: Map<string, Map<string, number>>;
}

export type ResourceAmounts = Record<string, number>;

export class PlacementState {
  readonly providers = new Map<string, ResourceProvider>();
  readonly providersByName = new Map<string, ResourceProvider>();
  readonly consumers = new Map<string, Consumer>();
  /** Custom traits created with PUT /traits/{name} (standard traits always exist). */
  readonly customTraits = new Set<string>();

  /** Whether Placement knows the trait: every standard (os-traits) name, and the custom ones created. */
  traitExists(name: string): boolean {
    return name.startsWith('CUSTOM_') ? this.customTraits.has(name) : /^[A-Z0-9_]+$/.test(name);
  }

  addProvider(uuid: string, name: string): ResourceProvider {
    const rp: ResourceProvider = {
      uuid,
      name,
      generation: 0,
      inventories: new Map(),
      traits: new Set(),
      aggregates: new Set(),
      usage: new Map(),
      consumers: new Set(),
    };
    this.providers.set(uuid, rp);
    this.providersByName.set(name, rp);
    return rp;
  }

  /** Usable capacity of one class: (total - reserved) * allocation_ratio, as Placement checks it. */
  capacity(rp: ResourceProvider, rc: string): number {
    const inv = rp.inventories.get(rc);
    if (!inv) return 0;
    return (inv.total - inv.reserved) * inv.allocation_ratio;
  }

  /** Whether adding `amounts` to the provider stays within its capacity for every class. */
  fits(rp: ResourceProvider, amounts: ResourceAmounts): boolean {
    for (const [rc, amount] of Object.entries(amounts)) {
      if (amount <= 0) continue;
      if (!rp.inventories.has(rc)) return false;
      if ((rp.usage.get(rc) ?? 0) + amount > this.capacity(rp, rc)) return false;
    }
    return true;
  }

  /** Replaces all allocations of a consumer (Placement's PUT /allocations/{consumer}). */
  setAllocations(
    consumerUuid: string,
    allocations: ReadonlyMap<string, ResourceAmounts>,
    projectId: string,
    userId: string,
  ): void {
    const touched = new Set<string>();
    this.replace(consumerUuid, allocations, projectId, userId, touched);
    this.bump(touched);
  }

  /**
   * Moves a consumer's allocations to another consumer id in one request, as Nova does for a
   * migration record (POST /allocations): every provider involved changes generation once.
   */
  moveAllocations(fromConsumer: string, toConsumer: string): void {
    const c = this.consumers.get(fromConsumer);
    if (!c) return;
    const allocs = new Map<string, ResourceAmounts>();
    for (const [rpUuid, m] of c.allocations) allocs.set(rpUuid, Object.fromEntries(m));
    const touched = new Set<string>();
    this.replace(fromConsumer, new Map(), c.projectId, c.userId, touched);
    this.replace(toConsumer, allocs, c.projectId, c.userId, touched);
    this.bump(touched);
  }

  /**
   * Writes one consumer's allocations. `touched` collects the providers whose generation
   * Placement bumps for it: those written to, and, when the consumer is emptied, those it held
   * (Placement writes them as used = 0). A provider a replacement merely drops is not bumped.
   */
  private replace(
    consumerUuid: string,
    allocations: ReadonlyMap<string, ResourceAmounts>,
    projectId: string,
    userId: string,
    touched: Set<string>,
  ): void {
    const old = this.consumers.get(consumerUuid);
    if (old) {
      for (const [rpUuid, amounts] of old.allocations) {
        const rp = this.providers.get(rpUuid);
        if (!rp) continue;
        for (const [rc, n] of amounts) rp.usage.set(rc, (rp.usage.get(rc) ?? 0) - n);
        rp.consumers.delete(consumerUuid);
        if (allocations.size === 0) touched.add(rpUuid);
      }
    }
    if (allocations.size === 0) {
      this.consumers.delete(consumerUuid);
      return;
    }
    const consumer: Consumer = {
      uuid: consumerUuid,
      projectId,
      userId,
      generation: (old?.generation ?? 0) + 1,
      allocations: new Map(),
    };
    for (const [rpUuid, amounts] of allocations) {
      const rp = this.providers.get(rpUuid);
      if (!rp) throw new RangeError(`allocation for consumer ${consumerUuid}: no provider ${rpUuid}`);
      const m = new Map<string, number>();
      for (const [rc, n] of Object.entries(amounts)) {
        if (n <= 0) continue;
        m.set(rc, n);
        rp.usage.set(rc, (rp.usage.get(rc) ?? 0) + n);
      }
      rp.consumers.add(consumerUuid);
      consumer.allocations.set(rpUuid, m);
      touched.add(rpUuid);
    }
    this.consumers.set(consumerUuid, consumer);
  }

  /** Placement increments the generation of each provider a request wrote to, once per request. */
  private bump(touched: ReadonlySet<string>): void {
    for (const rpUuid of touched) {
      const rp = this.providers.get(rpUuid);
      if (rp) rp.generation++;
    }
  }

  allocationsOf(consumerUuid: string): ReadonlyMap<string, ReadonlyMap<string, number>> {
    return this.consumers.get(consumerUuid)?.allocations ?? new Map();
  }

  usageOf(rp: ResourceProvider, rc: string): number {
    return rp.usage.get(rc) ?? 0;
  }
}
