// Fixtures for tests against the real lab (../shared/openstack-lab): an admin session from the
// OS_* variables of its openrc, and helpers that create and remove prefixed resources.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';

export const PREFIX = 'aic-lab-';

export function labEnv(name: string): string {
  const v = process.env[name];
  if (!v) {
    throw new Error(
      `${name} is not set: start the lab (bash ../shared/openstack-lab/up /tmp/oslab) and source /tmp/oslab/openrc before npm run test:lab`,
    );
  }
  return v;
}

export async function adminSession(): Promise<CloudSession> {
  labEnv('OS_AUTH_URL');
  return openSession({ load: { env: { ...process.env, OS_CLOUD: '' } } });
}

/** A name unique to this run, so parallel users of the lab never collide. */
export function uniqueName(what: string): string {
  return `${PREFIX}${what}-${randomBytes(3).toString('hex')}`;
}

async function novaRequest(s: CloudSession, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await s.nova.client.request({
    method,
    path,
    headers: await s.nova.headers(),
    ...(body === undefined ? {} : { body }),
  });
  return res.body;
}

let imageId: string | undefined;
async function labImage(s: CloudSession): Promise<string> {
  if (!imageId) {
    const body = (await s.service('image').get('/v2/images', { name: 'lab-image' })) as {
      images: { id: string }[];
    };
    const img = body.images[0];
    if (!img) throw new Error('the lab has no image "lab-image"');
    imageId = img.id;
  }
  return imageId;
}

export interface BootSpec {
  name: string;
  /** Admin only (2.74+); without it the scheduler chooses. */
  host?: string;
  flavor?: string;
  group?: string;
  metadata?: Record<string, string>;
}

export async function bootServers(
  s: CloudSession,
  specs: BootSpec[],
  timeoutMs = 90_000,
): Promise<NovaServer[]> {
  const image = await labImage(s);
  const ids: string[] = [];
  for (const spec of specs) {
    const server: Record<string, unknown> = {
      name: spec.name,
      imageRef: image,
      flavorRef: spec.flavor ?? 'm1.small',
      networks: 'none',
    };
    if (spec.host) server.host = spec.host;
    if (spec.metadata) server.metadata = spec.metadata;
    const body: Record<string, unknown> = { server };
    if (spec.group) body['os:scheduler_hints'] = { group: spec.group };
    const created = (await novaRequest(s, 'POST', '/servers', body)) as { server: { id: string } };
    ids.push(created.server.id);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // One GET per server: a non-admin user may not list all projects.
    const mine = await Promise.all(ids.map((id) => s.nova.getServer(id)));
    const failed = mine.find((x) => x.status === 'ERROR');
    if (failed) throw new Error(`lab: server ${failed.name} went to ERROR while booting`);
    if (mine.length === ids.length && mine.every((x) => x.status === 'ACTIVE' && x.taskState === null))
      return mine;
    if (Date.now() > deadline) throw new Error(`lab: servers not ACTIVE after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export async function createAggregate(
  s: CloudSession,
  name: string,
  hosts: string[],
  metadata: Record<string, string> = {},
): Promise<number> {
  const created = (await novaRequest(s, 'POST', '/os-aggregates', { aggregate: { name } })) as {
    aggregate: { id: number };
  };
  const id = created.aggregate.id;
  for (const host of hosts)
    await novaRequest(s, 'POST', `/os-aggregates/${id}/action`, { add_host: { host } });
  if (Object.keys(metadata).length) {
    await novaRequest(s, 'POST', `/os-aggregates/${id}/action`, { set_metadata: { metadata } });
  }
  return id;
}

export async function createServerGroup(
  s: CloudSession,
  name: string,
  policy: string,
  rules?: Record<string, number>,
): Promise<string> {
  const group: Record<string, unknown> = { name, policy };
  if (rules) group.rules = rules;
  const created = (await novaRequest(s, 'POST', '/os-server-groups', { server_group: group })) as {
    server_group: { id: string };
  };
  return created.server_group.id;
}

/** Removes everything this suite created (servers, aggregates, groups whose name has the prefix). */
export async function cleanupLab(s: CloudSession, prefix = PREFIX): Promise<void> {
  const servers = (await s.nova.listServers()).filter((x) => x.name.startsWith(prefix));
  for (const x of servers)
    await s.nova.client.request({ method: 'DELETE', path: `/servers/${x.id}`, accept: [404] });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const left = (await s.nova.listServers()).filter((x) => x.name.startsWith(prefix));
    if (left.length === 0) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  for (const a of (await s.nova.listAggregates()).filter((x) => x.name.startsWith(prefix))) {
    for (const host of a.hosts)
      await novaRequest(s, 'POST', `/os-aggregates/${a.id}/action`, { remove_host: { host } });
    await novaRequest(s, 'DELETE', `/os-aggregates/${a.id}`);
  }
  for (const g of (await s.nova.listServerGroups()).filter((x) => x.name.startsWith(prefix))) {
    await novaRequest(s, 'DELETE', `/os-server-groups/${g.id}`);
  }
}

/** Writes a control file of the lab's fake driver (live_migration_seconds, live_migration_fail). */
export async function setControl(name: string, content: string | undefined): Promise<void> {
  const path = join(labEnv('OSLAB_CONTROL_DIR'), name);
  if (content === undefined) {
    await rm(path, { force: true });
    return;
  }
  await writeFile(`${path}.tmp`, content);
  await rename(`${path}.tmp`, path);
}

/** Publishes metrics through the lab exporter (scraped every 5 s). */
export async function writeMetrics(file: string, text: string | undefined): Promise<void> {
  const path = join(labEnv('OSLAB_METRICS_DIR'), file);
  if (text === undefined) {
    await rm(path, { force: true });
    return;
  }
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  everyMs = 1000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`lab: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
