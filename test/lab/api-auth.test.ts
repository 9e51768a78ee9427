// The API's Keystone auth against the lab's real Keystone: 401 for unknown and revoked tokens,
// 403 for roles the policy does not allow, with a user made for the test holding only `reader`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodApp } from '../../src/api/context.js';
import { StoreServiceControl } from '../../src/api/control.js';
import { KeystoneTokenValidator } from '../../src/api/keystone.js';
import { buildApi } from '../../src/api/server.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { openStore, type Store } from '../../src/store/index.js';
import { testConfig } from '../api/harness.js';
import { adminSession, labEnv, uniqueName } from './lab.js';

let admin: CloudSession;
let store: Store;
let app: ZodApp;
let readerUserId: string | null = null;
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

async function call(method: 'GET' | 'POST', url: string, token?: string): Promise<number> {
  const res = await app.inject({
    method,
    url,
    headers: token === undefined ? {} : { 'x-auth-token': token },
  });
  return res.statusCode;
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
  app = await buildApi({
    store,
    config: await testConfig(),
    control: new StoreServiceControl(store),
    auth: { kind: 'keystone', validator },
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
});

describe('API auth against the lab Keystone', () => {
  it('answers 401 without a token, with an unknown one and with a revoked one', async () => {
    expect(await call('GET', '/v1/plans')).toBe(401);
    expect(await call('GET', '/v1/plans', 'gAAAAABunknown-token')).toBe(401);
    const token = await tokenOf('demo', 'demo');
    expect(await call('GET', '/v1/plans', token)).toBe(200);
    const revoke = await fetch(`${labEnv('OS_AUTH_URL').replace(/\/+$/, '')}/auth/tokens`, {
      method: 'DELETE',
      headers: { 'X-Auth-Token': (await admin.token()).token, 'X-Subject-Token': token },
    });
    expect(revoke.status).toBe(204);
    expect(await call('GET', '/v1/plans', token)).toBe(401);
  });

  it('lets the reader-only user read and refuses it every action with 403', async () => {
    const token = await tokenOf(readerName, 'demo');
    expect(await call('GET', '/v1/plans', token)).toBe(200);
    expect(await call('GET', '/v1/aggregates', token)).toBe(200);
    expect(await call('POST', '/v1/pause', token)).toBe(403);
    expect(await call('POST', '/v1/plans/1/approve', token)).toBe(403);
    expect(await call('GET', '/v1/config', token)).toBe(403);
  });

  it('refuses the member demo the operator actions and lets admin take them', async () => {
    const demo = await tokenOf('demo', 'demo');
    expect(await call('GET', '/v1/plans', demo)).toBe(200);
    expect(await call('POST', '/v1/pause', demo)).toBe(403);
    const adminToken = await tokenOf('admin', 'admin');
    expect(await call('POST', '/v1/pause', adminToken)).toBe(200);
    expect(await call('POST', '/v1/resume', adminToken)).toBe(200);
    expect(await call('GET', '/v1/config', adminToken)).toBe(200);
    const audit = await store.audit.list({ action: 'pause' });
    expect(audit.items[0]).toMatchObject({ actor: 'operator:admin' });
    expect(audit.items[0]!.credential).toMatch(/^token:/);
  });
});
