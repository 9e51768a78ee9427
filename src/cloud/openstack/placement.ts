// Placement client: compute-node resource providers with their inventories, usages, traits
// and aggregates, and inventory updates guarded by the provider generation.
import { CloudError, isCloudError } from '../errors.js';
import type { Query, ServiceClient } from '../http/service-client.js';
import { asRec, optStr, type Rec, reqNum, reqStr, strList } from './fields.js';
import { formatVersion, negotiateVersion, type Version, versionRangeFromDocument } from './microversion.js';

/** 1.14: provider trees (parent/root uuids); 1.19: aggregates with generation. */
export const PLACEMENT_MIN_VERSION: Version = [1, 19];
export const PLACEMENT_WANT_VERSION: Version = [1, 36];

export interface ResourceProvider {
  uuid: string;
  name: string;
  generation: number;
  parentProviderUuid: string | null;
  rootProviderUuid: string | null;
}

export interface PlacementInventory {
  total: number;
  reserved: number;
  allocationRatio: number;
  minUnit: number;
  maxUnit: number;
  stepSize: number;
}

export interface ProviderInventories {
  generation: number;
  inventories: Record<string, PlacementInventory>;
}

export interface UpdateInventoryOptions {
  /** Tries after a 409 (generation moved under us). */
  maxConflictRetries?: number;
}

function parseProvider(v: unknown): ResourceProvider {
  const r = asRec(v, 'resource_providers[]');
  return {
    uuid: reqStr(r, 'uuid', 'resource provider'),
    name: reqStr(r, 'name', 'resource provider'),
    generation: reqNum(r, 'generation', 'resource provider'),
    parentProviderUuid: optStr(r, 'parent_provider_uuid'),
    rootProviderUuid: optStr(r, 'root_provider_uuid'),
  };
}

function parseInventory(v: unknown, what: string): PlacementInventory {
  const i = asRec(v, what);
  return {
    total: reqNum(i, 'total', what),
    reserved: reqNum(i, 'reserved', what),
    allocationRatio: reqNum(i, 'allocation_ratio', what),
    minUnit: reqNum(i, 'min_unit', what),
    maxUnit: reqNum(i, 'max_unit', what),
    stepSize: reqNum(i, 'step_size', what),
  };
}

export function toPlacementInventoryBody(inv: PlacementInventory, generation: number): Rec {
  return {
    resource_provider_generation: generation,
    total: inv.total,
    reserved: inv.reserved,
    allocation_ratio: inv.allocationRatio,
    min_unit: inv.minUnit,
    max_unit: inv.maxUnit,
    step_size: inv.stepSize,
  };
}

function sameInventory(a: PlacementInventory, b: PlacementInventory): boolean {
  return (
    a.total === b.total &&
    a.reserved === b.reserved &&
    a.allocationRatio === b.allocationRatio &&
    a.minUnit === b.minUnit &&
    a.maxUnit === b.maxUnit &&
    a.stepSize === b.stepSize
  );
}

export class PlacementClient {
  private version: Version | undefined;
  /** The negotiation under way: requests sent before it ends share it (one version GET, not one each). */
  private negotiating: Promise<Version> | null = null;

  constructor(
    readonly client: ServiceClient,
    private readonly opts: { need?: Version; want?: Version } = {},
  ) {}

  async negotiate(): Promise<string> {
    if (!this.version) {
      this.negotiating ??= (async () => {
        const res = await this.client.request({ method: 'GET', path: '/', auth: false });
        return negotiateVersion(
          'Placement',
          versionRangeFromDocument(res.body, 1),
          this.opts.need ?? PLACEMENT_MIN_VERSION,
          this.opts.want ?? PLACEMENT_WANT_VERSION,
          await this.client.endpoint(),
        );
      })().finally(() => {
        this.negotiating = null;
      });
      this.version = await this.negotiating;
    }
    return formatVersion(this.version);
  }

  async headers(): Promise<Record<string, string>> {
    return { 'OpenStack-API-Version': `placement ${await this.negotiate()}` };
  }

  private async get(path: string, query?: Query): Promise<Rec> {
    const res = await this.client.request({
      method: 'GET',
      path,
      headers: await this.headers(),
      ...(query ? { query } : {}),
    });
    return asRec(res.body, `GET ${path}`);
  }

  /** Resource providers; Placement does not paginate this list. */
  async listResourceProviders(filters: { name?: string; inTree?: string } = {}): Promise<ResourceProvider[]> {
    const body = await this.get('/resource_providers', { name: filters.name, in_tree: filters.inTree });
    return (Array.isArray(body.resource_providers) ? body.resource_providers : []).map(parseProvider);
  }

  async getInventories(rpUuid: string): Promise<ProviderInventories> {
    const path = `/resource_providers/${encodeURIComponent(rpUuid)}/inventories`;
    const body = await this.get(path);
    const inventories: Record<string, PlacementInventory> = {};
    const raw = body.inventories && typeof body.inventories === 'object' ? (body.inventories as Rec) : {};
    for (const [rc, inv] of Object.entries(raw)) inventories[rc] = parseInventory(inv, `${path} ${rc}`);
    return { generation: reqNum(body, 'resource_provider_generation', path), inventories };
  }

  async getUsages(rpUuid: string): Promise<Record<string, number>> {
    const path = `/resource_providers/${encodeURIComponent(rpUuid)}/usages`;
    const body = await this.get(path);
    const out: Record<string, number> = {};
    const raw = body.usages && typeof body.usages === 'object' ? (body.usages as Rec) : {};
    for (const [rc, n] of Object.entries(raw)) if (typeof n === 'number') out[rc] = n;
    return out;
  }

