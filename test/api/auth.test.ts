import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreServiceControl } from '../../src/api/control.js';
import { callerFromToken, KeystoneTokenValidator } from '../../src/api/keystone.js';
import { createApiLogger } from '../../src/api/logger.js';
import {
  allows,
  DEFAULT_API_POLICY,
  loadApiPolicy,
  OPERATOR_ROLE,
  parseApiPolicy,
  READER_ROLE,
} from '../../src/api/policy.js';
import { buildApi, listenApi } from '../../src/api/server.js';
import { InputError } from '../../src/errors.js';
import { openStore } from '../../src/store/index.js';
import { type Harness, seedPlan, simKeystone, startApi, testConfig } from './harness.js';

async function status(h: Harness, method: 'GET' | 'POST', url: string, token?: string) {
  const res = await h.app.inject({
    method,
    url,
    headers: {
      ...(token === undefined ? {} : { 'x-auth-token': token }),
      ...(method === 'POST' ? { 'x-aicerine-client': 'test' } : {}),
    },
  });
  return {
    status: res.statusCode,
    error: (res.json() as { error?: { message: string; field?: string } }).error,
  };
}

describe('Keystone auth against the simulator', () => {
  let ks: Awaited<ReturnType<typeof simKeystone>>;
  let h: Harness;
  beforeAll(async () => {
    ks = await simKeystone();
    h = await startApi({ kind: 'keystone', validator: ks.validator });
  });
  afterAll(async () => {
    await h.close();
    await ks.sim.close();
  });

  it('answers 401 without a token or with one Keystone does not know, naming the header', async () => {
    for (const token of [undefined, '', 'gAAAAAnot-a-real-token', 'bad\u00e9token']) {
      const r = await status(h, 'GET', '/v1/plans', token);
      expect(r.status, String(token)).toBe(401);
      expect(r.error?.field).toBe('headers.x-auth-token');
    }
  });

  it('maps roles to actions: cloud-wide readers read, operator acts, admin configures', async () => {
    const plan = await seedPlan(h.store, 'gold', 2);
    const reader = await ks.tokenWithRoles([READER_ROLE]);
    const projectReader = await ks.tokenWithRoles(['reader']);
    const member = await ks.tokenWithRoles(['member']);
    const operator = await ks.tokenWithRoles([OPERATOR_ROLE]);
    const nobody = await ks.tokenWithRoles(['some-other-role']);
    expect((await status(h, 'GET', '/v1/plans', reader)).status).toBe(200);
    expect((await status(h, 'GET', '/v1/plans', operator)).status).toBe(200);
    expect((await status(h, 'GET', '/v1/plans', nobody)).status).toBe(403);
    for (const token of [reader, projectReader, member]) {
      const r = await status(h, 'POST', `/v1/plans/${plan.id}/approve`, token);
      expect(r.status).toBe(403);
      expect(r.error?.message).toMatch(/plan.approve needs one of the roles admin, aicerine-operator/);
      expect((await status(h, 'POST', '/v1/pause', token)).status).toBe(403);
      expect((await status(h, 'POST', '/v1/executions/x/abort', token)).status).toBe(403);
      expect((await status(h, 'POST', '/v1/quarantine/s1/release', token)).status).toBe(403);
      expect((await status(h, 'POST', '/v1/maintenance', token)).error?.message).toMatch(
        /maintenance.start needs one of the roles admin, aicerine-operator/,
      );
      expect((await status(h, 'POST', '/v1/maintenance/hosts/c1/done', token)).status).toBe(403);
    }
    // Allowed, and answered by a service that runs no campaigns here.
    expect((await status(h, 'POST', '/v1/maintenance/1/pause', operator)).status).toBe(503);
    expect((await status(h, 'POST', `/v1/plans/${plan.id}/approve`, operator)).status).toBe(200);
    expect((await status(h, 'POST', '/v1/pause', operator)).status).toBe(200);
    expect((await status(h, 'POST', '/v1/resume', operator)).status).toBe(200);
    expect((await status(h, 'GET', '/v1/config', operator)).status).toBe(403);
    expect((await status(h, 'GET', '/v1/config', await ks.adminToken())).status).toBe(200);
    // Nothing was written by the refused requests.
    const actions = (await h.store.audit.list()).items.map((e) => e.action);
    expect(actions).toEqual(['resume', 'pause', 'plan.approve']);
  });

  it('shows a project member or reader nothing of the cloud but who they are', async () => {
    await seedPlan(h.store, 'gold', 2);
    for (const roles of [['reader'], ['member', 'reader'], ['member']]) {
      const token = await ks.tokenWithRoles(roles);
      const urls = [
        '/v1/plans',
        '/v1/plans/1',
        '/v1/audit',
        '/v1/snapshots',
        '/v1/aggregates',
        '/v1/aggregates/gold/hosts',
        '/v1/executions',
        '/v1/quarantine',
        '/v1/pauses',
        '/v1/tasks',
        '/v1/maintenance',
      ];
      for (const url of urls) {
        const r = await status(h, 'GET', url, token);
        expect(r.status, `${roles} ${url}`).toBe(403);
        expect(r.error?.message, url).toMatch(/read needs one of the roles admin, aicerine-reader/);
      }
      const what = await status(h, 'POST', '/v1/what-if', token);
      expect(what.status).toBe(403);
      const me = await h.app.inject({ method: 'GET', url: '/v1/whoami', headers: { 'x-auth-token': token } });
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ roles, actions: [] });
      for (const url of ['/v1/health', '/v1/version'])
        expect((await status(h, 'GET', url, token)).status).toBe(200);
    }
  });

  it('lets the readers of a system-scoped token read, as Keystone describes them', () => {
    const token = (scope: Record<string, unknown>, roles: string[]) =>
      callerFromToken({
        token: {
          user: { id: 'u1', name: 'noc' },
          expires_at: '2030-01-01T00:00:00.000000Z',
          audit_ids: ['a1'],
          roles: roles.map((name, i) => ({ id: `r${i}`, name })),
          methods: ['password'],
          ...scope,
        },
      })!;
    const system = token({ system: { all: true } }, ['reader']);
    expect(system.system).toBe(true);
    expect(allows(DEFAULT_API_POLICY, 'read', system)).toBe(true);
    expect(allows(DEFAULT_API_POLICY, 'what-if', system)).toBe(true);
    expect(allows(DEFAULT_API_POLICY, 'pause', system)).toBe(false);
    const project = token({ project: { id: 'p1', name: 'demo', domain: { id: 'default' } } }, ['reader']);
    expect(project.system).toBe(false);
    expect(allows(DEFAULT_API_POLICY, 'read', project)).toBe(false);
  });

  it('leaves health, version, OpenAPI and unknown paths open', async () => {
    for (const url of ['/v1/health', '/v1/version', '/v1/openapi.json'])
      expect((await status(h, 'GET', url)).status).toBe(200);
    expect((await status(h, 'GET', '/v1/nothing')).status).toBe(404);
  });
});

