// The defences in front of the routes, one by one: the Host header (421), the form of a state
// change (403/415), the policy headers, login throttling (429 with Retry-After, the same for a user
// that does not exist), strict UTF-8 bodies (415), prototype keys named where they are, and headers
// too large for the server (431) in the documented error shape.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedHostNames, hostName } from '../../src/api/guard.js';
import { KeystoneTokenIssuer } from '../../src/api/login.js';
import { LoginThrottle } from '../../src/api/throttle.js';
import { type Harness, simKeystone, startApi } from './harness.js';

let ks: Awaited<ReturnType<typeof simKeystone>>;
let h: Harness;
let admin: string;
beforeAll(async () => {
  ks = await simKeystone();
  admin = await ks.adminToken();
  h = await startApi(
    { kind: 'keystone', validator: ks.validator },
    { login: new KeystoneTokenIssuer(ks.sim.authUrl) },
  );
});
afterAll(async () => {
  await h.close();
  await ks.sim.close();
});

const audit = async () => JSON.stringify([(await h.store.audit.list()).items, await h.control.pauses()]);

describe('the Host header', () => {
  it('answers 421 to a name the API does not listen on, before anything else', async () => {
    const before = await audit();
    for (const host of [
      'evil.example',
      'evil.example:8780',
      '127.0.0.1.nip.io',
      '[::2]:80',
      'localhost.evil.example',
    ]) {
      for (const [method, url] of [
        ['GET', '/v1/aggregates'],
        ['POST', '/v1/pause'],
        ['GET', '/'],
        ['GET', '/v1/health'],
      ] as const) {
        const res = await h.app.inject({
          method,
          url,
          headers: { host, 'x-auth-token': admin, 'content-type': 'application/json' },
          ...(method === 'POST' ? { payload: '{}' } : {}),
        });
        expect(res.statusCode, `${host} ${url}`).toBe(421);
        expect(res.json().error).toMatchObject({ code: 'misdirected-request', field: 'headers.host' });
      }
    }
    expect(await audit()).toBe(before);
    for (const host of ['localhost', 'localhost:8780', '127.0.0.1:8780', '[::1]:8780', 'LOCALHOST'])
      expect(
        (await h.app.inject({ method: 'GET', url: '/v1/health', headers: { host } })).statusCode,
        host,
      ).toBe(200);
  });

  it('allows the listen address, every interface on a wildcard, and the configured names', () => {
    expect([...allowedHostNames('127.0.0.1', [])].sort()).toEqual(['127.0.0.1', '::1', 'localhost']);
    expect([...allowedHostNames('10.0.0.5', ['Aicerine.Example.com'])].sort()).toEqual([
      '10.0.0.5',
      'aicerine.example.com',
    ]);
    const all = allowedHostNames('0.0.0.0', []);
    expect(all.has('127.0.0.1')).toBe(true);
    expect(all.has('localhost')).toBe(true);
    expect(hostName('[fe80::1]:8780')).toBe('fe80::1');
    expect(hostName('Example.com:80')).toBe('example.com');
  });

  it('takes api.allowedHosts from the configuration', async () => {
    const { parseServiceConfig } = await import('../../src/config/load.js');
    const { buildApi } = await import('../../src/api/server.js');
    const { config } = await parseServiceConfig(
      { api: { allowedHosts: ['aicerine.example.com'] } },
      { baseDir: '/' },
    );
    expect(config.api.allowedHosts).toEqual(['aicerine.example.com']);
    const app = await buildApi({ store: h.store, config, control: h.control, auth: { kind: 'none' } });
    try {
      const ok = await app.inject({
        method: 'GET',
        url: '/v1/health',
        headers: { host: 'aicerine.example.com' },
      });
      expect(ok.statusCode).toBe(200);
      const no = await app.inject({
        method: 'GET',
        url: '/v1/health',
        headers: { host: 'other.example.com' },
      });
      expect(no.statusCode).toBe(421);
    } finally {
      await app.close();
    }
  });
});

