// Nova (compute) client: the reads `record` and `check` need, and the live-migration actions
// the executor needs. Everything list-shaped is paginated; nothing is fetched per server.
import { CloudError } from '../errors.js';
import type { Query, ServiceClient } from '../http/service-client.js';
import { asRec, optNum, optStr, type Rec, reqNum, reqStr, strList, strMap } from './fields.js';
import {
  formatVersion,
  negotiateVersion,
  type Version,
  type VersionRange,
  versionRangeFromDocument,
} from './microversion.js';
import { listWithMarker, listWithOffset } from './paging.js';

/** 2.64: server groups with `policy` + `rules`; also gives 2.47 embedded flavors, 2.53 service uuids, 2.59 paged migrations. */
export const NOVA_MIN_VERSION: Version = [2, 64];
/** The newest behaviour this client was written and tested against. */
export const NOVA_WANT_VERSION: Version = [2, 80];

export interface NovaService {
  id: string;
  binary: string;
  host: string;
  zone: string;
  state: 'up' | 'down';
  status: 'enabled' | 'disabled';
  forcedDown: boolean;
  disabledReason: string | null;
  updatedAt: string | null;
}

export interface NovaAggregate {
  id: number;
  uuid: string | null;
  name: string;
  availabilityZone: string | null;
  hosts: string[];
  metadata: Record<string, string>;
}

export interface NovaHypervisor {
  /** At 2.53+ the compute node UUID, which is also its Placement resource provider UUID. */
  id: string;
  hypervisorHostname: string;
  /** The nova-compute service host. */
  serviceHost: string | null;
  state: string;
  status: string;
}

export interface NovaFlavor {
  id: string | null;
  name: string;
  vcpus: number;
  ramMB: number;
  diskGB: number;
  extraSpecs: Record<string, string>;
}

export interface NovaServer {
  id: string;
  name: string;
  projectId: string;
  host: string | null;
  hypervisorHostname: string | null;
  /** The libvirt domain name (instance-0000xxxx). */
  instanceName: string | null;
  availabilityZone: string | null;
  status: string;
  taskState: string | null;
  vmState: string | null;
  flavor: NovaFlavor;
  metadata: Record<string, string>;
  /** null when the server boots from a volume. */
  imageId: string | null;
  volumeIds: string[];
  /** The fault Nova recorded on the server (set when it is in ERROR), else null. */
  fault: string | null;
}

export interface NovaServerGroup {
  id: string;
  name: string;
  policy: string;
  rules: Record<string, unknown>;
  members: string[];
  projectId: string | null;
}

export interface NovaMigration {
  id: number;
  uuid: string | null;
  serverId: string;
  migrationType: string;
  status: string;
  sourceCompute: string | null;
  destCompute: string | null;
  createdAt: string;
  updatedAt: string | null;
}

export interface ServerMigration {
  id: number;
  serverId: string;
  status: string;
  sourceCompute: string | null;
  destCompute: string | null;
  memoryTotalBytes: number | null;
  memoryProcessedBytes: number | null;
  memoryRemainingBytes: number | null;
  createdAt: string;
  updatedAt: string | null;
}

/** Statuses after which a live migration no longer changes. */
export const FINAL_MIGRATION_STATUSES = new Set(['completed', 'failed', 'error', 'cancelled', 'done']);

function parseFlavor(v: unknown, what: string): NovaFlavor {
  const f = asRec(v, what);
  return {
    id: optStr(f, 'id'),
    name: optStr(f, 'original_name') ?? optStr(f, 'name') ?? '',
    vcpus: reqNum(f, 'vcpus', what),
    ramMB: reqNum(f, 'ram', what),
    diskGB: reqNum(f, 'disk', what),
    extraSpecs: strMap(f.extra_specs),
  };
}