describe('token cache and revocation', () => {
  it('caches a validation for the TTL, then honours a revocation', async () => {
    let now = Date.now();
    const ks = await simKeystone({ cacheTtlMs: 30_000, now: () => now });
    try {
      const h = await startApi({ kind: 'keystone', validator: ks.validator });
      const token = await ks.tokenWithRoles([READER_ROLE]);
      let asked = 0;
      const real = globalThis.fetch;
      globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
        asked++;
        return real(...args);
      }) as typeof fetch;
      try {
        expect((await status(h, 'GET', '/v1/plans', token)).status).toBe(200);
        expect((await status(h, 'GET', '/v1/plans', token)).status).toBe(200);
        expect(asked).toBe(1);
        ks.sim.keystone.tokens.delete(token); // revoked in Keystone
        now += 10_000;
        expect((await status(h, 'GET', '/v1/plans', token)).status).toBe(200); // still cached
        now += 21_000;
        expect((await status(h, 'GET', '/v1/plans', token)).status).toBe(401);
        expect(asked).toBe(2);
        // A refused token stays refused for a while without asking Keystone again.
        for (let i = 0; i < 5; i++) expect((await status(h, 'GET', '/v1/plans', token)).status).toBe(401);
        expect(asked).toBe(2);
        now += 11_000;
        expect((await status(h, 'GET', '/v1/plans', token)).status).toBe(401);
        expect(asked).toBe(3);
      } finally {
        globalThis.fetch = real;
      }
      await h.close();
    } finally {
      await ks.sim.close();
    }
  });

  it('never trusts a cached validation past the token expiry', async () => {
    let now = Date.now();
    const ks = await simKeystone({ cacheTtlMs: 3_600_000, now: () => now });
    try {
      const token = await ks.tokenWithRoles(['reader']);
      const info = ks.sim.keystone.tokens.get(token)!;
      expect(await ks.validator.validate(token)).toMatchObject({ roles: ['reader'] });
      now = info.expiresMs + 1;
      info.expiresMs = Date.now() - 1; // Keystone agrees it expired
      expect(await ks.validator.validate(token)).toBeNull();
    } finally {
      await ks.sim.close();
    }
  });

  it('answers 503 when Keystone cannot be reached, and 401 when it refuses the service token twice', async () => {
    const down = new KeystoneTokenValidator({
      identityUrl: 'http://127.0.0.1:9/identity',
      serviceToken: async () => 'x',
      timeoutMs: 2000,
    });
    const h = await startApi({ kind: 'keystone', validator: down });
    const r = await status(h, 'GET', '/v1/plans', 'some-token');
    expect(r.status).toBe(503);
    expect(r.error?.message).toMatch(/cannot be reached/);
    await h.close();
    const ks = await simKeystone();
    try {
      let invalidated = 0;
      const refused = new KeystoneTokenValidator({
        identityUrl: ks.sim.authUrl,
        serviceToken: async () => 'not-a-service-token',
        invalidateServiceToken: () => invalidated++,
      });
      await expect(refused.validate(await ks.adminToken())).rejects.toThrow(/refused the service token/);
      expect(invalidated).toBe(1);
    } finally {
      await ks.sim.close();
    }
  });
});

