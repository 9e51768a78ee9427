// purge-project {project, dryRun?}: lists, then deletes, what a project owns that Aicerine's
// (actuator) credential reaches: servers, server groups, keypairs of users who belong to this
// project only, images it owns, volumes and ports — each where its service is in the catalog.
// Dependency order: servers first (waiting until they are gone, which frees their ports and
// makes Nova detach their volumes), then ports, volumes (each retried until Cinder takes it, as
// a detach or Nova's own delete may still be under way), server groups, keypairs, images. The inventory is taken once
// and checkpointed; a dry run returns exactly that inventory; a resumed run skips what it
// already deleted, and something already gone (404) counts as deleted.
import { isCloudError } from '../../cloud/errors.js';
import { openstackMessage } from '../../cloud/http/service-client.js';
import { listWithMarker } from '../../cloud/openstack/paging.js';
import type { CloudSession } from '../../cloud/session.js';
import type { JsonValue } from '../../store/json.js';
import type { JsonObject, TaskContext, TaskHandler } from '../types.js';
import { requireTasksSession, TaskRequestError } from '../types.js';
import { ArgsReader } from './args.js';

export interface PurgeArgs {
  project: string;
  dryRun: boolean;
}

export const PURGE_ORDER = ['server', 'port', 'volume', 'server-group', 'keypair', 'image'] as const;
export type PurgeKind = (typeof PURGE_ORDER)[number];

export interface PurgeItem {
  kind: PurgeKind;
  id: string;
  name: string;
  /** Keypairs: the user they belong to. */
  userId?: string;
}

export interface PurgeCheckpoint {
  projectId: string;
  inventory: PurgeItem[];
  /** What was left alone and why (a port of a router, a protected image, a service absent). */
  skipped: { what: string; why: string }[];
  /** `kind:id` of what is deleted. */
  deleted: string[];
}

/** What a purge did, or a dry run would do (the task's result; the dashboard reads it). */
export type PurgeResult =
  | { projectId: string; dryRun: true; wouldDelete: PurgeItem[]; skipped: PurgeCheckpoint['skipped'] }
  | { projectId: string; dryRun: false; deleted: PurgeItem[]; skipped: PurgeCheckpoint['skipped'] };

type Rec = Record<string, unknown>;
const str = (r: Rec, k: string): string => (typeof r[k] === 'string' ? (r[k] as string) : '');
const recs = (v: unknown): Rec[] =>
  Array.isArray(v) ? v.filter((x): x is Rec => x !== null && typeof x === 'object') : [];

/** A catalog service, or null (with why) when the catalog has none. */
async function serviceOf(session: CloudSession, ...types: string[]) {
  for (const t of types) {
    const client = session.service(t);
    try {
      await client.endpoint();
      return client;
    } catch (e) {
      if (!isCloudError(e, 'catalog')) throw e;
    }
  }
  return null;
}

/** Keystone paths below the catalog's identity endpoint, which may or may not end in /v3. */
async function identityPath(session: CloudSession, path: string): Promise<string> {
  const base = await session.service('identity').endpoint();
  return /\/v3\/?$/.test(base) ? path : `/v3${path}`;
}

/** A refusal about the `project` argument, naming it. */
function refusal(status: 404 | 409, message: string, value: string): TaskRequestError {
  return new TaskRequestError(status, `project: ${message}`, [{ path: 'project', message, value }]);
}

async function resolveProject(
  session: CloudSession,
  ref: string,
): Promise<{ id: string; name: string } | null> {
  const identity = session.service('identity');
  const byId = await identity.request({
    method: 'GET',
    path: await identityPath(session, `/projects/${encodeURIComponent(ref)}`),
    accept: [404],
  });
  if (byId.status === 200) {
    const p = (byId.body as Rec).project as Rec;
    return { id: str(p, 'id'), name: str(p, 'name') };
  }
  const byName = await identity.get<Rec>(await identityPath(session, '/projects'), { name: ref });
  const found = recs(byName.projects);
  if (found.length > 1) throw refusal(409, `${found.length} projects are named ${ref}: give its id`, ref);
  const p = found[0];
  return p ? { id: str(p, 'id'), name: str(p, 'name') } : null;
}