  /**
   * What every consumer holds on one provider (GET /resource_providers/{uuid}/allocations), per
   * consumer and resource class: one read for every server of a host.
   */
  async getProviderAllocations(rpUuid: string): Promise<Map<string, Record<string, number>>> {
    const body = await this.get(`/resource_providers/${encodeURIComponent(rpUuid)}/allocations`);
    const out = new Map<string, Record<string, number>>();
    const raw = body.allocations && typeof body.allocations === 'object' ? (body.allocations as Rec) : {};
    for (const [consumer, entry] of Object.entries(raw)) {
      const resources = entry && typeof entry === 'object' ? (entry as Rec).resources : undefined;
      const amounts: Record<string, number> = {};
      if (resources && typeof resources === 'object') {
        for (const [rc, n] of Object.entries(resources as Rec)) if (typeof n === 'number') amounts[rc] = n;
      }
      out.set(consumer, amounts);
    }
    return out;
  }

  /** What one consumer (a server, a migration record) holds, per provider and resource class. */
  async getConsumerAllocations(consumer: string): Promise<Record<string, Record<string, number>>> {
    const body = await this.get(`/allocations/${encodeURIComponent(consumer)}`);
    const out: Record<string, Record<string, number>> = {};
    const raw = body.allocations && typeof body.allocations === 'object' ? (body.allocations as Rec) : {};
    for (const [rp, entry] of Object.entries(raw)) {
      const resources = entry && typeof entry === 'object' ? (entry as Rec).resources : undefined;
      const amounts: Record<string, number> = {};
      if (resources && typeof resources === 'object') {
        for (const [rc, n] of Object.entries(resources as Rec)) if (typeof n === 'number') amounts[rc] = n;
      }
      out[rp] = amounts;
    }
    return out;
  }

  async getTraits(rpUuid: string): Promise<string[]> {
    return strList((await this.get(`/resource_providers/${encodeURIComponent(rpUuid)}/traits`)).traits);
  }

  async getAggregates(rpUuid: string): Promise<string[]> {
    return strList(
      (await this.get(`/resource_providers/${encodeURIComponent(rpUuid)}/aggregates`)).aggregates,
    );
  }

  /** PUT of one inventory at the generation it was read at; a 409 means someone wrote in between. */
  async putInventory(
    rpUuid: string,
    resourceClass: string,
    inventory: PlacementInventory,
    generation: number,
  ): Promise<PlacementInventory> {
    const path = `/resource_providers/${encodeURIComponent(rpUuid)}/inventories/${encodeURIComponent(resourceClass)}`;
    const res = await this.client.request({
      method: 'PUT',
      path,
      headers: await this.headers(),
      body: toPlacementInventoryBody(inventory, generation),
    });
    return parseInventory(asRec(res.body, `PUT ${path}`), `PUT ${path}`);
  }

  /** updateInventory() with this client both reading and writing. */
  async updateInventory(
    rpUuid: string,
    resourceClass: string,
    change: (current: PlacementInventory) => PlacementInventory,
    opts: UpdateInventoryOptions = {},
  ): Promise<PlacementInventory> {
    return updateInventory(this, this, rpUuid, resourceClass, change, opts);
  }

  async setAllocationRatio(
    rpUuid: string,
    resourceClass: string,
    ratio: number,
  ): Promise<PlacementInventory> {
    return this.updateInventory(rpUuid, resourceClass, (inv) => ({ ...inv, allocationRatio: ratio }));
  }
}

/** Where an inventory update reads the generation (the reader credential in the service). */
export interface InventoryReads {
  getInventories(rpUuid: string): Promise<ProviderInventories>;
}

/** Where it writes (the actuator credential in the service). */
export interface InventoryWrites {
  putInventory(
    rpUuid: string,
    resourceClass: string,
    inventory: PlacementInventory,
    generation: number,
  ): Promise<PlacementInventory>;
}

/**
 * Changes one inventory of a provider. Reads the inventory and its generation, applies
 * `change`, PUTs it with that generation; on 409 (someone else, often nova-compute, wrote in
 * between) reads again and re-applies, so no concurrent write is ever overwritten blindly.
 */
export async function updateInventory(
  reads: InventoryReads,
  writes: InventoryWrites,
  rpUuid: string,
  resourceClass: string,
  change: (current: PlacementInventory) => PlacementInventory,
  opts: UpdateInventoryOptions = {},
): Promise<PlacementInventory> {
  const maxRetries = opts.maxConflictRetries ?? 5;
  for (let attempt = 0; ; attempt++) {
    const { generation, inventories } = await reads.getInventories(rpUuid);
    const current = inventories[resourceClass];
    if (!current) {
      throw new CloudError('http', `resource provider ${rpUuid} has no ${resourceClass} inventory`, {
        fix: 'Pick a resource class the provider has (see `openstack resource provider inventory list`)',
      });
    }
    const next = change(current);
    if (sameInventory(next, current)) return current;
    try {
      return await writes.putInventory(rpUuid, resourceClass, next, generation);
    } catch (e) {
      // Only a generation race is worth another read; "inventory in use" would fail again.
      const race = e instanceof CloudError && e.code !== 'placement.inventory.inuse';
      if (isCloudError(e, 'conflict') && race && attempt < maxRetries) continue;
      throw e;
    }
  }
}