describe('state changes', () => {
  it('need JSON or the clients header: 403 without either, 415 for another media type, nothing done', async () => {
    const before = await audit();
    const none = await h.app.inject({ method: 'POST', url: '/v1/pause', headers: { 'x-auth-token': admin } });
    expect(none.statusCode).toBe(403);
    expect(none.json().error).toMatchObject({ code: 'cross-site-refused', field: 'headers.content-type' });
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])
      for (const client of [false, true]) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/pause',
          headers: {
            'x-auth-token': admin,
            'content-type': ct,
            ...(client ? { 'x-aicerine-client': 'x' } : {}),
          },
          payload: '{}',
        });
        expect(res.statusCode, ct).toBe(415);
      }
    expect(await audit()).toBe(before);
    const ok = await h.app.inject({
      method: 'POST',
      url: '/v1/pause',
      headers: { 'x-auth-token': admin, 'x-aicerine-client': 'cli' },
    });
    expect(ok.statusCode).toBe(200);
    const back = await h.app.inject({
      method: 'POST',
      url: '/v1/resume',
      headers: { 'x-auth-token': admin, 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(back.statusCode).toBe(200);
  });

  it('every answer carries the policy headers and no CORS header', async () => {
    for (const url of ['/v1/health', '/v1/nothing', '/v1/plans']) {
      const res = await h.app.inject({ method: 'GET', url, headers: { origin: 'https://evil.example' } });
      expect(res.headers['content-security-policy'], url).toMatch(
        /default-src 'self'.*frame-ancestors 'none'/,
      );
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(Object.keys(res.headers).filter((k) => k.startsWith('access-control-'))).toEqual([]);
    }
    const preflight = await h.app.inject({
      method: 'OPTIONS',
      url: '/v1/pause',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBeGreaterThanOrEqual(400);
    expect(Object.keys(preflight.headers).filter((k) => k.startsWith('access-control-'))).toEqual([]);
  });
});

describe('login throttling', () => {
  const login = (username: string, password: string, remoteAddress = '192.0.2.1') =>
    h.app.inject({
      method: 'POST',
      url: '/v1/auth/tokens',
      remoteAddress,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ username, password, project: 'admin' }),
    });

  it('answers 429 with Retry-After after 5 failures of a name, the same whether the user exists or not', async () => {
    for (const user of ['admin', 'no-such-user']) {
      for (let i = 0; i < 5; i++) expect((await login(user, 'wrong', '192.0.2.10')).statusCode).toBe(401);
      const res = await login(user, 'wrong', '192.0.2.10');
      expect(res.statusCode, user).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(res.json().error).toMatchObject({
        code: 'too-many-logins',
        message: expect.stringMatching(
          /^too many failed logins for this user name or from this address: try again in \d+ s$/,
        ),
      });
    }
    // Even the right password now waits: the guesser cannot tell it from a wrong one.
    const right = await login('admin', ks.sim.keystone.userByName('admin')!.password, '192.0.2.11');
    expect(right.statusCode).toBe(429);
    // Another name from another address is not held up.
    expect((await login('demo', 'wrong', '192.0.2.12')).statusCode).toBe(401);
  });

  it('answers 429 after 20 failures from one address, whatever the names', async () => {
    for (let i = 0; i < 20; i++)
      expect((await login(`guess-${i}`, 'wrong', '198.51.100.7')).statusCode).toBe(401);
    const res = await login('demo', ks.sim.keystone.userByName('demo')!.password, '198.51.100.7');
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('counts in a sliding window per name (without case) and per address, and forgives a name on success', () => {
    let now = 0;
    const t = new LoginThrottle({ perName: 2, perAddress: 3, windowMs: 60_000 }, () => now);
    t.failed('a', 'x');
    now = 10_000;
    t.failed('a', 'x');
    expect(t.retryAfter('a', 'y')).toBe(50);
    now = 59_500;
    expect(t.retryAfter('a', 'y')).toBe(1);
    // The first failure leaves the window: one is below the limit.
    now = 60_001;
    expect(t.retryAfter('a', 'y')).toBeNull();
    t.failed('b', 'x');
    expect(t.retryAfter('c', 'x')).toBeNull();
    t.failed('b', 'x');
    expect(t.retryAfter('c', 'x')).toBe(10);
    t.failed('d', 'z');
    t.succeeded('d');
    t.failed('d', 'z');
    expect(t.retryAfter('d', 'w')).toBeNull();
    expect(t.retryAfter('D', 'z')).toBeNull();
    t.failed('D', 'z');
    expect(t.retryAfter('d', 'w')).not.toBeNull();
  });
});

describe('bodies', () => {
  const post = (payload: string | Buffer) =>
    h.app.inject({
      method: 'POST',
      url: '/v1/pause',
      headers: { 'x-auth-token': admin, 'content-type': 'application/json' },
      payload,
    });

  it('refuses a body that is not UTF-8 with 415, changing nothing', async () => {
    const before = await audit();
    for (const bytes of [
      Buffer.from([0x7b, 0x22, 0x72, 0x65, 0x61, 0x73, 0x6f, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      Buffer.from('{"reason":"caf\u00e9"}', 'latin1'),
      Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
    ]) {
      const res = await post(bytes);
      expect(res.statusCode).toBe(415);
      expect(res.json().error).toMatchObject({ code: 'unsupported-media-type', field: 'body' });
    }
    expect(await audit()).toBe(before);
    const ok = await post(Buffer.from('{"reason":"caf\u00e9"}', 'utf8'));
    expect(ok.statusCode).toBe(200);
    await h.control.resume({});
  });

  it('names a prototype key and where it is, instead of calling the JSON invalid', async () => {
    for (const [payload, field] of <const>[
      ['{"__proto__":{"admin":true}}', 'body.__proto__'],
      ['{"reason":"x","nested":{"__proto__":1}}', 'body.nested.__proto__'],
      ['[{"a":[{"__proto__":null}]}]', 'body[0].a[0].__proto__'],
      ['{"constructor":{"prototype":{"admin":true}}}', 'body.constructor.prototype'],
    ]) {
      const res = await post(payload);
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error, payload).toMatchObject({
        code: 'forbidden-key',
        field,
        message: `${field}: a key named ${field.split('.').pop()} is refused (it would reach an object's prototype)`,
      });
    }
  });

  it('answers headers too large with 431 in the documented error shape', async () => {
    const url = new URL(await h.app.listen({ host: '127.0.0.1', port: 0 }));
    const answer = await new Promise<string>((resolve) => {
      const sock = connect(Number(url.port), '127.0.0.1', () =>
        sock.end(`GET /v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`),
      );
      let data = '';
      sock.on('data', (d) => {
        data += d.toString();
      });
      sock.on('close', () => resolve(data));
      sock.on('error', () => resolve(data));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toMatch(/\r\ncontent-security-policy: default-src 'self'/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as {
      error: Record<string, unknown>;
    };
    expect(body.error).toMatchObject({
      status: 431,
      code: 'headers-too-large',
      field: 'headers',
      message: 'headers: larger than the server accepts',
    });
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