async function inventory(
  session: CloudSession,
  projectId: string,
): Promise<Omit<PurgeCheckpoint, 'deleted'>> {
  const items: PurgeItem[] = [];
  const skipped: PurgeCheckpoint['skipped'] = [];
  const compute = session.service('compute');
  const headers = await session.nova.headers();
  const get = async (path: string, query?: Record<string, string | number>) =>
    (await compute.request({ method: 'GET', path, headers, ...(query ? { query } : {}) })).body;
  const servers = await listWithMarker(
    (p, q) => get(p, q as Record<string, string | number>),
    '/servers',
    'servers',
    {
      all_tenants: 1,
      project_id: projectId,
    },
  );
  for (const s of recs(servers)) items.push({ kind: 'server', id: str(s, 'id'), name: str(s, 'name') });
  for (const g of await session.nova.listServerGroups(true))
    if (g.projectId === projectId) items.push({ kind: 'server-group', id: g.id, name: g.name });

  // Keypairs belong to users: only users with a role in this project and no other are purged.
  const identity = session.service('identity');
  const assignments = recs(
    (
      await identity.get<Rec>(await identityPath(session, '/role_assignments'), {
        'scope.project.id': projectId,
      })
    ).role_assignments,
  );
  const users = [
    ...new Set(assignments.map((a) => str((a.user ?? {}) as Rec, 'id')).filter((u) => u !== '')),
  ].sort();
  for (const user of users) {
    const all = recs(
      (await identity.get<Rec>(await identityPath(session, '/role_assignments'), { 'user.id': user }))
        .role_assignments,
    );
    const projects = new Set(all.map((a) => str((((a.scope ?? {}) as Rec).project as Rec) ?? {}, 'id')));
    if ([...projects].some((p) => p !== projectId)) {
      skipped.push({ what: `keypairs of user ${user}`, why: 'the user has roles in other projects too' });
      continue;
    }
    const kps = recs(((await get('/os-keypairs', { user_id: user })) as Rec).keypairs);
    for (const k of kps) {
      const kp = (k.keypair ?? {}) as Rec;
      items.push({ kind: 'keypair', id: str(kp, 'name'), name: str(kp, 'name'), userId: user });
    }
  }

  const network = await serviceOf(session, 'network');
  if (network === null) skipped.push({ what: 'ports', why: 'no network service in the catalog' });
  else
    for (const p of recs((await network.get<Rec>('/v2.0/ports', { project_id: projectId })).ports)) {
      const owner = str(p, 'device_owner');
      // Router interfaces, DHCP and gateway ports go with their networks and routers.
      if (owner.startsWith('network:'))
        skipped.push({ what: `port ${str(p, 'id')}`, why: `owned by ${owner}` });
      else items.push({ kind: 'port', id: str(p, 'id'), name: str(p, 'name') });
    }

  const volume = await serviceOf(session, 'block-storage', 'volumev3');
  if (volume === null) skipped.push({ what: 'volumes', why: 'no block-storage service in the catalog' });
  else {
    // Cinder honours project_id only for an admin and only with all_tenants; otherwise it answers
    // the caller's own project. Its answer is paged (osapi_max_limit), and only the detailed view
    // says whose each volume is and where it is attached.
    const purged = new Set(items.filter((i) => i.kind === 'server').map((i) => i.id));
    let foreign = 0;
    const listed = await listWithMarker((p, q) => volume.get(p, q), '/volumes/detail', 'volumes', {
      all_tenants: 1,
      project_id: projectId,
    });
    for (const v of recs(listed)) {
      if (str(v, 'os-vol-tenant-attr:tenant_id') !== projectId) {
        foreign++;
        continue;
      }
      const elsewhere = recs(v.attachments)
        .map((a) => str(a, 'server_id'))
        .filter((s) => !purged.has(s));
      if (elsewhere.length > 0)
        skipped.push({
          what: `volume ${str(v, 'id')}`,
          why: `attached to server ${elsewhere.join(', ')}, which this purge does not delete`,
        });
      else items.push({ kind: 'volume', id: str(v, 'id'), name: str(v, 'name') });
    }
    if (foreign > 0)
      skipped.push({
        what: 'volumes',
        why: `the block-storage service ignored the project filter (it answered ${foreign} volume(s) not shown as the project's): the credential needs Cinder's admin role; none of them is deleted`,
      });
  }

  const image = await serviceOf(session, 'image');
  if (image === null) skipped.push({ what: 'images', why: 'no image service in the catalog' });
  else
    for (const i of recs((await image.get<Rec>('/v2/images', { owner: projectId, limit: 1000 })).images)) {
      if (i.protected === true) skipped.push({ what: `image ${str(i, 'id')}`, why: 'protected' });
      else items.push({ kind: 'image', id: str(i, 'id'), name: str(i, 'name') });
    }
  items.sort((a, b) => PURGE_ORDER.indexOf(a.kind) - PURGE_ORDER.indexOf(b.kind) || (a.id < b.id ? -1 : 1));
  return { projectId, inventory: items, skipped };
}

