// Nova v2.1: the calls Aicerine and the openstack CLI make, with Nova's microversion handling,
// pagination (limit/marker and `*_links` next), policy checks and fault bodies.

import { confirmResize, startColdMigration } from '../cold-migrations.js';
import {
  ASYNC_LIVE_MIGRATE_CHECKS,
  abortMigration,
  forceCompleteMigration,
  startLiveMigration,
} from '../migrations.js';
import {
  NOVA_MAX_LIMIT,
  type SimCloud,
  SimError,
  type SimHost,
  type SimMigration,
  type SimServer,
  setServiceStatus,
  upperBound,
} from '../model.js';
import { pauseOrUnpause } from '../pause.js';
import { deleteServer } from '../server-lifecycle.js';
import { atLeast, fmt, NOVA_VERSIONS, requestedVersion, type Version } from './microversion.js';
import {
  aggregateView,
  computeServiceRow,
  flavorView,
  hypervisorView,
  isInProgressLive,
  migrationView,
  serverGroupView,
  serverMigrationView,
  serverView,
  serviceRows,
  serviceView,
  type ViewCtx,
} from './nova-views.js';
import { novaWriteRoutes } from './nova-writes.js';
import { type Ctx, isRecord, type Route, route, sendEmpty, sendJson, str, wsgiFault } from './respond.js';

export const NOVA_PREFIX = '/compute';

export function novaFault(ctx: Ctx, code: number, message: string): void {
  sendJson(ctx, code, wsgiFault(code, message), {
    'Content-Type': 'application/json; charset=UTF-8',
  });
}

export class Fault extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export function novaVersionHeaders(v: Version): Record<string, string> {
  return {
    'OpenStack-API-Version': `compute ${fmt(v)}`,
    'X-OpenStack-Nova-API-Version': fmt(v),
    Vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
  };
}

function versionDoc(origin: string): Record<string, unknown> {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: fmt(NOVA_VERSIONS.max),
    min_version: fmt(NOVA_VERSIONS.min),
    updated: '2013-07-23T11:33:21Z',
    links: [
      { rel: 'self', href: `${origin}${NOVA_PREFIX}/v2.1/` },
      { rel: 'describedby', type: 'text/html', href: 'http://docs.openstack.org/' },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
  };
}

export type NovaHandler = (ctx: Ctx, v: ViewCtx, params: string[]) => void;
export type NovaWrap = (policy: string | null, h: NovaHandler) => (ctx: Ctx, params: string[]) => void;

