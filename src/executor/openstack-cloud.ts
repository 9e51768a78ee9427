// The executor's cloud port on the OpenStack clients: every read (servers, services, migrations,
// room and allocations in Placement) through the reader credential, the live-migration actions
// through the actuator and nothing else. Only this file turns client answers and CloudErrors into
// the executor's plain views and failure kinds.
import type { Actuator } from '../cloud/actuator.js';
import { CloudError } from '../cloud/errors.js';
import type { NovaClient, NovaMigration, NovaServer, NovaService } from '../cloud/openstack/nova.js';
import type { PlacementClient } from '../cloud/openstack/placement.js';
import {
  ActuatorError,
  type ComputeServiceView,
  type ExecutorCloud,
  type HostRoomView,
  type LiveMigrationChanges,
  type LiveMigrationView,
  type ServerView,
} from './ports.js';

/** Nova writes UTC times without a zone ("2026-11-30T21:04:05.000000"). */
export function parseNovaTime(t: string): number {
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : `${t}Z`);
}

function isNotFound(e: unknown): boolean {
  return e instanceof CloudError && e.status === 404;
}

function liveMigrationView(m: NovaMigration): LiveMigrationView {
  return {
    id: m.id,
    serverId: m.serverId,
    status: m.status,
    source: m.sourceCompute,
    dest: m.destCompute,
    createdAt: parseNovaTime(m.createdAt),
    updatedAt: m.updatedAt === null ? null : parseNovaTime(m.updatedAt),
  };
}

function serverView(s: NovaServer): ServerView {
  return {
    id: s.id,
    status: s.status,
    taskState: s.taskState,
    host: s.host,
    fault: s.fault,
    flavor: { vcpus: s.flavor.vcpus, ramMB: s.flavor.ramMB },
  };
}

function serviceView(svc: NovaService): ComputeServiceView {
  return {
    host: svc.host,
    up: svc.state === 'up',
    enabled: svc.status === 'enabled',
    forcedDown: svc.forcedDown,
    disabledReason: svc.disabledReason,
  };
}

/** A refusal is an answer (nothing started); anything else leaves the outcome to be read from Nova. */
export function toActuatorError(e: unknown, what: string): ActuatorError {
  if (e instanceof ActuatorError) return e;
  if (e instanceof CloudError) {
    if (e.kind === 'conflict') return new ActuatorError('conflict', `${what}: ${e.message}`, e.status);
    const definite = e.status !== undefined && e.status >= 400 && e.status < 500;
    if (definite && (e.kind === 'http' || e.kind === 'auth')) {
      return new ActuatorError('refused', `${what}: ${e.message}`, e.status);
    }
    return new ActuatorError('unknown', `${what}: ${e.message}`, e.status);
  }
  return new ActuatorError('unknown', `${what}: ${e instanceof Error ? e.message : String(e)}`);
}

/** The reads the executor makes: a reader session has them; their writes are not here. */
export interface ExecutorReads {
  nova: Pick<
    NovaClient,
    'getServer' | 'listServers' | 'listMigrations' | 'listServices' | 'listHypervisors'
  > &
    Partial<Pick<NovaClient, 'negotiate'>>;
  placement: Pick<
    PlacementClient,
    | 'getInventories'
    | 'getUsages'
    | 'getConsumerAllocations'
    | 'getProviderAllocations'
    | 'listResourceProviders'
  > &
    Partial<Pick<PlacementClient, 'negotiate'>>;
}

/** The writes the executor makes: only an actuator has them. */
export type ExecutorWrites = Pick<Actuator, 'kind' | 'liveMigrate' | 'abortMigration'> &
  Partial<Pick<Actuator, 'prepare'>>;

export class OpenStackExecutorCloud implements ExecutorCloud {
  private providerOfHost = new Map<string, string>();
  private providersLoading: Promise<void> | null = null;
  private readonly nova: ExecutorReads['nova'];
  private readonly placement: ExecutorReads['placement'];

  constructor(
    reader: ExecutorReads,
    private readonly actuator: ExecutorWrites,
  ) {
    this.nova = reader.nova;
    this.placement = reader.placement;
  }

  /**
   * The microversions of both credentials' services negotiated and the hosts' resource providers
   * known, all at once: an execution's first pre-flights and calls then wait for none of them.
   */
  async prepare(): Promise<void> {
    await Promise.all([
      this.nova.negotiate?.(),
      this.placement.negotiate?.(),
      this.actuator.prepare?.(),
      this.providerOfHost.size > 0 ? undefined : this.loadProvidersOnce(),
    ]);
  }