/**
 * Deletes a volume with its snapshots once Cinder takes it: after its server's deletion the
 * volume may still be attached or detaching, and one Nova deletes itself (delete_on_termination)
 * is `deleting`; Cinder refuses both with a 400, so the refusal is waited out until the volume
 * is deletable or gone, up to the deadline. `error_deleting` never changes without force.
 */
async function removeVolume(
  ctx: TaskContext<PurgeArgs, PurgeCheckpoint>,
  client: ReturnType<CloudSession['service']>,
  id: string,
  pollMs: number,
  timeoutMs: number,
): Promise<void> {
  const end = ctx.clock.now() + timeoutMs;
  for (;;) {
    ctx.signal.throwIfAborted();
    const del = await client.request({
      method: 'DELETE',
      path: `/volumes/${id}`,
      query: { cascade: 'true' },
      accept: [400, 404],
    });
    if (del.status !== 400) return;
    const res = await client.request({ method: 'GET', path: `/volumes/${id}`, accept: [404] });
    if (res.status === 404) return;
    const status = str(((res.body as Rec).volume ?? {}) as Rec, 'status');
    if (status === 'error_deleting')
      throw new Error(
        `volume ${id} is error_deleting: Cinder refuses to delete it again without force (an admin's \`openstack volume delete --force\`)`,
      );
    if (ctx.clock.now() > end)
      throw new Error(
        `volume ${id} is still ${status} after ${Math.round(timeoutMs / 1000)} s; Cinder: ${openstackMessage(del.body) ?? 'no message'}`,
      );
    // Refused while available: a snapshot is still busy (creating), which passes too.
    await ctx.clock.sleep(pollMs);
  }
}

async function remove(
  ctx: TaskContext<PurgeArgs, PurgeCheckpoint>,
  session: CloudSession,
  item: PurgeItem,
  wait: { pollMs: number; timeoutMs: number },
): Promise<void> {
  const del = async (
    client: ReturnType<CloudSession['service']> | null,
    path: string,
    headers?: Record<string, string>,
    query?: Record<string, string>,
  ) => {
    if (client === null) throw new Error(`no service for ${item.kind} ${item.id}`);
    await client.request({
      method: 'DELETE',
      path,
      accept: [404],
      ...(headers ? { headers } : {}),
      ...(query ? { query } : {}),
    });
  };
  const nova = session.service('compute');
  const h = await session.nova.headers();
  switch (item.kind) {
    case 'server':
      return del(nova, `/servers/${item.id}`, h);
    case 'server-group':
      return del(nova, `/os-server-groups/${item.id}`, h);
    case 'keypair':
      return del(nova, `/os-keypairs/${encodeURIComponent(item.id)}`, h, { user_id: item.userId ?? '' });
    case 'port':
      return del(await serviceOf(session, 'network'), `/v2.0/ports/${item.id}`);
    case 'volume': {
      const cinder = await serviceOf(session, 'block-storage', 'volumev3');
      if (cinder === null) throw new Error(`no service for volume ${item.id}`);
      return removeVolume(ctx, cinder, item.id, wait.pollMs, wait.timeoutMs);
    }
    case 'image':
      return del(await serviceOf(session, 'image'), `/v2/images/${item.id}`);
  }
}