describe('a slow or failing Keystone', () => {
  // A Keystone that answers the n-th validation as `answers[n]` says: hang (past the timeout),
  // a 503, or a valid token.
  async function keystoneAnswering(answers: ('hang' | 503 | 'ok')[]) {
    let asked = 0;
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => {
      const a = answers[asked++] ?? 'ok';
      if (a === 'hang') {
        held.push(res);
        return;
      }
      if (a === 503) {
        res.writeHead(503).end('busy');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          token: {
            user: { id: 'u1', name: 'alice' },
            project: { id: 'p1', name: 'ops' },
            roles: [{ name: 'reader' }],
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
            audit_ids: ['a1'],
          },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const validator = new KeystoneTokenValidator({
      identityUrl: `http://127.0.0.1:${port}/identity`,
      serviceToken: async () => 'service',
      timeoutMs: 300,
    });
    return {
      validator,
      asked: () => asked,
      close: async () => {
        for (const r of held) r.destroy();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  it('asks once more after a timeout or a 5xx, and gives 503 only when the second try fails too', async () => {
    for (const first of ['hang', 503] as const) {
      const ks = await keystoneAnswering([first, 'ok']);
      try {
        expect(await ks.validator.validate('tok-1')).toMatchObject({ userName: 'alice', roles: ['reader'] });
        expect(ks.asked()).toBe(2);
      } finally {
        await ks.close();
      }
    }
    const twice = await keystoneAnswering(['hang', 'hang']);
    try {
      await expect(twice.validator.validate('tok-2')).rejects.toThrow(/cannot be reached/);
      expect(twice.asked()).toBe(2);
    } finally {
      await twice.close();
    }
    const busy = await keystoneAnswering([503, 503]);
    try {
      await expect(busy.validator.validate('tok-3')).rejects.toThrow(/answered 503/);
      expect(busy.asked()).toBe(2);
    } finally {
      await busy.close();
    }
  });
});

describe('the policy file', () => {
  it('replaces the roles of the actions it names and refuses unknown actions with their name', async () => {
    const policy = parseApiPolicy({ 'plan.approve': ['cloud-operator'] });
    expect(policy['plan.approve']).toEqual(['cloud-operator']);
    expect(policy.read).toEqual(DEFAULT_API_POLICY.read);
    expect(() => parseApiPolicy({ 'plan.aprove': ['x'] }, 'policy.yaml')).toThrow(InputError);
    expect(() => parseApiPolicy({ 'plan.aprove': ['x'] }, 'policy.yaml')).toThrow(/plan.aprove/);
    expect(() => parseApiPolicy({ read: 'reader' }, 'policy.yaml')).toThrow(/policy.yaml: read/);
    const dir = await mkdtemp(join(tmpdir(), 'aic-policy-'));
    await writeFile(join(dir, 'api-policy.yaml'), 'pause: [night-shift]\nresume: [night-shift]\n');
    expect((await loadApiPolicy(join(dir, 'api-policy.yaml'))).pause).toEqual(['night-shift']);
  });

  it('applies a policy given to the API', async () => {
    const ks = await simKeystone();
    const store = await openStore({ kind: 'sqlite', path: ':memory:' });
    const app = await buildApi({
      store,
      config: await testConfig(),
      control: new StoreServiceControl(store),
      auth: { kind: 'keystone', validator: ks.validator, policy: parseApiPolicy({ pause: ['night-shift'] }) },
    });
    try {
      const shift = await ks.tokenWithRoles(['night-shift']);
      const ok = await app.inject({
        method: 'POST',
        url: '/v1/pause',
        headers: { 'x-auth-token': shift, 'x-aicerine-client': 'test' },
      });
      expect(ok.statusCode).toBe(200);
      const admin = await ks.adminToken();
      const no = await app.inject({
        method: 'POST',
        url: '/v1/pause',
        headers: { 'x-auth-token': admin, 'x-aicerine-client': 'test' },
      });
      expect(no.statusCode).toBe(403);
    } finally {
      await app.close();
      await store.close();
      await ks.sim.close();
    }
  });
});

describe('the no-auth mode', () => {
  it('binds to loopback only and says so loudly', async () => {
    const lines: string[] = [];
    const logger = createApiLogger({ destination: { write: (l: string) => lines.push(l) } });
    const h = await startApi({ kind: 'none' }, { logger });
    await expect(listenApi(h.app, { host: '0.0.0.0', port: 0, noAuth: true })).rejects.toThrow(
      /loopback only/,
    );
    const url = await listenApi(h.app, { host: '127.0.0.1', port: 0, noAuth: true });
    expect(lines.join('')).toMatch(/NO AUTHENTICATION/);
    // What a page on another site can send: refused, nothing done.
    const blind = await fetch(`${url}/v1/pause`, { method: 'POST' });
    expect(blind.status).toBe(403);
    expect((await h.store.audit.list()).items).toEqual([]);
    const res = await fetch(`${url}/v1/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    const audit = await h.store.audit.list();
    expect(audit.items[0]).toMatchObject({
      actor: 'operator:local',
      credential: 'none (no-auth loopback mode)',
    });
    await h.close();
  });
});