  async getServer(serverId: string): Promise<ServerView | null> {
    try {
      return serverView(await this.nova.getServer(serverId));
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async listServersChangedSince(sinceMs: number): Promise<ServerView[]> {
    return (await this.nova.listServers({ changesSince: new Date(sinceMs).toISOString() })).map(serverView);
  }

  async listLiveMigrations(serverId: string): Promise<LiveMigrationView[]> {
    // No changes-since: Nova filters it on updated_at, which is null on a fresh record.
    const all = await this.nova.listMigrations({ serverId, migrationType: 'live-migration' });
    return all
      .filter((m) => m.serverId === serverId)
      .map(liveMigrationView)
      .sort((a, b) => b.id - a.id);
  }

  async listLiveMigrationsChangedSince(sinceMs: number): Promise<LiveMigrationChanges> {
    let first: NovaMigration[] | null = null;
    const all = await this.nova.listMigrations(
      { changesSince: new Date(sinceMs).toISOString(), migrationType: 'live-migration' },
      (page) => {
        first ??= page;
      },
    );
    let newest: number | null = null;
    for (const m of (first ?? []) as NovaMigration[]) {
      if (m.updatedAt === null) continue;
      const t = parseNovaTime(m.updatedAt);
      if (newest === null || t > newest) newest = t;
    }
    return {
      records: all.filter((m) => m.migrationType === 'live-migration').map(liveMigrationView),
      newestOnFirstPage: newest,
    };
  }

  async getComputeService(host: string): Promise<ComputeServiceView | null> {
    const svc = (await this.nova.listServices('nova-compute', host)).find((s) => s.host === host);
    return svc ? serviceView(svc) : null;
  }

  async listComputeServices(): Promise<ComputeServiceView[]> {
    return (await this.nova.listServices('nova-compute')).map(serviceView);
  }

  async getHostRoom(host: string): Promise<HostRoomView | null> {
    const rp = await this.providerOf(host);
    if (!rp) return null;
    const [inventories, usages] = await Promise.all([this.inventoriesOf(rp), this.placement.getUsages(rp)]);
    return { inventories, usages };
  }

  async getHostInventories(host: string): Promise<HostRoomView['inventories'] | null> {
    const rp = await this.providerOf(host);
    return rp ? this.inventoriesOf(rp) : null;
  }

  async getHostUsages(host: string): Promise<HostRoomView['usages'] | null> {
    const rp = await this.providerOf(host);
    return rp ? this.placement.getUsages(rp) : null;
  }

  async listHostAllocations(host: string): Promise<Map<string, Record<string, number>> | null> {
    const rp = await this.providerOf(host);
    return rp ? this.placement.getProviderAllocations(rp) : null;
  }

  private async inventoriesOf(rp: string): Promise<HostRoomView['inventories']> {
    const inv = await this.placement.getInventories(rp);
    const inventories: HostRoomView['inventories'] = {};
    for (const [rc, i] of Object.entries(inv.inventories)) {
      inventories[rc] = { total: i.total, reserved: i.reserved, allocationRatio: i.allocationRatio };
    }
    return inventories;
  }

  async getServerAllocation(serverId: string): Promise<Record<string, number>> {
    const byProvider = await this.placement.getConsumerAllocations(serverId);
    // A server that is not migrating holds one provider; sum in case of nested providers.
    const out: Record<string, number> = {};
    for (const amounts of Object.values(byProvider)) {
      for (const [rc, n] of Object.entries(amounts)) out[rc] = (out[rc] ?? 0) + n;
    }
    return out;
  }

  async liveMigrate(serverId: string, host: string): Promise<void> {
    try {
      await this.actuator.liveMigrate(serverId, host);
    } catch (e) {
      throw toActuatorError(e, `live migration of ${serverId} to ${host}`);
    }
  }

  async abortLiveMigration(serverId: string, migrationId: number): Promise<void> {
    try {
      await this.actuator.abortMigration(serverId, migrationId);
    } catch (e) {
      throw toActuatorError(e, `abort of migration ${migrationId} of ${serverId}`);
    }
  }

  /** Hypervisor id is the provider uuid at 2.53+; read the list once, again when a host is new. */
  private async providerOf(host: string): Promise<string | undefined> {
    const known = this.providerOfHost.get(host);
    if (known) return known;
    await this.loadProvidersOnce();
    return this.providerOfHost.get(host);
  }

  /** Pre-flights starting together (an execution's first moves) share one reading of the lists. */
  private loadProvidersOnce(): Promise<void> {
    this.providersLoading ??= this.loadProviders().finally(() => {
      this.providersLoading = null;
    });
    return this.providersLoading;
  }

  private async loadProviders(): Promise<void> {
    const [hypervisors, providers] = await Promise.all([
      this.nova.listHypervisors(),
      this.placement.listResourceProviders(),
    ]);
    const byUuid = new Set(providers.map((p) => p.uuid));
    const byName = new Map(providers.map((p) => [p.name, p.uuid]));
    const next = new Map<string, string>();
    for (const h of hypervisors) {
      const name = h.serviceHost ?? h.hypervisorHostname;
      const rp = byUuid.has(h.id) ? h.id : byName.get(h.hypervisorHostname);
      if (rp && !next.has(name)) next.set(name, rp);
    }
    for (const p of providers)
      if (p.parentProviderUuid === null && !next.has(p.name)) next.set(p.name, p.uuid);
    this.providerOfHost = next;
  }
}