/** Waits until deleted servers are gone (their ports and volumes are released then). */
async function waitGone(
  ctx: TaskContext<PurgeArgs, PurgeCheckpoint>,
  ids: string[],
  pollMs: number,
  timeoutMs: number,
) {
  const compute = requireTasksSession(ctx, 'purge-project').service('compute');
  const headers = await requireTasksSession(ctx, 'purge-project').nova.headers();
  const end = ctx.clock.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      ctx.signal.throwIfAborted();
      const res = await compute.request({ method: 'GET', path: `/servers/${id}`, headers, accept: [404] });
      if (res.status === 404) break;
      const status = str(((res.body as Rec).server ?? {}) as Rec, 'status');
      if (status === 'DELETED' || status === 'SOFT_DELETED') break;
      if (ctx.clock.now() > end)
        throw new Error(`server ${id} still exists (${status}) after ${Math.round(timeoutMs / 1000)} s`);
      await ctx.clock.sleep(pollMs);
    }
  }
}

export function purgeProjectHandler(
  opts: { pollMs?: number; timeoutMs?: number } = {},
): TaskHandler<PurgeArgs & { projectId?: string; projectName?: string }, PurgeCheckpoint> {
  const pollMs = opts.pollMs ?? 2_000;
  const timeoutMs = opts.timeoutMs ?? 600_000;
  return {
    kind: 'purge-project',
    description:
      'delete what a project owns (servers, groups, keypairs, images, volumes, ports); dryRun lists it',

    parse(raw) {
      const r = new ArgsReader(raw, ['project', 'dryRun', 'projectId', 'projectName']);
      const project = r.projectRef('project');
      const dryRun = r.bool('dryRun', false);
      r.done();
      return { project: project as string, dryRun };
    },

    async preflight(args, ctx) {
      const project = await resolveProject(requireTasksSession(ctx, 'purge-project'), args.project);
      if (project === null) throw refusal(404, `no project ${args.project}`, args.project);
      const own = await requireTasksSession(ctx, 'purge-project').token();
      if (own.projectId === project.id)
        throw refusal(409, `${project.name} is the project Aicerine's own credential works in`, args.project);
      const busy = (await ctx.unfinished()).find(
        (t) => t.kind === 'purge-project' && t.args.projectId === project.id && t.args.dryRun !== true,
      );
      if (busy !== undefined && !args.dryRun)
        throw refusal(409, `${project.name} is already being purged by task ${busy.id}`, args.project);
      const stored: JsonObject = {
        project: args.project,
        projectId: project.id,
        projectName: project.name,
        dryRun: args.dryRun,
      };
      return [{ kind: 'purge-project', args: stored, hosts: [] }];
    },

    async run(ctx) {
      const projectId = ctx.args.projectId ?? ctx.args.project;
      let cp = ctx.checkpoint.load();
      if (cp === null) {
        cp = { ...(await inventory(requireTasksSession(ctx, 'purge-project'), projectId)), deleted: [] };
        await ctx.checkpoint.save(cp);
      }
      const listed = JSON.parse(JSON.stringify(cp.inventory)) as JsonValue[];
      const skipped = JSON.parse(JSON.stringify(cp.skipped)) as JsonValue[];
      if (ctx.args.dryRun) {
        await ctx.progress({
          done: 0,
          total: listed.length,
          detail: `dry run: ${listed.length} item(s) would be deleted`,
        });
        return { projectId, dryRun: true, wouldDelete: listed, skipped } as JsonValue;
      }
      const total = cp.inventory.length;
      let state: PurgeCheckpoint = cp;
      for (const kind of PURGE_ORDER) {
        const done = new Set(state.deleted);
        const batch: PurgeItem[] = state.inventory.filter(
          (i) => i.kind === kind && !done.has(`${i.kind}:${i.id}`),
        );
        for (const item of batch) {
          ctx.signal.throwIfAborted();
          await remove(ctx, requireTasksSession(ctx, 'purge-project'), item, { pollMs, timeoutMs });
          state = { ...state, deleted: [...state.deleted, `${item.kind}:${item.id}`] };
          await ctx.checkpoint.save(state);
          await ctx.audit.record('purge-delete', `${item.kind}:${item.id}`, {
            project: projectId,
            name: item.name,
          });
          await ctx.progress({
            done: state.deleted.length,
            total,
            detail: `deleted ${item.kind} ${item.name || item.id}`,
          });
        }
        if (kind === 'server' && batch.length > 0)
          await waitGone(
            ctx,
            batch.map((i) => i.id),
            pollMs,
            timeoutMs,
          );
      }
      return { projectId, dryRun: false, deleted: listed, skipped } as JsonValue;
    },
  };
}