export function parseService(v: unknown): NovaService {
  const s = asRec(v, 'os-services[]');
  const state = reqStr(s, 'state', 'service');
  const status = reqStr(s, 'status', 'service');
  return {
    id: reqStr(s, 'id', 'service'),
    binary: reqStr(s, 'binary', 'service'),
    host: reqStr(s, 'host', 'service'),
    zone: optStr(s, 'zone') ?? '',
    state: state === 'up' ? 'up' : 'down',
    status: status === 'enabled' ? 'enabled' : 'disabled',
    forcedDown: s.forced_down === true,
    disabledReason: optStr(s, 'disabled_reason'),
    updatedAt: optStr(s, 'updated_at'),
  };
}

export function parseAggregate(v: unknown): NovaAggregate {
  const a = asRec(v, 'aggregates[]');
  return {
    id: reqNum(a, 'id', 'aggregate'),
    uuid: optStr(a, 'uuid'),
    name: reqStr(a, 'name', 'aggregate'),
    availabilityZone: optStr(a, 'availability_zone'),
    hosts: strList(a.hosts),
    metadata: strMap(a.metadata),
  };
}

export function parseHypervisor(v: unknown): NovaHypervisor {
  const h = asRec(v, 'hypervisors[]');
  const svc = h.service && typeof h.service === 'object' ? (h.service as Rec) : {};
  return {
    id: reqStr(h, 'id', 'hypervisor'),
    hypervisorHostname: reqStr(h, 'hypervisor_hostname', 'hypervisor'),
    serviceHost: optStr(svc, 'host'),
    state: optStr(h, 'state') ?? '',
    status: optStr(h, 'status') ?? '',
  };
}

export function parseServer(v: unknown): NovaServer {
  const s = asRec(v, 'servers[]');
  const id = reqStr(s, 'id', 'server');
  const what = `server ${id}`;
  const image = s.image;
  const imageId =
    image && typeof image === 'object'
      ? optStr(image as Rec, 'id')
      : typeof image === 'string' && image
        ? image
        : null;
  const volumes = Array.isArray(s['os-extended-volumes:volumes_attached'])
    ? (s['os-extended-volumes:volumes_attached'] as unknown[]).map((x) => optStr(asRec(x, what), 'id') ?? '')
    : [];
  return {
    id,
    name: optStr(s, 'name') ?? '',
    projectId: optStr(s, 'tenant_id') ?? optStr(s, 'project_id') ?? '',
    host: optStr(s, 'OS-EXT-SRV-ATTR:host'),
    hypervisorHostname: optStr(s, 'OS-EXT-SRV-ATTR:hypervisor_hostname'),
    instanceName: optStr(s, 'OS-EXT-SRV-ATTR:instance_name'),
    availabilityZone: optStr(s, 'OS-EXT-AZ:availability_zone'),
    status: reqStr(s, 'status', what),
    taskState: optStr(s, 'OS-EXT-STS:task_state'),
    vmState: optStr(s, 'OS-EXT-STS:vm_state'),
    flavor: parseFlavor(s.flavor, `${what}.flavor`),
    metadata: strMap(s.metadata),
    imageId,
    volumeIds: volumes.filter((x) => x !== ''),
    fault: s.fault && typeof s.fault === 'object' ? optStr(s.fault as Rec, 'message') : null,
  };
}

export function parseServerGroup(v: unknown): NovaServerGroup {
  const g = asRec(v, 'server_groups[]');
  const policies = strList(g.policies);
  return {
    id: reqStr(g, 'id', 'server group'),
    name: optStr(g, 'name') ?? '',
    policy: optStr(g, 'policy') ?? policies[0] ?? '',
    rules: g.rules && typeof g.rules === 'object' ? (g.rules as Record<string, unknown>) : {},
    members: strList(g.members),
    projectId: optStr(g, 'project_id'),
  };
}

