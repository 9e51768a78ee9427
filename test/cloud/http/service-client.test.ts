import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from '../../../src/cloud/auth/keystone.js';
import { CloudError } from '../../../src/cloud/errors.js';
import { buildUrl, openstackMessage, ServiceClient } from '../../../src/cloud/http/service-client.js';
import { HttpTransport } from '../../../src/cloud/http/transport.js';
import { type FakeCloud, startFakeCloud } from '../fake-cloud.js';

let cloud: FakeCloud;

function client(c: FakeCloud): ServiceClient {
  const http = new HttpTransport();
  return new ServiceClient('compute', new Authenticator(c.config, http), http);
}

describe('ServiceClient', () => {
  // Each test here starts its own fake cloud; the helpers' tests start none.
  afterEach(async () => {
    await cloud.close();
  });

  it('takes the endpoint from the catalog and sends the token', async () => {
    cloud = await startFakeCloud();
    const c = client(cloud);
    expect(await c.endpoint()).toBe(`${cloud.fake.url}/compute/v2.1`);
    await c.get('/os-aggregates');
    const req = cloud.fake.requests.find((r) => r.path === '/compute/v2.1/os-aggregates');
    expect(req?.headers['x-auth-token']).toBe('tok-1');
  });

  it('re-authenticates once on 401 and retries the call', async () => {
    cloud = await startFakeCloud();
    cloud.fake.route('GET /compute/v2.1/os-aggregates', (req) =>
      req.headers['x-auth-token'] === 'tok-1'
        ? { status: 401, body: { error: { message: 'expired' } } }
        : { body: { aggregates: [] } },
    );
    const c = client(cloud);
    expect(await c.get('/os-aggregates')).toEqual({ aggregates: [] });
    expect(cloud.tokens()).toBe(2);
  });

  it('does not loop on 401: after one fresh token it reports the refusal', async () => {
    cloud = await startFakeCloud();
    cloud.fake.route('GET /compute/v2.1/flavors', {
      status: 401,
      body: { error: { message: 'The request you have made requires authentication.' } },
    });
    const err = await client(cloud)
      .get('/flavors')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudError);
    expect((err as CloudError).message).toMatch(
      /^compute: GET \/compute\/v2\.1\/flavors refused after a fresh token \(401\)/,
    );
    expect((err as CloudError).message).toContain('access rules');
    expect(cloud.tokens()).toBe(2);
  });

  it('turns an error body into a message with the request id', async () => {
    cloud = await startFakeCloud();
    cloud.fake.route('GET /compute/v2.1/servers/x', {
      status: 404,
      body: { itemNotFound: { code: 404, message: 'Instance x could not be found.' } },
      headers: { 'x-openstack-request-id': 'req-abc' },
    });
    const err = (await client(cloud)
      .get('/servers/x')
      .catch((e: unknown) => e)) as CloudError;
    expect(err.message).toBe(
      'compute: GET /compute/v2.1/servers/x failed (404): Instance x could not be found. [request req-abc]',
    );
    expect(err.status).toBe(404);
    expect(err.requestId).toBe('req-abc');
  });
});

describe('helpers', () => {
  it('builds URLs with repeated and skipped query values', () => {
    expect(
      buildUrl('http://h/v2.1', '/servers/detail', { all_tenants: 1, host: undefined, f: ['a', 'b'] }),
    ).toBe('http://h/v2.1/servers/detail?all_tenants=1&f=a&f=b');
    expect(buildUrl('http://h/v2.1', 'http://other/x?y=1')).toBe('http://other/x?y=1');
  });

  it('reads the messages of Nova, Placement and Keystone error bodies', () => {
    expect(openstackMessage({ badRequest: { message: 'bad', code: 400 } })).toBe('bad');
    expect(openstackMessage({ errors: [{ detail: 'conflict', code: 'placement.concurrent_update' }] })).toBe(
      'conflict',
    );
    expect(openstackMessage({ error: { message: 'no', code: 401 } })).toBe('no');
    expect(openstackMessage(' text ')).toBe('text');
    expect(openstackMessage(undefined)).toBeUndefined();
  });
});