export function novaRoutes(cloud: SimCloud): Route[] {
  const wrap =
    (policy: string | null, h: NovaHandler) =>
    (ctx: Ctx, params: string[]): void => {
      const neg = requestedVersion(
        NOVA_VERSIONS,
        'compute',
        ctx.req.headers['openstack-api-version'] as string | undefined,
        ctx.req.headers['x-openstack-nova-api-version'] as string | undefined,
      );
      if (!neg.ok) {
        if (neg.status === 406) {
          const raw = /(\d+\.\d+)/.exec(neg.message)?.[1] ?? '';
          Object.assign(ctx.headers, {
            'OpenStack-API-Version': `compute ${raw}`,
            'X-OpenStack-Nova-API-Version': raw,
            Vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
          });
        }
        novaFault(ctx, neg.status, neg.message);
        return;
      }
      Object.assign(ctx.headers, novaVersionHeaders(neg.version), { 'X-Compute-Request-Id': ctx.requestId });
      if (policy && !ctx.token?.roles.includes('admin')) {
        novaFault(ctx, 403, `Policy doesn't allow ${policy} to be performed.`);
        return;
      }
      cloud.sync();
      const view: ViewCtx = { cloud, version: neg.version, base: `${ctx.origin}${NOVA_PREFIX}` };
      try {
        h(ctx, view, params);
      } catch (e) {
        if (e instanceof Fault || e instanceof SimError) {
          const code = e instanceof Fault ? e.code : e.status;
          novaFault(ctx, code, e.message);
          return;
        }
        throw e;
      }
    };

  const isAdmin = (ctx: Ctx): boolean => ctx.token?.roles.includes('admin') ?? false;

  const requireVersion = (v: ViewCtx, major: number, minor: number): void => {
    if (!atLeast(v.version, major, minor)) throw new Fault(404, 'The resource could not be found.');
  };

  return [
    route('GET', '', (ctx) => {
      sendJson(ctx, 200, {
        versions: [
          {
            id: 'v2.0',
            status: 'SUPPORTED',
            version: '',
            min_version: '',
            updated: '2011-01-21T11:33:21Z',
            links: [{ rel: 'self', href: `${ctx.origin}${NOVA_PREFIX}/v2/` }],
          },
          {
            id: 'v2.1',
            status: 'CURRENT',
            version: fmt(NOVA_VERSIONS.max),
            min_version: fmt(NOVA_VERSIONS.min),
            updated: '2013-07-23T11:33:21Z',
            links: [{ rel: 'self', href: `${ctx.origin}${NOVA_PREFIX}/v2.1/` }],
          },
        ],
      });
    }),
    route(
      'GET',
      '/v2.1',
      wrap(null, (ctx) => sendJson(ctx, 200, { version: versionDoc(ctx.origin) })),
    ),

    // --- servers
    route(
      'GET',
      '/v2.1/servers/detail',
      wrap(null, (ctx, v) => listServers(ctx, v, cloud, true, isAdmin(ctx))),
    ),
    route(
      'GET',
      '/v2.1/servers',
      wrap(null, (ctx, v) => listServers(ctx, v, cloud, false, isAdmin(ctx))),
    ),
    route(
      'GET',
      '/v2.1/servers/{id}',
      wrap(null, (ctx, v, [id]) => {
        const s = visibleServer(ctx, cloud, id as string);
        sendJson(ctx, 200, { server: serverView(v, s, true, isAdmin(ctx)) });
      }),
    ),
    route(
      'DELETE',
      '/v2.1/servers/{id}',
      wrap(null, (ctx, _v, [id]) => {
        const s = visibleServer(ctx, cloud, id as string);
        deleteServer(cloud, s.uuid);
        sendEmpty(ctx, 204);
      }),
    ),
    route(
      'POST',
      '/v2.1/servers/{id}/action',
      wrap(null, (ctx, v, [id]) => serverAction(ctx, v, cloud, id as string)),
    ),
    route(
      'GET',
      '/v2.1/servers/{id}/migrations',
      wrap('os_compute_api:servers:migrations:index', (ctx, v, [id]) => {
        requireVersion(v, 2, 23);
        cloud.requireServer(id as string);
        const list = (cloud.migrationsOfServer.get(id as string) ?? []).filter(isInProgressLive);
        sendJson(ctx, 200, { migrations: list.map((m) => serverMigrationView(v, m)) });
      }),
    ),
    route(
      'GET',
      '/v2.1/servers/{id}/migrations/{mid}',
      wrap('os_compute_api:servers:migrations:show', (ctx, v, [id, mid]) => {
        requireVersion(v, 2, 23);
        cloud.requireServer(id as string);
        const m = cloud.migrationsById.get(Number(mid));
        if (!m || m.server.uuid !== id || !isInProgressLive(m)) {
          throw new Fault(404, `Live migration ${mid} for server ${id} is not in progress.`);
        }
        sendJson(ctx, 200, { migration: serverMigrationView(v, m) });
      }),
    ),
    route(
      'DELETE',
      '/v2.1/servers/{id}/migrations/{mid}',
      wrap('os_compute_api:servers:migrations:delete', (ctx, v, [id, mid]) => {
        requireVersion(v, 2, 24);
        const migId = parseMigrationId(mid as string);
        abortMigration(cloud, id as string, migId, atLeast(v.version, 2, 65));
        sendEmpty(ctx, 202);
      }),
    ),
    route(
      'POST',
      '/v2.1/servers/{id}/migrations/{mid}/action',
      wrap('os_compute_api:servers:migrations:force_complete', (ctx, v, [id, mid]) => {
        requireVersion(v, 2, 22);
        if (!isRecord(ctx.body) || !('force_complete' in ctx.body)) {
          throw new Fault(
            400,
            `There is no such action: ${Object.keys(isRecord(ctx.body) ? ctx.body : {}).join(',')}`,
          );
        }
        forceCompleteMigration(cloud, id as string, parseMigrationId(mid as string));
        sendEmpty(ctx, 202);
      }),
    ),

    // --- flavors
    route(
      'GET',
      '/v2.1/flavors/detail',
      wrap(null, (ctx, v) => listFlavors(ctx, v, cloud, true)),
    ),
    route(
      'GET',
      '/v2.1/flavors',
      wrap(null, (ctx, v) => listFlavors(ctx, v, cloud, false)),
    ),
    route(
      'GET',
      '/v2.1/flavors/{id}',
      wrap(null, (ctx, v, [id]) => {
        const f = findFlavor(cloud, id as string);
        sendJson(ctx, 200, { flavor: flavorView(v, f, true) });
      }),
    ),
    route(
      'GET',
      '/v2.1/flavors/{id}/os-extra_specs',
      wrap(null, (ctx, _v, [id]) => {
        sendJson(ctx, 200, { extra_specs: { ...findFlavor(cloud, id as string).extraSpecs } });
      }),
    ),

    // --- services
    route(
      'GET',
      '/v2.1/os-services',
      wrap('os_compute_api:os-services:list', (ctx, v) => {
        const host = ctx.query.get('host');
        const binary = ctx.query.get('binary');
        const rows = serviceRows(cloud).filter(
          (r) => (host === null || r.host === host) && (binary === null || r.binary === binary),
        );
        sendJson(ctx, 200, { services: rows.map((r) => serviceView(v, r)) });
      }),
    ),
    route(
      'PUT',
      '/v2.1/os-services/{id}',
      wrap('os_compute_api:os-services:update', (ctx, v, [id]) => updateService(ctx, v, cloud, id as string)),
    ),

    // --- hypervisors
    route(
      'GET',
      '/v2.1/os-hypervisors',
      wrap('os_compute_api:os-hypervisors:list', (ctx, v) => listHypervisors(ctx, v, cloud, false)),
    ),
    route(
      'GET',
      '/v2.1/os-hypervisors/detail',
      wrap('os_compute_api:os-hypervisors:list-detail', (ctx, v) => listHypervisors(ctx, v, cloud, true)),
    ),
    route(
      'GET',
      '/v2.1/os-hypervisors/statistics',
      wrap('os_compute_api:os-hypervisors:statistics', (ctx, v) => {
        // Removed at 2.88 (Placement is the source of these numbers).
        if (atLeast(v.version, 2, 88)) throw new Fault(404, 'The resource could not be found.');
        sendJson(ctx, 200, { hypervisor_statistics: hypervisorStatistics(v, cloud.hosts) });
      }),
    ),
    route(
      'GET',
      '/v2.1/os-hypervisors/{id}/uptime',
      wrap('os_compute_api:os-hypervisors:uptime', (ctx, v, [id]) => {
        // Removed at 2.88: the uptime is in GET /os-hypervisors/{id} instead.
        if (atLeast(v.version, 2, 88)) throw new Fault(404, 'The resource could not be found.');
        const h = findHypervisor(cloud, v, id as string);
        const { id: hid, hypervisor_hostname, state, status } = hypervisorView(v, h, false, false);
        sendJson(ctx, 200, {
          hypervisor: { id: hid, hypervisor_hostname, state, status, uptime: hypervisorUptime(cloud) },
        });
      }),
    ),
    route(
      'GET',
      '/v2.1/os-hypervisors/{id}',
      wrap('os_compute_api:os-hypervisors:show', (ctx, v, [id]) => {
        const h = findHypervisor(cloud, v, id as string);
        sendJson(ctx, 200, {
          hypervisor: hypervisorView(v, h, true, ctx.query.get('with_servers') === 'true'),
        });
      }),
    ),

    // --- aggregates
    route(
      'GET',
      '/v2.1/os-aggregates',
      wrap('os_compute_api:os-aggregates:index', (ctx, v) => {
        sendJson(ctx, 200, { aggregates: cloud.aggregates.map((a) => aggregateView(v, a)) });
      }),
    ),
    route(
      'GET',
      '/v2.1/os-aggregates/{id}',
      wrap('os_compute_api:os-aggregates:show', (ctx, v, [id]) => {
        const a = cloud.aggregates.find((x) => String(x.id) === id);
        if (!a) throw new Fault(404, `Aggregate ${id} could not be found.`);
        sendJson(ctx, 200, { aggregate: aggregateView(v, a) });
      }),
    ),

    // --- server groups
    route(
      'GET',
      '/v2.1/os-server-groups',
      wrap(null, (ctx, v) => {
        const all = boolParam(ctx.query.get('all_projects')) && isAdmin(ctx);
        const projectId = ctx.token?.projectId;
        let list = cloud.groups.filter((g) => all || g.projectId === projectId);
        const offset = intParam(ctx.query.get('offset'), 'offset') ?? 0;
        const limit = Math.min(intParam(ctx.query.get('limit'), 'limit') ?? NOVA_MAX_LIMIT, NOVA_MAX_LIMIT);
        list = list.slice(offset, offset + limit);
        sendJson(ctx, 200, { server_groups: list.map((g) => serverGroupView(v, g)) });
      }),
    ),
    route(
      'GET',
      '/v2.1/os-server-groups/{id}',
      wrap(null, (ctx, v, [id]) => {
        const g = cloud.groupsByUuid.get(id as string);
        if (!g) throw new Fault(404, `Instance group ${id} could not be found.`);
        sendJson(ctx, 200, { server_group: serverGroupView(v, g) });
      }),
    ),
    route(
      'DELETE',
      '/v2.1/os-server-groups/{id}',
      wrap(null, (ctx, _v, [id]) => {
        const g = cloud.groupsByUuid.get(id as string);
        if (!g || (g.projectId !== ctx.token?.projectId && !isAdmin(ctx)))
          throw new Fault(404, `Instance group ${id} could not be found.`);
        cloud.groupsByUuid.delete(g.uuid);
        cloud.groups.splice(cloud.groups.indexOf(g), 1);
        for (const m of g.members) if (cloud.groupOfServer.get(m) === g) cloud.groupOfServer.delete(m);
        sendEmpty(ctx, 204);
      }),
    ),

    // --- keypairs: the simulator keeps none (servers boot without one)
    route(
      'GET',
      '/v2.1/os-keypairs',
      wrap(null, (ctx, v) => {
        if (ctx.query.has('user_id') && !(atLeast(v.version, 2, 10) && isAdmin(ctx)))
          throw new Fault(403, "Policy doesn't allow os_compute_api:os-keypairs:index to be performed.");
        sendJson(ctx, 200, { keypairs: [] });
      }),
    ),
    route(
      'DELETE',
      '/v2.1/os-keypairs/{name}',
      wrap(null, (_ctx, _v, [name]) => {
        throw new Fault(404, `Keypair ${name} not found for user`);
      }),
    ),

    // --- migrations
    route(
      'GET',
      '/v2.1/os-migrations',
      wrap('os_compute_api:os-migrations:index', (ctx, v) => listMigrations(ctx, v, cloud)),
    ),
    ...novaWriteRoutes(cloud, wrap),
  ];
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A hypervisor by id: its integer position before 2.53, its node UUID from then on. */
function findHypervisor(cloud: SimCloud, v: ViewCtx, id: string): SimHost {
  if (atLeast(v.version, 2, 53) && !UUID_RE.test(id)) throw new Fault(400, `Invalid uuid ${id}`);
  const h = atLeast(v.version, 2, 53)
    ? cloud.hostsByNodeUuid.get(id)
    : /^\d+$/.test(id)
      ? cloud.hosts[Number(id) - 1]
      : undefined;
  if (!h) throw new Fault(404, `Hypervisor with ID '${id}' could not be found.`);
  return h;
}

/** The sums GET /os-hypervisors/statistics reports (before 2.88), from the detail view's numbers. */
function hypervisorStatistics(v: ViewCtx, hosts: readonly SimHost[]): Record<string, number> {
  const keys = [
    'vcpus',
    'memory_mb',
    'local_gb',
    'vcpus_used',
    'memory_mb_used',
    'local_gb_used',
    'free_ram_mb',
    'free_disk_gb',
    'current_workload',
    'running_vms',
    'disk_available_least',
  ] as const;
  const out: Record<string, number> = { count: hosts.length };
  for (const k of keys) out[k] = 0;
  for (const h of hosts) {
    const row = hypervisorView(v, h, true, false);
    for (const k of keys) out[k] = (out[k] as number) + (typeof row[k] === 'number' ? (row[k] as number) : 0);
  }
  return out;
}

/** `uptime` output as libvirt's driver reports it, from the simulator's clock. */
function hypervisorUptime(cloud: SimCloud): string {
  const now = new Date(cloud.nowMs());
  const hms = now.toISOString().slice(11, 19);
  return ` ${hms} up 42 days,  1:00,  0 users,  load average: 0.00, 0.00, 0.00`;
}

function visibleServer(ctx: Ctx, cloud: SimCloud, id: string): SimServer {
  const s = cloud.serversByUuid.get(id);
  if (!s || (!ctx.token?.roles.includes('admin') && s.projectId !== ctx.token?.projectId)) {
    throw new Fault(404, `Instance ${id} could not be found.`);
  }
  return s;
}

function parseMigrationId(mid: string): number {
  if (!/^\d+$/.test(mid)) throw new Fault(400, `Invalid migration id ${mid}`);
  return Number(mid);
}

function boolParam(v: string | null): boolean {
  if (v === null) return false;
  return !['0', 'false', 'f', 'no', 'n', 'off'].includes(v.toLowerCase());
}

function intParam(v: string | null, name: string): number | undefined {
  if (v === null) return undefined;
  if (!/^[0-9]*$/.test(v)) {
    throw new Fault(
      400,
      `Invalid input for query parameters ${name}. Value: ${v}. '${v}' does not match '^[0-9]*$'`,
    );
  }
  return v === '' ? undefined : Number(v);
}

function nextLinks(ctx: Ctx, v: ViewCtx, key: string, marker: string): Record<string, unknown> {
  const params = new URLSearchParams(ctx.query);
  params.set('marker', marker);
  return { [key]: [{ rel: 'next', href: `${v.base}${ctx.path}?${params.toString()}` }] };
}

function listServers(ctx: Ctx, v: ViewCtx, cloud: SimCloud, detail: boolean, admin: boolean): void {
  const q = ctx.query;
  const limit = Math.min(intParam(q.get('limit'), 'limit') ?? NOVA_MAX_LIMIT, NOVA_MAX_LIMIT);
  const allTenants = admin && q.has('all_tenants') && boolParam(q.get('all_tenants') || 'true');
  const projectFilter = allTenants ? (q.get('project_id') ?? q.get('tenant_id')) : ctx.token?.projectId;
  const host = admin ? q.get('host') : null;
  const status = q.get('status')?.toUpperCase() ?? null;
  const name = q.get('name');
  const nameRe = name ? safeRegex(name) : null;
  const since = parseTime(q.get('changes-since'), 'changes-since');
  const before = atLeast(v.version, 2, 66) ? parseTime(q.get('changes-before'), 'changes-before') : undefined;
  if (since !== undefined && before !== undefined && since > before) {
    throw new Fault(400, 'The value of changes-since must be less than or equal to changes-before.');
  }
  const keep = (s: SimServer): boolean =>
    !(projectFilter && s.projectId !== projectFilter) &&
    !(host !== null && s.host !== host) &&
    !(status !== null && s.status !== status) &&
    !(nameRe && !nameRe.test(s.name)) &&
    !(since !== undefined && s.updatedMs < since) &&
    !(before !== undefined && s.updatedMs > before);

  const marker = q.get('marker');
  const out: SimServer[] = [];
  if (since !== undefined || before !== undefined) {
    // Nova filters on updated_at and, only then, lists deleted servers too (status DELETED).
    const all = [...cloud.servers.filter(keep), ...cloud.deletedServers.filter(keep)];
    all.sort((a, b) => b.createdMs - a.createdMs);
    let start = 0;
    if (marker !== null) {
      const i = all.findIndex((s) => s.uuid === marker);
      if (i < 0) throw new Fault(400, `marker [${marker}] not found`);
      start = i + 1;
    }
    out.push(...all.slice(start, start + limit));
  } else {
    // The narrowest index that answers the filter; the rest is checked item by item.
    let base: readonly number[] | null = null;
    if (host !== null) base = cloud.hostsByName.get(host)?.servers ?? [];
    else if (projectFilter) base = cloud.serversByProject.get(projectFilter) ?? [];
    let start = 0;
    if (marker !== null) {
      const m = cloud.serversByUuid.get(marker);
      if (!m) throw new Fault(400, `marker [${marker}] not found`);
      start = base ? upperBound(base, m.order) : m.order + 1;
    }
    const total = base ? base.length : cloud.servers.length;
    for (let i = start; i < total && out.length < limit; i++) {
      const s = cloud.servers[base ? (base[i] as number) : i] as SimServer;
      if (keep(s)) out.push(s);
    }
  }
  const body: Record<string, unknown> = { servers: out.map((s) => serverView(v, s, detail, admin)) };
  const last = out.at(-1);
  if (out.length === limit && last) Object.assign(body, nextLinks(ctx, v, 'servers_links', last.uuid));
  sendJson(ctx, 200, body);
}

function safeRegex(s: string): RegExp | null {
  try {
    return new RegExp(s);
  } catch {
    throw new Fault(400, `Invalid regular expression for name filter: ${s}`);
  }
}

export function findFlavor(cloud: SimCloud, id: string) {
  for (const f of cloud.flavors.values()) if (f.id === id) return f;
  throw new Fault(404, `Flavor ${id} could not be found.`);
}

function listFlavors(ctx: Ctx, v: ViewCtx, cloud: SimCloud, detail: boolean): void {
  const limit = Math.min(intParam(ctx.query.get('limit'), 'limit') ?? NOVA_MAX_LIMIT, NOVA_MAX_LIMIT);
  // Nova: is_public=None (admin) lists every flavor; otherwise the public ones and the private
  // ones open to the token's project.
  const everything =
    ctx.query.get('is_public')?.toLowerCase() === 'none' && ctx.token?.roles.includes('admin');
  const project = ctx.token?.projectId ?? '';
  const all = [...cloud.flavors.values()]
    .filter((f) => everything || f.isPublic !== false || (f.projects ?? []).includes(project))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let start = 0;
  const marker = ctx.query.get('marker');
  if (marker !== null) {
    const i = all.findIndex((f) => f.id === marker);
    if (i < 0) throw new Fault(400, `marker [${marker}] not found`);
    start = i + 1;
  }
  const page = all.slice(start, start + limit);
  const body: Record<string, unknown> = { flavors: page.map((f) => flavorView(v, f, detail)) };
  const last = page.at(-1);
  if (page.length === limit && last) Object.assign(body, nextLinks(ctx, v, 'flavors_links', last.id));
  sendJson(ctx, 200, body);
}

function listHypervisors(ctx: Ctx, v: ViewCtx, cloud: SimCloud, detail: boolean): void {
  const q = ctx.query;
  const paged = atLeast(v.version, 2, 33);
  const limit = paged
    ? Math.min(intParam(q.get('limit'), 'limit') ?? NOVA_MAX_LIMIT, NOVA_MAX_LIMIT)
    : Infinity;
  const withServers = atLeast(v.version, 2, 53) && boolParam(q.get('with_servers'));
  const pattern = atLeast(v.version, 2, 53) ? q.get('hypervisor_hostname_pattern') : null;
  let start = 0;
  const marker = paged ? q.get('marker') : null;
  if (marker !== null) {
    const h = atLeast(v.version, 2, 53) ? cloud.hostsByNodeUuid.get(marker) : cloud.hosts[Number(marker) - 1];
    if (!h) throw new Fault(400, `marker [${marker}] not found`);
    start = h.index + 1;
  }
  const out: SimHost[] = [];
  for (let i = start; i < cloud.hosts.length && out.length < limit; i++) {
    const h = cloud.hosts[i] as SimHost;
    if (pattern && !h.name.includes(pattern)) continue;
    out.push(h);
  }
  if (pattern && out.length === 0)
    throw new Fault(404, `Hypervisor with hostname pattern ${pattern} could not be found.`);
  const body: Record<string, unknown> = {
    hypervisors: out.map((h) => hypervisorView(v, h, detail, withServers)),
  };
  const last = out.at(-1);
  if (paged && out.length === limit && last) {
    Object.assign(
      body,
      nextLinks(
        ctx,
        v,
        'hypervisors_links',
        atLeast(v.version, 2, 53) ? last.nodeUuid : String(last.index + 1),
      ),
    );
  }
  sendJson(ctx, 200, body);
}

function listMigrations(ctx: Ctx, v: ViewCtx, cloud: SimCloud): void {
  const q = ctx.query;
  const paged = atLeast(v.version, 2, 59);
  const limit = paged
    ? Math.min(intParam(q.get('limit'), 'limit') ?? NOVA_MAX_LIMIT, NOVA_MAX_LIMIT)
    : Infinity;
  const host = q.get('host');
  const status = q.get('status');
  const instance = q.get('instance_uuid');
  const type = q.get('migration_type');
  const sourceCompute = q.get('source_compute');
  const since = paged ? parseTime(q.get('changes-since'), 'changes-since') : undefined;
  if (paged && !atLeast(v.version, 2, 66) && q.has('changes-before')) {
    throw new Fault(400, "Additional properties are not allowed ('changes-before' was unexpected)");
  }
  const before = atLeast(v.version, 2, 66) ? parseTime(q.get('changes-before'), 'changes-before') : undefined;
  if (since !== undefined && before !== undefined && since > before) {
    throw new Fault(400, 'The value of changes-since must be less than or equal to changes-before.');
  }
  const projectId = atLeast(v.version, 2, 80) ? q.get('project_id') : null;
  const userId = atLeast(v.version, 2, 80) ? q.get('user_id') : null;
  // Newest first (created_at desc, id desc): ids grow with creation time.
  const base = instance !== null ? (cloud.migrationsOfServer.get(instance) ?? []) : cloud.migrations;
  let i = base.length - 1;
  const marker = paged ? q.get('marker') : null;
  if (marker !== null) {
    const m = cloud.migrationsByUuid.get(marker);
    // Nova looks the marker up among rows not deleted.
    if (!m || m.deleted) throw new Fault(400, `Marker ${marker} could not be found.`);
    while (i >= 0 && (base[i] as SimMigration).id >= m.id) i--;
  }
  const out: SimMigration[] = [];
  for (; i >= 0 && out.length < limit; i--) {
    const m = base[i] as SimMigration;
    if (m.deleted) continue;
    if (host !== null && m.source !== host && m.dest !== host) continue;
    if (status !== null && m.status !== status) continue;
    if (type !== null && m.type !== type) continue;
    if (sourceCompute !== null && m.source !== sourceCompute) continue;
    // Nova compares updated_at, which is null until the record is first saved again: a
    // migration the conductor has not picked up yet matches neither filter.
    if ((since !== undefined || before !== undefined) && m.updatedMs === null) continue;
    // The database keeps updated_at in whole seconds (what the API shows): that is what is compared.
    const updated = storedSeconds(m.updatedMs as number);
    if (since !== undefined && updated < since) continue;
    if (before !== undefined && updated > before) continue;
    if (projectId !== null && m.projectId !== projectId) continue;
    if (userId !== null && m.userId !== userId) continue;
    out.push(m);
  }
  const body: Record<string, unknown> = { migrations: out.map((m) => migrationView(v, m)) };
  const last = out.at(-1);
  if (paged && out.length === limit && last)
    Object.assign(body, nextLinks(ctx, v, 'migrations_links', last.uuid));
  sendJson(ctx, 200, body);
}

/** A time as Nova's database stores it (DATETIME without fractions: whole seconds, truncated). */
function storedSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

function parseTime(s: string | null, name: string): number | undefined {
  if (s === null) return undefined;
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`);
  if (!Number.isFinite(t)) {
    throw new Fault(
      400,
      `Invalid input for query parameters ${name}. Value: ${s}. '${s}' is not a 'date-time'`,
    );
  }
  return t;
}

function updateService(ctx: Ctx, v: ViewCtx, cloud: SimCloud, id: string): void {
  const body = isRecord(ctx.body) ? ctx.body : {};
  if (atLeast(v.version, 2, 53)) {
    const h = cloud.hostsByServiceUuid.get(id);
    if (!h) throw new Fault(404, `Service ${id} could not be found.`);
    const status = str(body.status);
    if (status !== undefined && status !== 'enabled' && status !== 'disabled') {
      throw new Fault(
        400,
        `Invalid input for field/attribute status. Value: ${status}. '${status}' is not one of ['enabled', 'disabled']`,
      );
    }
    if (body.disabled_reason !== undefined && status !== 'disabled') {
      throw new Fault(400, 'Specifying a disabled_reason is only allowed when disabling a service.');
    }
    if (status === undefined && body.forced_down === undefined) {
      throw new Fault(
        400,
        "At least one of 'status' or 'forced_down' must be specified in the request body.",
      );
    }
    if (status === 'enabled') setServiceStatus(h, 'enabled', null);
    else if (status === 'disabled') setServiceStatus(h, 'disabled', str(body.disabled_reason) ?? null);
    if (typeof body.forced_down === 'boolean') h.forcedDown = body.forced_down;
    sendJson(ctx, 200, { service: serviceView(v, computeServiceRow(cloud, h)) });
    return;
  }
  // Before 2.53: PUT /os-services/{disable|enable|disable-log-reason|force-down} with host + binary.
  const host = cloud.hostsByName.get(str(body.host) ?? '');
  if (!host || str(body.binary) !== 'nova-compute') {
    throw new Fault(
      404,
      `Service ${str(body.binary) ?? ''} on host ${str(body.host) ?? ''} could not be found.`,
    );
  }
  const out: Record<string, unknown> = { host: host.name, binary: 'nova-compute' };
  if (id === 'enable') {
    setServiceStatus(host, 'enabled', null);
    out.status = 'enabled';
  } else if (id === 'disable' || id === 'disable-log-reason') {
    setServiceStatus(
      host,
      'disabled',
      id === 'disable-log-reason' ? (str(body.disabled_reason) ?? null) : null,
    );
    out.status = 'disabled';
    if (id === 'disable-log-reason') out.disabled_reason = host.disabledReason;
  } else if (id === 'force-down' && atLeast(v.version, 2, 11)) {
    host.forcedDown = body.forced_down === true;
    out.forced_down = host.forcedDown;
  } else {
    throw new Fault(404, 'Unknown action');
  }
  sendJson(ctx, 200, { service: out });
}

function serverAction(ctx: Ctx, v: ViewCtx, cloud: SimCloud, id: string): void {
  const body = isRecord(ctx.body) ? ctx.body : null;
  if (!body) throw new Fault(400, 'The request body is not a JSON object.');
  if ('os-migrateLive' in body) {
    if (!ctx.token?.roles.includes('admin')) {
      throw new Fault(
        403,
        "Policy doesn't allow os_compute_api:os-migrate-server:migrate_live to be performed.",
      );
    }
    const s = visibleServer(ctx, cloud, id);
    const args = isRecord(body['os-migrateLive']) ? body['os-migrateLive'] : null;
    if (!args)
      throw new Fault(
        400,
        "Invalid input for field/attribute os-migrateLive. Value: None. None is not of type 'object'",
      );
    validateLiveMigrateArgs(v.version, args);
    const host = args.host === null || args.host === undefined ? null : str(args.host);
    if (host === undefined)
      throw new Fault(400, `Invalid input for field/attribute host. Value: ${String(args.host)}.`);
    startLiveMigration(cloud, {
      serverUuid: s.uuid,
      host,
      userId: ctx.token.userId,
      synchronousChecks: !atLeast(
        v.version,
        ASYNC_LIVE_MIGRATE_CHECKS.major,
        ASYNC_LIVE_MIGRATE_CHECKS.minor,
      ),
    });
    sendEmpty(ctx, 202, { 'Content-Type': 'application/json' });
    return;
  }
  if ('migrate' in body) {
    if (!ctx.token?.roles.includes('admin'))
      throw new Fault(403, "Policy doesn't allow os_compute_api:os-migrate-server:migrate to be performed.");
    const s = visibleServer(ctx, cloud, id);
    const args = body.migrate;
    let host: string | null = null;
    if (args !== null) {
      // A host to go to from 2.56; before, the body is {"migrate": null}.
      if (!atLeast(v.version, 2, 56) || !isRecord(args))
        throw new Fault(400, `Invalid input for field/attribute migrate. Value: ${JSON.stringify(args)}.`);
      for (const k of Object.keys(args))
        if (k !== 'host')
          throw new Fault(
            400,
            `Invalid input for field/attribute migrate. Value: ${JSON.stringify(args)}. Additional properties are not allowed ('${k}' was unexpected)`,
          );
      const h = args.host === null || args.host === undefined ? null : str(args.host);
      if (h === undefined)
        throw new Fault(400, `Invalid input for field/attribute host. Value: ${String(args.host)}.`);
      host = h;
    }
    startColdMigration(cloud, { serverUuid: s.uuid, host, userId: ctx.token.userId });
    sendEmpty(ctx, 202, { 'Content-Type': 'application/json' });
    return;
  }
  if ('confirmResize' in body) {
    confirmResize(cloud, visibleServer(ctx, cloud, id).uuid);
    sendEmpty(ctx, 204);
    return;
  }
  if ('pause' in body || 'unpause' in body) {
    const action = 'pause' in body ? 'pause' : 'unpause';
    pauseOrUnpause(cloud, visibleServer(ctx, cloud, id), action);
    sendEmpty(ctx, 202, { 'Content-Type': 'application/json' });
    return;
  }
  const action = Object.keys(body)[0] ?? '';
  throw new Fault(400, `There is no such action: ${action}`);
}

function validateLiveMigrateArgs(version: Version, args: Record<string, unknown>): void {
  const allowed = new Set(['host', 'block_migration']);
  if (!atLeast(version, 2, 25)) allowed.add('disk_over_commit');
  if (atLeast(version, 2, 30) && !atLeast(version, 2, 68)) allowed.add('force');
  for (const k of Object.keys(args)) {
    if (!allowed.has(k)) {
      throw new Fault(
        400,
        `Invalid input for field/attribute os-migrateLive. Value: ${JSON.stringify(args)}. Additional properties are not allowed ('${k}' was unexpected)`,
      );
    }
  }
  if (!('block_migration' in args) || !('host' in args)) {
    throw new Fault(
      400,
      `Invalid input for field/attribute os-migrateLive. Value: ${JSON.stringify(args)}. 'block_migration' is a required property`,
    );
  }
  const bm = args.block_migration;
  const bmOk = typeof bm === 'boolean' || (atLeast(version, 2, 25) && bm === 'auto');
  if (!bmOk) {
    throw new Fault(400, `Invalid input for field/attribute block_migration. Value: ${String(bm)}.`);
  }
  if (args.force === true) {
    // Forcing skips the scheduler; Aicerine never forces, and the simulator does not model it.
    throw new Fault(400, 'The simulator does not support forced live migration (force=true).');
  }
}
