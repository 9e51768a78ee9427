import { afterEach, describe, expect, it } from 'vitest';
import { findEndpoint, parseCatalog } from '../../../src/cloud/auth/catalog.js';
import type { CloudConfig } from '../../../src/cloud/auth/config.js';
import { Authenticator, authenticate, authRequestBody } from '../../../src/cloud/auth/keystone.js';
import { CloudError } from '../../../src/cloud/errors.js';
import { HttpTransport } from '../../../src/cloud/http/transport.js';
import { type FakeCloud, startFakeCloud } from '../fake-cloud.js';
import { fixture } from '../fake-server.js';

let cloud: FakeCloud | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

const base: CloudConfig = {
  name: 't',
  method: 'password',
  auth: {
    authUrl: 'http://k/v3',
    username: 'u',
    password: 'pw',
    projectName: 'p',
    userDomainName: 'Default',
    projectDomainName: 'Default',
  },
  interface: 'public',
  insecure: false,
  origin: 'test',
};

describe('auth request bodies', () => {
  it('password: user by name in its domain, project scope', () => {
    expect(authRequestBody(base)).toEqual({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { password: 'pw', name: 'u', domain: { name: 'Default' } } },
        },
        scope: { project: { name: 'p', domain: { name: 'Default' } } },
      },
    });
  });

  it('application credential: id and secret, never a scope', () => {
    const body = authRequestBody({
      ...base,
      method: 'application-credential',
      auth: {
        authUrl: 'x',
        applicationCredentialId: 'i',
        applicationCredentialSecret: 's',
        projectName: 'p',
      },
    });
    expect(body).toEqual({
      auth: {
        identity: { methods: ['application_credential'], application_credential: { id: 'i', secret: 's' } },
      },
    });
  });

  it('token: the token method, scoped by project id', () => {
    expect(
      authRequestBody({ ...base, method: 'token', auth: { authUrl: 'x', token: 'gAAA', projectId: 'pid' } }),
    ).toEqual({
      auth: { identity: { methods: ['token'], token: { id: 'gAAA' } }, scope: { project: { id: 'pid' } } },
    });
  });
});

describe('authenticate', () => {
  it('gets a token, its expiry, roles and catalog', async () => {
    cloud = await startFakeCloud();
    const t = await authenticate(cloud.config, new HttpTransport());
    expect(t.token).toBe('tok-1');
    expect(t.roles).toContain('admin');
    expect(t.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(t.catalog.map((c) => c.type).sort()).toEqual(['compute', 'identity', 'network', 'placement']);
    const body = cloud.fake.requests[0]?.body as {
      auth: { identity: { password: { user: { password: string } } } };
    };
    expect(body.auth.identity.password.user.password).toBe('fake-password-123');
  });

  it('explains a refused password without echoing it', async () => {
    cloud = await startFakeCloud();
    cloud.fake.route('POST /identity/v3/auth/tokens', { status: 401, body: fixture('keystone-401') });
    const err = (await authenticate(cloud.config, new HttpTransport()).catch(
      (e: unknown) => e,
    )) as CloudError;
    expect(err).toBeInstanceOf(CloudError);
    expect(err.kind).toBe('auth');
    expect(err.message).toBe(
      `Keystone at ${cloud.config.auth.authUrl} refused user admin (401). Check OS_USERNAME, OS_PASSWORD and OS_USER_DOMAIN_NAME`,
    );
  });

  it('explains an unreachable Keystone', async () => {
    const err = (await authenticate(
      { ...base, auth: { ...base.auth, authUrl: 'http://127.0.0.1:59998/v3' } },
      new HttpTransport({ retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 } }),
    ).catch((e: unknown) => e)) as CloudError;
    expect(err.kind).toBe('unreachable');
    expect(err.message).toBe(
      'Keystone at http://127.0.0.1:59998/v3 cannot be reached (ECONNREFUSED). Check OS_AUTH_URL (test), the network path and that Keystone is running',
    );
  });
});

describe('Authenticator', () => {
  it('keeps a token until shortly before it expires, then renews it', async () => {
    let now = Date.now();
    cloud = await startFakeCloud({ tokenLifetimeMs: 60 * 60_000, now: () => now });
    const a = new Authenticator(cloud.config, new HttpTransport(), {
      renewBeforeMs: 5 * 60_000,
      now: () => now,
    });
    expect((await a.token()).token).toBe('tok-1');
    now += 50 * 60_000;
    expect((await a.token()).token).toBe('tok-1');
    now += 6 * 60_000;
    expect((await a.token()).token).toBe('tok-2');
  });

  it('authenticates once for concurrent callers', async () => {
    cloud = await startFakeCloud();
    const a = new Authenticator(cloud.config, new HttpTransport());
    const tokens = await Promise.all([a.token(), a.token(), a.token()]);
    expect(new Set(tokens.map((t) => t.token)).size).toBe(1);
    expect(cloud.tokens()).toBe(1);
  });
});

describe('catalog', () => {
  const catalog = parseCatalog(fixture<{ token: { catalog: unknown } }>('keystone-token').token.catalog);

  it('finds an endpoint by type, interface and region', () => {
    expect(findEndpoint(catalog, 'compute', 'public', 'RegionOne')).toBe('http://127.0.0.1:8774/v2.1');
    expect(findEndpoint(catalog, 'placement', 'internal', undefined)).toBe('http://127.0.0.1:8778');
  });

  it('says what the catalog has when the entry is missing', () => {
    expect(() => findEndpoint(catalog, 'volumev3', 'public', 'RegionOne')).toThrow(
      'the Keystone catalog has no "volumev3" service (it has: compute, identity, network, placement)',
    );
    expect(() => findEndpoint(catalog, 'compute', 'public', 'RegionTwo')).toThrow(
      /no public "compute" endpoint in region RegionTwo \(it has: .*public@RegionOne.*\)\. Register the compute service in Keystone/,
    );
  });
});