export function parseMigration(v: unknown): NovaMigration {
  const m = asRec(v, 'migrations[]');
  return {
    id: reqNum(m, 'id', 'migration'),
    uuid: optStr(m, 'uuid'),
    serverId: reqStr(m, 'instance_uuid', 'migration'),
    migrationType: optStr(m, 'migration_type') ?? '',
    status: reqStr(m, 'status', 'migration'),
    sourceCompute: optStr(m, 'source_compute'),
    destCompute: optStr(m, 'dest_compute'),
    createdAt: reqStr(m, 'created_at', 'migration'),
    updatedAt: optStr(m, 'updated_at'),
  };
}

export function parseServerMigration(v: unknown): ServerMigration {
  const m = asRec(v, 'migrations[]');
  return {
    id: reqNum(m, 'id', 'migration'),
    serverId: optStr(m, 'server_uuid') ?? '',
    status: reqStr(m, 'status', 'migration'),
    sourceCompute: optStr(m, 'source_compute'),
    destCompute: optStr(m, 'dest_compute'),
    memoryTotalBytes: optNum(m, 'memory_total_bytes'),
    memoryProcessedBytes: optNum(m, 'memory_processed_bytes'),
    memoryRemainingBytes: optNum(m, 'memory_remaining_bytes'),
    createdAt: reqStr(m, 'created_at', 'migration'),
    updatedAt: optStr(m, 'updated_at'),
  };
}

export interface NovaOptions {
  need?: Version;
  want?: Version;
  pageSize?: number;
}

