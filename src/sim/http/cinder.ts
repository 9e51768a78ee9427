// A small Cinder v3 (block-storage): volumes and their snapshots, listed, shown, created and
// deleted as cinder-api does it, awkward parts included: `all_tenants` and `project_id` mean
// something only to admins and only together, an unknown filter matches nothing, lists stop at
// `osapi_max_limit` with a `volumes_links` next, a delete is refused with one message for
// every precondition and takes time to finish.
import type { CinderCaller, SimVolume, SimVolumeSnapshot } from '../cinder-state.js';
import { novaTime } from '../clock.js';
import { type SimCloud, SimError } from '../model.js';
import { atLeast, fmt, requestedVersion, type Version, type VersionRange } from './microversion.js';
import { type Ctx, isRecord, type Route, route, sendEmpty, sendJson, wsgiFault } from './respond.js';

export const CINDER_PREFIX = '/volume';
export const CINDER_VERSIONS: VersionRange = { min: [3, 0], max: [3, 71] };

export function cinderFault(ctx: Ctx, code: number, message: string): void {
  sendJson(ctx, code, wsgiFault(code, message));
}

/** Filters a non-admin may use (cinder's default resource_filters.json). */
const USER_VOLUME_FILTERS = new Set([
  'name',
  'status',
  'metadata',
  'bootable',
  'migration_status',
  'availability_zone',
  'group_id',
  'size',
  'created_at',
  'updated_at',
  'consumes_quota',
]);
/** Filters that arrived with a microversion: before it, cinder drops them unseen. */
const LATER_VOLUME_FILTERS: readonly [string, Version][] = [
  ['glance_metadata', [3, 4]],
  ['group_id', [3, 10]],
  ['created_at', [3, 60]],
  ['updated_at', [3, 60]],
  ['consumes_quota', [3, 65]],
];
/** Volume columns cinder filters on that the simulator does not model: refused, not faked. */
const UNMODELLED_VOLUME_FILTERS = new Set([
  'metadata',
  'glance_metadata',
  'migration_status',
  'group_id',
  'created_at',
  'updated_at',
  'consumes_quota',
  'use_quota',
  'host',
  'cluster_name',
  'attach_status',
  'volume_type_id',
  'snapshot_id',
  'source_volid',
  'multiattach',
  'replication_status',
  'consistencygroup_id',
]);
const SORT_PARAMS = ['sort', 'sort_key', 'sort_dir'];

const TRUE = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE = ['0', 'f', 'false', 'off', 'n', 'no'];

/** oslo's strict bool_from_string, as cinder's get_bool_param uses it. */
function boolParam(name: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  throw new SimError(400, `Value '${value}' for '${name}' is not a boolean.`);
}

interface Page<T> {
  limit: number;
  marker: string | undefined;
  offset: number;
  items: T[];
}

/** limit (capped at osapi_max_limit), marker and offset as cinder's get_pagination_params reads them. */
function pagination(params: Map<string, string>, maxLimit: number): Omit<Page<never>, 'items'> {
  const rawLimit = params.get('limit');
  params.delete('limit');
  let limit = maxLimit;
  if (rawLimit !== undefined) {
    if (!/^\s*[+-]?\d+\s*$/.test(rawLimit)) throw new SimError(400, 'limit param must be an integer');
    limit = Number(rawLimit);
    if (limit < 0) throw new SimError(400, 'limit param must be positive');
  }
  const marker = params.get('marker');
  params.delete('marker');
  const rawOffset = params.get('offset');
  params.delete('offset');
  let offset = 0;
  if (rawOffset !== undefined) {
    if (!/^\s*[+-]?\d+\s*$/.test(rawOffset)) throw new SimError(400, 'offset must be an integer.');
    offset = Number(rawOffset);
    if (offset < 0) throw new SimError(400, 'offset must be >= 0.');
  }
  for (const p of SORT_PARAMS)
    if (params.has(p))
      throw new SimError(
        400,
        `${p}=${params.get(p)}: the simulator lists only in cinder's default order (created_at, id descending)`,
      );
  return { limit: Math.min(limit, maxLimit), marker, offset };
}

