// The API's Keystone auth against the lab's real Keystone: 401 for unknown and revoked tokens,
// 403 for roles the policy does not allow (a project's reader reads nothing of the cloud), with a
// user made for the test holding only `reader`.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodApp } from '../../src/api/context.js';
import { StoreServiceControl } from '../../src/api/control.js';
import { KeystoneTokenValidator } from '../../src/api/keystone.js';
import { KeystoneTokenIssuer } from '../../src/api/login.js';
import { buildApi } from '../../src/api/server.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { openStore, type Store } from '../../src/store/index.js';
import { latestSnapshot, testConfig } from '../api/harness.js';
import { adminSession, labEnv, uniqueName } from './lab.js';

let admin: CloudSession;
let store: Store;
let app: ZodApp;
let readerUserId: string | null = null;
let snapshotDir: string | undefined;
const password = 'secret';
const readerName = uniqueName('api-reader');

async function identity(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await admin
    .service('identity')
    .request({ method, path, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: res.body };
}

async function tokenOf(user: string, project: string): Promise<string> {
  const res = await fetch(`${labEnv('OS_AUTH_URL').replace(/\/+$/, '')}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: user, domain: { id: 'default' }, password } },
        },
        scope: { project: { name: project, domain: { id: 'default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`token of ${user}: ${res.status} ${await res.text()}`);
  return res.headers.get('x-subject-token')!;
}

async function call(method: 'GET' | 'POST', url: string, token?: string, body?: unknown): Promise<number> {
  return (await answer(method, url, token, body)).status;
}

async function answer(
  method: 'GET' | 'POST',
  url: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await app.inject({
    method,
    url,
    headers: {
      ...(token === undefined ? {} : { 'x-auth-token': token }),
      // A body-less action sends the clients' header, as the CLI does.
      ...(body === undefined ? { 'x-aicerine-client': 'test' } : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

beforeAll(async () => {
  admin = await adminSession();
  store = await openStore({ kind: 'sqlite', path: ':memory:' });
  const validator = new KeystoneTokenValidator({
    identityUrl: labEnv('OS_AUTH_URL'),
    serviceToken: async () => (await admin.token()).token,
    invalidateServiceToken: (t) => admin.auth.invalidate(t),
    cacheTtlMs: 0,
  });
  snapshotDir = await mkdtemp(join(tmpdir(), 'aic-lab-api-'));
  app = await buildApi({
    store,
    config: await testConfig(),
    control: new StoreServiceControl(store),
    auth: { kind: 'keystone', validator },
    // The snapshot the loop "planned on last": a fixture, so nothing here reads the lab's servers.
    snapshots: { latest: () => latestSnapshot(), record: async () => latestSnapshot() },
    login: new KeystoneTokenIssuer(labEnv('OS_AUTH_URL')),
    snapshotDir,
  });
  const projects = (await identity('GET', '/projects?name=demo')).body as { projects: { id: string }[] };
  const roles = (await identity('GET', '/roles?name=reader')).body as { roles: { id: string }[] };
  const created = (
    await identity('POST', '/users', { user: { name: readerName, password, domain_id: 'default' } })
  ).body as { user: { id: string } };
  readerUserId = created.user.id;
  const put = await identity(
    'PUT',
    `/projects/${projects.projects[0]!.id}/users/${readerUserId}/roles/${roles.roles[0]!.id}`,
  );
  expect(put.status).toBe(204);
});

afterAll(async () => {
  if (readerUserId !== null) await identity('DELETE', `/users/${readerUserId}`);
  await app?.close();
  await store?.close();
  if (snapshotDir !== undefined) await rm(snapshotDir, { recursive: true, force: true });
});

describe('API auth against the lab Keystone', () => {
  it('answers 401 without a token, with an unknown one and with a revoked one', async () => {
    expect(await call('GET', '/v1/plans')).toBe(401);
    expect(await call('GET', '/v1/plans', 'gAAAAABunknown-token')).toBe(401);
    // A cloud-wide reader: a project's member reads nothing of the cloud (issue 25).
    const token = await tokenOf('admin', 'admin');
    expect(await call('GET', '/v1/plans', token)).toBe(200);
    const revoke = await fetch(`${labEnv('OS_AUTH_URL').replace(/\/+$/, '')}/auth/tokens`, {
      method: 'DELETE',
      headers: { 'X-Auth-Token': (await admin.token()).token, 'X-Subject-Token': token },
    });
    expect(revoke.status).toBe(204);
    expect(await call('GET', '/v1/plans', token)).toBe(401);
  });

  it("shows a project's reader none of the cloud and refuses it every action with 403", async () => {
    const token = await tokenOf(readerName, 'demo');
    expect(await call('GET', '/v1/plans', token)).toBe(403);
    expect(await call('GET', '/v1/aggregates', token)).toBe(403);
    expect(await call('GET', '/v1/whoami', token)).toBe(200);
    expect(await call('POST', '/v1/pause', token)).toBe(403);
    expect(await call('POST', '/v1/plans/1/approve', token)).toBe(403);
    expect(await call('GET', '/v1/config', token)).toBe(403);
  });

  it('refuses the member demo the operator actions and lets admin take them', async () => {
    const demo = await tokenOf('demo', 'demo');
    expect(await call('GET', '/v1/plans', demo)).toBe(403);
    expect(await call('POST', '/v1/pause', demo)).toBe(403);
    const adminToken = await tokenOf('admin', 'admin');
    expect(await call('POST', '/v1/pause', adminToken)).toBe(200);
    expect(await call('POST', '/v1/resume', adminToken)).toBe(200);
    expect(await call('GET', '/v1/config', adminToken)).toBe(200);
    const audit = await store.audit.list({ action: 'pause' });
    expect(audit.items[0]).toMatchObject({ actor: 'operator:admin' });
    expect(audit.items[0]!.credential).toMatch(/^token:/);
  });

  it("the new actions: a project's reader reads no hosts, history or what-if; recording a snapshot needs an operator", async () => {
    const reader = await tokenOf(readerName, 'demo');
    expect(await call('GET', '/v1/aggregates/gold/hosts', reader)).toBe(403);
    expect(await call('GET', '/v1/aggregates/gold/history', reader)).toBe(403);
    expect(await call('GET', '/v1/shadow-reports', reader)).toBe(403);
    expect(await call('GET', '/v1/snapshots', reader)).toBe(403);
    expect(await call('POST', '/v1/what-if', reader, { aggregate: 'gold', drainHosts: ['g1'] })).toBe(403);
    const admin = await tokenOf('admin', 'admin');
    expect(await call('GET', '/v1/aggregates/gold/hosts', admin)).toBe(200);
    expect(await call('POST', '/v1/what-if', admin, { aggregate: 'gold', drainHosts: ['g1'] })).toBe(200);
    expect(await call('POST', '/v1/snapshots', reader, {})).toBe(403);
    expect(await call('POST', '/v1/snapshots', await tokenOf('demo', 'demo'), {})).toBe(403);
    expect(await call('POST', '/v1/snapshots', undefined, {})).toBe(401);
    expect(await call('POST', '/v1/what-if', undefined, { aggregate: 'gold' })).toBe(401);
    expect(await call('POST', '/v1/snapshots', await tokenOf('admin', 'admin'), {})).toBe(201);
  });

  it('logs in through the lab Keystone and says who the caller is and what it may do', async () => {
    const login = await answer('POST', '/v1/auth/tokens', undefined, {
      username: readerName,
      password,
      project: 'demo',
    });
    expect(login.status).toBe(201);
    expect(login.body).toMatchObject({
      authenticated: true,
      mode: 'keystone',
      user: readerName,
      project: 'demo',
    });
    expect(login.body.roles).toContain('reader');
    // A project's reader may do nothing cloud-wide under the default policy (issue 25).
    expect(login.body.actions).toEqual([]);
    const me = await answer('GET', '/v1/whoami', login.body.token as string);
    expect(me.body).toMatchObject({ user: readerName, actions: [] });
    const adminMe = await answer('GET', '/v1/whoami', await tokenOf('admin', 'admin'));
    expect(adminMe.body.actions).toContain('execution.abort');
    expect(
      (
        await answer('POST', '/v1/auth/tokens', undefined, {
          username: readerName,
          password: 'wrong',
          project: 'demo',
        })
      ).status,
    ).toBe(401);
    expect(await call('GET', '/v1/whoami', 'gAAAAABunknown-token')).toBe(401);
  });
});