export interface FollowOptions {
  /** Only migrations created at or after this instant count (the POST time, a little before). */
  since?: Date;
  timeoutMs?: number;
  pollMs?: number;
  /** Called on every status change. */
  onStatus?: (m: NovaMigration) => void;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class NovaClient {
  private version: Version | undefined;
  /** The negotiation under way: requests sent before it ends share it (one version GET, not one each). */
  private negotiating: Promise<Version> | null = null;
  private readonly need: Version;
  private readonly want: Version;
  private readonly pageSize: number | undefined;

  constructor(
    readonly client: ServiceClient,
    opts: NovaOptions = {},
  ) {
    this.need = opts.need ?? NOVA_MIN_VERSION;
    this.want = opts.want ?? NOVA_WANT_VERSION;
    this.pageSize = opts.pageSize;
  }

  /** The supported range read from the version document at the endpoint. */
  async versionRange(): Promise<VersionRange | undefined> {
    const res = await this.client.request({ method: 'GET', path: '/', auth: false, accept: [300] });
    return versionRangeFromDocument(res.body, 2);
  }

  /** Negotiates once; every later request carries the chosen microversion. */
  async negotiate(): Promise<string> {
    if (!this.version) {
      this.negotiating ??= (async () => {
        const where = await this.client.endpoint();
        return negotiateVersion('Nova', await this.versionRange(), this.need, this.want, where);
      })().finally(() => {
        this.negotiating = null;
      });
      this.version = await this.negotiating;
    }
    return formatVersion(this.version);
  }

  /** Headers for the negotiated microversion (for callers that use `client` directly). */
  async headers(): Promise<Record<string, string>> {
    const v = await this.negotiate();
    return { 'OpenStack-API-Version': `compute ${v}`, 'X-OpenStack-Nova-API-Version': v };
  }

  private async get(path: string, query?: Query): Promise<unknown> {
    const res = await this.client.request({
      method: 'GET',
      path,
      headers: await this.headers(),
      ...(query ? { query } : {}),
    });
    return res.body;
  }

  private async paged(path: string, key: string, query: Query = {}): Promise<unknown[]> {
    return listWithMarker((p, q) => this.get(p, q), path, key, query, this.pageSize);
  }

  /** Compute services; `host` narrows the list to one host (one small answer, not the whole cloud). */
  async listServices(binary = 'nova-compute', host?: string): Promise<NovaService[]> {
    const body = asRec(await this.get('/os-services', { binary, host }), 'GET /os-services');
    return (Array.isArray(body.services) ? body.services : []).map(parseService);
  }

  /** Enables or disables a compute service (maintenance); 2.53+ addresses it by UUID. */
  async setServiceStatus(
    serviceId: string,
    status: 'enabled' | 'disabled',
    reason?: string,
  ): Promise<NovaService> {
    const body: Rec = { status };
    if (status === 'disabled' && reason) body.disabled_reason = reason;
    const res = await this.client.request({
      method: 'PUT',
      path: `/os-services/${encodeURIComponent(serviceId)}`,
      headers: await this.headers(),
      body,
    });
    return parseService(asRec(res.body, 'PUT /os-services').service);
  }

  async listAggregates(): Promise<NovaAggregate[]> {
    const body = asRec(await this.get('/os-aggregates'), 'GET /os-aggregates');
    return (Array.isArray(body.aggregates) ? body.aggregates : []).map(parseAggregate);
  }

  async listHypervisors(): Promise<NovaHypervisor[]> {
    // The detail list is the one that names each node's service host.
    return (await this.paged('/os-hypervisors/detail', 'hypervisors')).map(parseHypervisor);
  }

  /**
   * Servers of every project with host attributes and embedded flavors (extra specs included).
   * With `changesSince` (ISO 8601): only servers whose updated_at is at or after it, deleted
   * ones included with status DELETED (Nova lists deleted servers only to such a query).
   */
  async listServers(
    filters: { host?: string; allTenants?: boolean; changesSince?: string } = {},
  ): Promise<NovaServer[]> {
    const query: Query = {
      all_tenants: filters.allTenants === false ? undefined : 1,
      host: filters.host,
      'changes-since': filters.changesSince,
    };
    return (await this.paged('/servers/detail', 'servers', query)).map(parseServer);
  }

  async getServer(id: string): Promise<NovaServer> {
    const body = asRec(await this.get(`/servers/${encodeURIComponent(id)}`), `GET /servers/${id}`);
    return parseServer(body.server);
  }

  async listServerGroups(allProjects = true): Promise<NovaServerGroup[]> {
    const items = await listWithOffset(
      (p, q) => this.get(p, q),
      '/os-server-groups',
      'server_groups',
      allProjects ? { all_projects: 1 } : {},
      this.pageSize,
    );
    return items.map(parseServerGroup);
  }

  /** Every flavor, public and private (admin), with extra specs (2.61+). */
  async listFlavors(): Promise<NovaFlavor[]> {
    return (await this.paged('/flavors/detail', 'flavors', { is_public: 'None' })).map((f) =>
      parseFlavor(f, 'flavor'),
    );
  }

  async listMigrations(
    filters: {
      changesSince?: string;
      migrationType?: string;
      serverId?: string;
      host?: string;
      status?: string;
    } = {},
    /** Called with each page as it arrives (a follower needs to know where pages begin). */
    onPage?: (page: NovaMigration[]) => void,
  ): Promise<NovaMigration[]> {
    const query = {
      'changes-since': filters.changesSince,
      status: filters.status,
      migration_type: filters.migrationType,
      instance_uuid: filters.serverId,
      host: filters.host,
    };
    if (!onPage) return (await this.paged('/os-migrations', 'migrations', query)).map(parseMigration);
    const pages: NovaMigration[][] = [];
    await listWithMarker(
      async (path, q) => {
        const body = await this.get(path, q);
        const items = asRec(body, `GET ${path}`).migrations;
        const page = (Array.isArray(items) ? items : []).map(parseMigration);
        pages.push(page);
        onPage(page);
        return body;
      },
      '/os-migrations',
      'migrations',
      query,
      this.pageSize,
    );
    return pages.flat();
  }

  /** In-progress live migrations of one server (Nova lists only running ones here). */
  async listServerMigrations(serverId: string): Promise<ServerMigration[]> {
    const body = asRec(
      await this.get(`/servers/${encodeURIComponent(serverId)}/migrations`),
      `GET /servers/${serverId}/migrations`,
    );
    return (Array.isArray(body.migrations) ? body.migrations : []).map(parseServerMigration);
  }

  /**
   * Asks Nova to live-migrate a server to a named host. The scheduler still checks the
   * destination (no `force`), and `block_migration: auto` lets Nova pick shared or block.
   */
  async liveMigrate(serverId: string, host: string): Promise<void> {
    await this.client.request({
      method: 'POST',
      path: `/servers/${encodeURIComponent(serverId)}/action`,
      headers: await this.headers(),
      body: { 'os-migrateLive': { host, block_migration: 'auto' } },
    });
  }

  /**
   * Cold-migrates a server (Nova stops it if it runs, moves it, starts it again and waits in
   * VERIFY_RESIZE for confirmResize). `host` needs microversion 2.56; null lets the scheduler pick.
   */
  async coldMigrate(serverId: string, host: string | null): Promise<void> {
    await this.client.request({
      method: 'POST',
      path: `/servers/${encodeURIComponent(serverId)}/action`,
      headers: await this.headers(),
      body: { migrate: host === null ? null : { host } },
    });
  }

  /** Ends a cold migration waiting in VERIFY_RESIZE: the source's claim and copy are dropped. */
  async confirmResize(serverId: string): Promise<void> {
    await this.client.request({
      method: 'POST',
      path: `/servers/${encodeURIComponent(serverId)}/action`,
      headers: await this.headers(),
      body: { confirmResize: null },
    });
  }

  /** The newest live migration of a server created at or after `since`, if any. */
  async latestLiveMigration(serverId: string, since?: Date): Promise<NovaMigration | undefined> {
    const all = await this.listMigrations({ serverId, migrationType: 'live-migration' });
    const after = since
      ? all.filter(
          (m) =>
            Date.parse(m.createdAt.endsWith('Z') ? m.createdAt : `${m.createdAt}Z`) >= since.getTime() - 1000,
        )
      : all;
    return after.sort((a, b) => b.id - a.id)[0];
  }

  /** Polls a server's newest live migration until it reaches a final status. */
  async followLiveMigration(serverId: string, opts: FollowOptions = {}): Promise<NovaMigration> {
    const sleep = opts.sleep ?? defaultSleep;
    const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
    const pollMs = opts.pollMs ?? 2000;
    let last: string | undefined;
    for (;;) {
      const m = await this.latestLiveMigration(serverId, opts.since);
      if (m && m.status !== last) {
        last = m.status;
        opts.onStatus?.(m);
      }
      if (m && FINAL_MIGRATION_STATUSES.has(m.status)) return m;
      if (Date.now() >= deadline) {
        throw new CloudError(
          'timeout',
          `live migration of server ${serverId} did not finish within ${Math.round((opts.timeoutMs ?? 0) / 1000)} s (last status: ${last ?? 'not started'})`,
          {
            fix: 'Look at the migration in `openstack server migration list`; abort it if it does not converge',
          },
        );
      }
      await sleep(pollMs);
    }
  }

  /** Cancels a running live migration (2.24+); the server stays on its source. */
  async abortMigration(serverId: string, migrationId: number): Promise<void> {
    await this.client.request({
      method: 'DELETE',
      path: `/servers/${encodeURIComponent(serverId)}/migrations/${migrationId}`,
      headers: await this.headers(),
    });
  }

  /** Pauses the guest so a migration that does not converge can finish (2.22+). */
  async forceCompleteMigration(serverId: string, migrationId: number): Promise<void> {
    await this.client.request({
      method: 'POST',
      path: `/servers/${encodeURIComponent(serverId)}/migrations/${migrationId}/action`,
      headers: await this.headers(),
      body: { force_complete: null },
      // Forcing twice is as good as once.
      idempotent: true,
    });
  }
}