/** The page after `marker` (which must exist for the caller, as cinder looks it up first). */
function pageOf<T extends { id: string }>(
  all: readonly T[],
  matching: readonly T[],
  p: Omit<Page<T>, 'items'>,
  notFound: (id: string) => string,
): T[] {
  let from = 0;
  if (p.marker !== undefined) {
    const at = all.findIndex((x) => x.id === p.marker);
    if (at < 0) throw new SimError(404, notFound(p.marker));
    const after = new Set(all.slice(at + 1));
    from = matching.findIndex((x) => after.has(x));
    if (from < 0) from = matching.length;
  }
  return matching.slice(from + p.offset, from + p.offset + p.limit);
}

export function cinderRoutes(cloud: SimCloud): Route[] {
  const cinder = cloud.cinder;
  type Handler = (ctx: Ctx, v: Version, caller: CinderCaller, params: string[], inUrl: string | null) => void;

  // Every path is served with and without the project id (optional in URLs since 3.67, and
  // cinder routes both); the catalog gives it, so clients send it.
  const both = (method: string, path: string, h: Handler): Route[] => [
    route(method, `/v3${path}`, (ctx, params) => serve(ctx, params, null, h)),
    route(method, `/v3/{project_id}${path}`, (ctx, [project, ...params]) =>
      serve(ctx, params, project as string, h),
    ),
  ];

  const serve = (ctx: Ctx, params: string[], inUrl: string | null, h: Handler): void => {
    const neg = requestedVersion(
      CINDER_VERSIONS,
      'volume',
      ctx.req.headers['openstack-api-version'] as string | undefined,
      undefined,
    );
    if (!neg.ok) {
      cinderFault(ctx, neg.status, neg.message);
      return;
    }
    Object.assign(ctx.headers, {
      'OpenStack-API-Version': `volume ${fmt(neg.version)}`,
      Vary: 'OpenStack-API-Version',
    });
    const token = ctx.token as NonNullable<Ctx['token']>;
    if (inUrl !== null && inUrl !== token.projectId) {
      cinderFault(ctx, 400, 'Malformed request url');
      return;
    }
    const caller: CinderCaller = { projectId: token.projectId, admin: token.roles.includes('admin') };
    cloud.sync();
    try {
      h(ctx, neg.version, caller, params, inUrl);
    } catch (e) {
      if (!(e instanceof SimError)) throw e;
      cinderFault(ctx, e.status, e.message);
    }
  };

  const links = (ctx: Ctx, inUrl: string | null, collection: string, id: string) => {
    const project = inUrl === null ? '' : `/${inUrl}`;
    return [
      { rel: 'self', href: `${ctx.origin}${CINDER_PREFIX}/v3${project}/${collection}/${id}` },
      { rel: 'bookmark', href: `${ctx.origin}${CINDER_PREFIX}${project}/${collection}/${id}` },
    ];
  };

  /** cinder's next link: the request's own query with the last item as marker, when the page is full. */
  const nextLink = (ctx: Ctx, inUrl: string | null, collection: string, page: Page<{ id: string }>) => {
    const last = page.items.at(-1);
    if (last === undefined || page.items.length < page.limit) return undefined;
    const q = new URLSearchParams(ctx.query);
    q.set('marker', last.id);
    const project = inUrl === null ? '' : `/${inUrl}`;
    return [
      { rel: 'next', href: `${ctx.origin}${CINDER_PREFIX}/v3${project}/${collection}?${q.toString()}` },
    ];
  };

  const volumeView = (
    ctx: Ctx,
    v: Version,
    caller: CinderCaller,
    inUrl: string | null,
    vol: SimVolume,
  ): Record<string, unknown> => {
    const out: Record<string, unknown> = {
      id: vol.id,
      status: vol.status,
      size: vol.sizeGB,
      availability_zone: 'nova',
      created_at: novaTime(vol.createdMs),
      updated_at: novaTime(vol.updatedMs),
      name: vol.name,
      description: vol.description,
      volume_type: '__DEFAULT__',
      snapshot_id: null,
      source_volid: null,
      metadata: { ...vol.metadata },
      links: links(ctx, inUrl, 'volumes', vol.id),
      user_id: vol.userId,
      bootable: String(vol.bootable),
      encrypted: false,
      replication_status: null,
      consistencygroup_id: null,
      multiattach: false,
      // cinder shows only attachments still attached (a detaching volume keeps its own).
      attachments: vol.attachments.map((a) => ({
        id: vol.id,
        attachment_id: a.id,
        volume_id: vol.id,
        server_id: a.serverId,
        host_name: caller.admin ? a.hostName : null,
        device: a.device,
        attached_at: novaTime(a.attachedMs),
      })),
      'os-vol-tenant-attr:tenant_id': vol.projectId,
    };
    if (caller.admin) {
      out.migration_status = null;
      out['os-vol-host-attr:host'] = 'controller@lvmdriver-1#lvmdriver-1';
      out['os-vol-mig-status-attr:migstat'] = null;
      out['os-vol-mig-status-attr:name_id'] = null;
    }
    if (atLeast(v, 3, 13)) out.group_id = null;
    if (atLeast(v, 3, 48)) {
      out.shared_targets = false;
      out.service_uuid = null;
    }
    if (atLeast(v, 3, 63)) out.volume_type_id = '00000000-0000-4000-8000-00000000de7a';
    if (atLeast(v, 3, 65)) out.consumes_quota = true;
    return out;
  };

  const snapshotView = (v: Version, caller: CinderCaller, s: SimVolumeSnapshot): Record<string, unknown> => {
    const out: Record<string, unknown> = {
      id: s.id,
      created_at: novaTime(s.createdMs),
      updated_at: novaTime(s.updatedMs),
      name: s.name,
      description: s.description,
      volume_id: s.volumeId,
      status: s.status,
      size: s.sizeGB,
      metadata: {},
    };
    if (caller.admin || caller.projectId === s.projectId) {
      out['os-extended-snapshot-attributes:project_id'] = s.projectId;
      out['os-extended-snapshot-attributes:progress'] = s.status === 'available' ? '100%' : '0%';
    }
    if (atLeast(v, 3, 14)) out.group_snapshot_id = null;
    if (atLeast(v, 3, 41)) out.user_id = s.userId;
    if (atLeast(v, 3, 65)) out.consumes_quota = true;
    return out;
  };

  /**
   * cinder's volume filtering: a non-admin's unknown filters are dropped (before 3.31) or
   * refused (from 3.31, except all_tenants); an admin's `all_tenants` widens the list to every
   * project and only then does `project_id` select one (without it, cinder overwrites
   * `project_id` with the caller's); any other key that is not a volume column matches nothing.
   */
  const volumesMatching = (v: Version, caller: CinderCaller, filters: Map<string, string>): SimVolume[] => {
    for (const [key, since] of LATER_VOLUME_FILTERS) if (!atLeast(v, since[0], since[1])) filters.delete(key);
    if (!caller.admin) {
      const unknown = [...filters.keys()].filter((k) => !USER_VOLUME_FILTERS.has(k));
      if (atLeast(v, 3, 31)) {
        filters.delete('all_tenants');
        const invalid = unknown.filter((k) => k !== 'all_tenants');
        if (invalid.length > 0)
          throw new SimError(400, `Invalid filters ${invalid.join(',')} are found in query options.`);
      } else for (const k of unknown) filters.delete(k);
    }
    let all = false;
    if (caller.admin && boolParam('all_tenants', filters.get('all_tenants'))) {
      all = true;
      filters.delete('all_tenants');
    }
    if (!all) filters.set('project_id', caller.projectId);
    for (const k of filters.keys())
      if (UNMODELLED_VOLUME_FILTERS.has(k))
        throw new SimError(400, `${k}=${filters.get(k)}: the simulator does not filter volumes by ${k}`);
    const tests: ((vol: SimVolume) => boolean)[] = [];
    for (const [k, val] of filters) {
      switch (k) {
        case 'name':
          tests.push((vol) => vol.name === val);
          break;
        case 'status':
          tests.push((vol) => vol.status === val);
          break;
        case 'project_id':
          tests.push((vol) => vol.projectId === val);
          break;
        case 'user_id':
          tests.push((vol) => vol.userId === val);
          break;
        case 'id':
          tests.push((vol) => vol.id === val);
          break;
        case 'availability_zone':
          tests.push(() => val === 'nova');
          break;
        case 'size':
          tests.push((vol) => String(vol.sizeGB) === val.trim());
          break;
        case 'bootable': {
          const want = boolParam('bootable', val);
          tests.push((vol) => vol.bootable === want);
          break;
        }
        default:
          // Not a volume column: cinder's query builder gives up and the list is empty.
          return [];
      }
    }
    return cinder.volumes.filter((vol) => tests.every((t) => t(vol)));
  };

  const listVolumes =
    (detail: boolean): Handler =>
    (ctx, v, caller, _params, inUrl) => {
      const params = new Map(ctx.query);
      const p = pagination(params, cinder.maxLimit);
      let withCount = false;
      if (atLeast(v, 3, 45) && params.has('with_count')) {
        withCount = boolParam('with_count', params.get('with_count'));
        params.delete('with_count');
      }
      const matching = volumesMatching(v, caller, params);
      const visible = caller.admin
        ? cinder.volumes
        : cinder.volumes.filter((x) => x.projectId === caller.projectId);
      const items = pageOf(visible, matching, p, (id) => `Volume ${id} could not be found.`);
      const body: Record<string, unknown> = {
        volumes: items.map((vol) =>
          detail
            ? volumeView(ctx, v, caller, inUrl, vol)
            : { id: vol.id, name: vol.name, links: links(ctx, inUrl, 'volumes', vol.id) },
        ),
      };
      const next = nextLink(ctx, inUrl, detail ? 'volumes/detail' : 'volumes', { ...p, items });
      if (next) body.volumes_links = next;
      if (withCount) body.count = matching.length;
      sendJson(ctx, 200, body);
    };

  const listSnapshots =
    (detail: boolean): Handler =>
    (ctx, v, caller, _params, inUrl) => {
      const params = new Map(ctx.query);
      const p = pagination(params, cinder.maxLimit);
      const all = caller.admin && boolParam('all_tenants', params.get('all_tenants'));
      params.delete('all_tenants');
      const tests: ((s: SimVolumeSnapshot) => boolean)[] = [(s) => all || s.projectId === caller.projectId];
      for (const [k, val] of params) {
        if (k === 'name') tests.push((s) => s.name === val);
        else if (k === 'status') tests.push((s) => s.status === val);
        else if (k === 'volume_id') tests.push((s) => s.volumeId === val);
        else if (k === 'project_id') tests.push((s) => !all || s.projectId === val);
        else throw new SimError(400, `${k}=${val}: the simulator does not filter snapshots by ${k}`);
      }
      const matching = cinder.snapshots.filter((s) => tests.every((t) => t(s)));
      const visible = caller.admin
        ? cinder.snapshots
        : cinder.snapshots.filter((s) => s.projectId === caller.projectId);
      const items = pageOf(visible, matching, p, (id) => `Snapshot ${id} could not be found.`);
      const body: Record<string, unknown> = { snapshots: items.map((s) => snapshotView(v, caller, s)) };
      const next = nextLink(ctx, inUrl, detail ? 'snapshots/detail' : 'snapshots', { ...p, items });
      if (next) body.snapshots_links = next;
      sendJson(ctx, 200, body);
    };

  const createVolume: Handler = (ctx, v, caller, _params, inUrl) => {
    const body = isRecord(ctx.body) ? ctx.body : null;
    const req = body && isRecord(body.volume) ? body.volume : null;
    if (req === null)
      throw new SimError(400, "Invalid input for field/attribute volume. 'volume' is a required property");
    const size = req.size;
    if (size === undefined || size === null)
      throw new SimError(
        400,
        "Invalid input received: Volume size 'None' must be an integer and greater than 0",
      );
    const n = typeof size === 'string' && /^[0-9]+$/.test(size) ? Number(size) : size;
    if (typeof n !== 'number' || !Number.isInteger(n))
      throw new SimError(
        400,
        `Invalid input for field/attribute size. Value: ${JSON.stringify(size)}. ${JSON.stringify(size)} is not valid under any of the given schemas`,
      );
    if (n < 1)
      throw new SimError(
        400,
        `Invalid input for field/attribute size. Value: ${n}. ${n} is less than the minimum of 1`,
      );
    const text = (k: string): string | null => {
      const x = req[k];
      if (x === undefined || x === null) return null;
      if (typeof x !== 'string')
        throw new SimError(
          400,
          `Invalid input for field/attribute ${k}. Value: ${JSON.stringify(x)}. ${JSON.stringify(x)} is not of type 'string', 'null'`,
        );
      return x.trim();
    };
    const metadata = req.metadata ?? {};
    if (!isRecord(metadata) || Object.values(metadata).some((x) => typeof x !== 'string'))
      throw new SimError(
        400,
        `Invalid input for field/attribute metadata. Value: ${JSON.stringify(metadata)}. expected an object of strings`,
      );
    const vol = cinder.createVolume(
      {
        name: text('name') ?? text('display_name') ?? '',
        description: text('description') ?? text('display_description'),
        projectId: caller.projectId,
        userId: ctx.token?.userId ?? caller.projectId,
        sizeGB: n,
        metadata: metadata as Record<string, string>,
      },
      true,
    );
    sendJson(ctx, 202, { volume: volumeView(ctx, v, caller, inUrl, vol) });
  };

  return [
    route('GET', '', (ctx) =>
      sendJson(ctx, 300, { versions: [versionDoc(ctx)] }, { Location: `${ctx.origin}${CINDER_PREFIX}/v3/` }),
    ),
    route('GET', '/v3', (ctx) => sendJson(ctx, 200, { versions: [versionDoc(ctx)] })),
    ...both('GET', '/volumes/detail', listVolumes(true)),
    ...both('GET', '/volumes', listVolumes(false)),
    ...both('POST', '/volumes', createVolume),
    ...both('GET', '/volumes/{id}', (ctx, v, caller, [id], inUrl) => {
      const vol = cinder.visibleVolume(id as string, caller);
      sendJson(ctx, 200, { volume: volumeView(ctx, v, caller, inUrl, vol) });
    }),
    ...both('DELETE', '/volumes/{id}', (ctx, _v, caller, [id]) => {
      // `force` (3.23) needs the force-delete policy and skips the status checks; not modelled.
      if (ctx.query.has('force') && boolParam('force', ctx.query.get('force') ?? undefined))
        throw new SimError(
          400,
          `force=${ctx.query.get('force')}: the simulator does not force-delete volumes`,
        );
      cinder.deleteVolume(id as string, caller, boolParam('cascade', ctx.query.get('cascade') ?? undefined));
      sendEmpty(ctx, 202);
    }),
    ...both('GET', '/snapshots/detail', listSnapshots(true)),
    ...both('GET', '/snapshots', listSnapshots(false)),
    ...both('GET', '/snapshots/{id}', (ctx, v, caller, [id]) => {
      const s = cinder.snapshotsById.get(id as string);
      if (!s || (!caller.admin && s.projectId !== caller.projectId))
        throw new SimError(404, `Snapshot ${id} could not be found.`);
      sendJson(ctx, 200, { snapshot: snapshotView(v, caller, s) });
    }),
  ];
}

function versionDoc(ctx: Ctx): Record<string, unknown> {
  return {
    id: 'v3.0',
    status: 'CURRENT',
    version: fmt(CINDER_VERSIONS.max),
    min_version: fmt(CINDER_VERSIONS.min),
    updated: '2023-08-31T00:00:00Z',
    links: [
      { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
      { rel: 'self', href: `${ctx.origin}${CINDER_PREFIX}/v3/` },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
  };
}
