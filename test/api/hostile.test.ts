// More than a thousand malformed or hostile requests: wrong types, huge and deeply nested bodies,
// unknown fields, path traversal, bad cursors and ids, bad JSON, wrong content types, header
// abuse, missing, unknown and tampered tokens. None may get a 5xx or a stack trace, every 400 names
// the field at fault, and the store is exactly as it was.
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeystoneTokenIssuer } from '../../src/api/login.js';
import { createRng } from '../../src/util/rng.js';
import { type Harness, NOW, seedPlan, simKeystone, startApi } from './harness.js';

let ks: Awaited<ReturnType<typeof simKeystone>>;
let h: Harness;
let admin: string;
let planId: string;

beforeAll(async () => {
  ks = await simKeystone();
  admin = await ks.adminToken();
  h = await startApi(
    { kind: 'keystone', validator: ks.validator },
    { login: new KeystoneTokenIssuer(ks.sim.authUrl) },
  );
  planId = (await seedPlan(h.store, 'gold', 3)).id;
  await h.store.createExecution(
    { id: 'e1', aggregate: 'gold', planId, startedAt: NOW.toISOString(), startedBy: 'loop:active' },
    [{ step: 1, wave: 1, serverId: 's1', from: 'a', to: 'b', estimatedSeconds: 30 }],
  );
  await h.store.quarantine.quarantine({
    serverId: 's9',
    aggregate: 'gold',
    reason: 'r',
    attempts: 3,
    at: NOW.toISOString(),
  });
});
afterAll(async () => {
  await h.close();
  await ks.sim.close();
});

async function storeState(): Promise<string> {
  const s = h.store;
  return JSON.stringify([
    await s.plans.list(),
    await s.plans.decisions(planId),
    await s.audit.list(),
    await s.executions.list(),
    await s.listMoves('e1'),
    await s.quarantine.list({ state: 'all' }),
    await h.control.pauses(),
    await s.snapshots.list(),
    await s.history.list({}),
    await readdir(h.snapshotDir),
  ]);
}

const LIST_URLS = [
  '/v1/ratio-changes',
  '/v1/plans',
  '/v1/executions',
  '/v1/quarantine',
  '/v1/audit',
  '/v1/data-health',
  '/v1/aggregates',
  '/v1/snapshots',
  '/v1/shadow-reports',
  '/v1/aggregates/gold/history',
  '/v1/aggregates/gold/hosts',
];
/** Lists whose cursor is a name (any text is a valid one). */
const NAME_CURSORS = ['/v1/aggregates', '/v1/aggregates/gold/hosts'];
const BAD_NUMBERS = [
  '-1',
  '0',
  '1001',
  '1.5',
  'abc',
  '',
  '1e3',
  '0x10',
  '%00',
  '9'.repeat(40),
  'NaN',
  'Infinity',
  '[]',
  '{}',
];
const BAD_CURSORS = [
  'abc',
  '-1',
  '1:',
  ':x',
  '../../etc/passwd',
  '%00',
  "1' OR '1'='1",
  '1;DROP TABLE plans',
  'x'.repeat(5000),
  '%E0%A4%A',
];
const BAD_TIMES = ['yesterday', '2026-13-01', '2026-11-31T25:00:00Z', '1700000000', "'; --", 'T', '%20'];
const BAD_IDS = [
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e',
  '..',
  '%00',
  'a%0d%0aSet-Cookie:x=1',
  "1'%20OR%201=1",
  '%F0%9F%92%A9',
  'x'.repeat(300),
  '-1',
  '1.5',
  '%25',
  '%',
  '%zz',
];
const POST_PATHS = (id: string) => [
  `/v1/plans/${id}/approve`,
  `/v1/plans/${id}/reject`,
  `/v1/executions/${id}/abort`,
  `/v1/quarantine/${id}/release`,
  `/v1/aggregates/${id}/pause`,
  `/v1/aggregates/${id}/resume`,
];
const BAD_BODIES: string[] = [
  '{',
  '[1,2',
  '"text"',
  '42',
  '[]',
  '{"steps":"all"}',
  '{"steps":[1,"2"]}',
  '{"steps":[-1]}',
  '{"steps":[1.5]}',
  '{"steps":[1e309]}',
  `{"steps":[${Array.from({ length: 10_001 }, () => 1).join(',')}]}`,
  '{"comment":5}',
  `{"comment":"${'x'.repeat(2001)}"}`,
  '{"reason":{}}',
  '{"admin":true}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  `{"a":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`,
  '\u0000',
  '{"steps":[1],"steps":"x"}',
];
const BAD_WHAT_IFS: string[] = [
  '{}',
  '{"aggregate":5}',
  '{"aggregate":""}',
  '{"aggregate":"a/b"}',
  '{"aggregate":"bronze"}',
  '{"aggregate":"gold","drainHosts":"g1"}',
  '{"aggregate":"gold","drainHosts":["nope"]}',
  '{"aggregate":"gold","drainHosts":[1]}',
  `{"aggregate":"gold","drainHosts":[${Array.from({ length: 1001 }, () => '"g1"').join(',')}]}`,
  '{"aggregate":"gold","addHosts":{"like":"g1"}}',
  '{"aggregate":"gold","addHosts":{"like":"g1","count":0}}',
  '{"aggregate":"gold","addHosts":{"like":"g1","count":-3}}',
  '{"aggregate":"gold","addHosts":{"like":"g1","count":1e9}}',
  '{"aggregate":"gold","addHosts":{"like":"g1","count":"2"}}',
  '{"aggregate":"gold","addHosts":{"like":"s1","count":1}}',
  '{"aggregate":"gold","addHosts":{"like":"g1","count":1,"x":1}}',
  '{"aggregate":"gold","policy":[]}',
  '{"aggregate":"gold","policy":{"mode":"zigzag"}}',
  '{"aggregate":"gold","policy":{"dimensions":[]}}',
  '{"aggregate":"gold","policy":{"dimensions":[{"name":"cpu","weight":0}]}}',
  '{"aggregate":"gold","policy":{"budget":{"maxMoves":-1}}}',
  '{"aggregate":"gold","policy":{"budget":"x"}}',
  '{"aggregate":"gold","policy":{"aggregates":["silver"]}}',
  '{"aggregate":"gold","policy":{"__proto__":{"mode":"pack"}}}',
  '{"aggregate":"gold","policy":{"planner":{"timeLimitMs":-5}}}',
  '{"aggregate":"gold","unknown":true}',
];
const BAD_LOGINS: string[] = [
  '{}',
  '{"username":"admin"}',
  '{"username":"admin","password":"x"}',
  '{"username":"admin","password":"wrong","project":"admin"}',
  '{"username":"nobody","password":"x","project":"admin"}',
  '{"username":"admin","password":"x","project":"admin","userDomain":""}',
  '{"username":5,"password":"x","project":"admin"}',
  '{"username":"admin","password":"x","project":"admin","role":"admin"}',
  `{"username":"admin","password":"${'x'.repeat(5000)}","project":"admin"}`,
  '{"username":"","password":"","project":""}',
];
const BAD_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-16',
  'application/json, text/plain',
  '',
  'application/jsonx',
];

function requests(): InjectOptions[] {
  const out: InjectOptions[] = [];
  const auth = { 'x-auth-token': admin };
  const json = { ...auth, 'content-type': 'application/json' };
  for (const url of LIST_URLS) {
    for (const v of BAD_NUMBERS) out.push({ method: 'GET', url: `${url}?limit=${v}`, headers: auth });
    // Any aggregate name is a valid cursor of the aggregate list (names are its keys).
    if (!NAME_CURSORS.includes(url))
      for (const v of BAD_CURSORS) out.push({ method: 'GET', url: `${url}?cursor=${v}`, headers: auth });
    for (const v of ['from', 'aggregate[]', 'limit[0]', '__proto__', 'constructor', 'x'.repeat(100), 'LIMIT'])
      out.push({ method: 'GET', url: `${url}?${v}=1`, headers: auth });
    out.push({ method: 'GET', url: `${url}?limit=1&limit=2`, headers: auth });
    out.push({ method: 'GET', url: `${url}?cursor=1&cursor=2`, headers: auth });
  }
  for (const [url, key] of [
    ['/v1/plans', 'createdFrom'],
    ['/v1/plans', 'createdBefore'],
    ['/v1/audit', 'from'],
    ['/v1/audit', 'before'],
    ['/v1/data-health', 'since'],
    ['/v1/executions', 'startedFrom'],
    ['/v1/shadow-reports', 'since'],
    ['/v1/aggregates/gold/history', 'since'],
  ] as const)
    for (const v of BAD_TIMES) out.push({ method: 'GET', url: `${url}?${key}=${v}`, headers: auth });
  for (const v of ['open', 'proposed,', ',', 'PROPOSED', 'proposed,,approved', 'x'.repeat(600)])
    out.push({ method: 'GET', url: `/v1/plans?status=${v}`, headers: auth });
  for (const v of ['paused', ''])
    out.push({ method: 'GET', url: `/v1/executions?state=${v}`, headers: auth });
  for (const v of ['ok2', ''])
    out.push({ method: 'GET', url: `/v1/data-health?verdict=${v}`, headers: auth });
  for (const id of BAD_IDS) {
    out.push({ method: 'GET', url: `/v1/plans/${id}`, headers: auth });
    out.push({ method: 'GET', url: `/v1/executions/${id}`, headers: auth });
    out.push({ method: 'GET', url: `/v1/aggregates/${id}`, headers: auth });
    out.push({ method: 'GET', url: `/v1/snapshots/${id}`, headers: auth });
    out.push({ method: 'GET', url: `/v1/plans/${id}/hosts`, headers: auth });
    out.push({ method: 'GET', url: `/v1/aggregates/${id}/hosts`, headers: auth });
    out.push({ method: 'GET', url: `/v1/aggregates/${id}/history`, headers: auth });
    // inject() resolves dot segments as a browser would (/v1/aggregates/../pause is /v1/pause, a
    // valid request); the raw-socket test below sends those as they are.
    if (id !== '..' && id !== '%2e%2e')
      for (const p of POST_PATHS(id)) out.push({ method: 'POST', url: p, headers: json, payload: '{}' });
  }
  for (const body of BAD_BODIES)
    for (const p of [...POST_PATHS(planId).slice(0, 2), '/v1/pause', '/v1/resume', '/v1/executions/e1/abort'])
      out.push({ method: 'POST', url: p, headers: json, payload: body });
  for (const body of BAD_BODIES)
    out.push({ method: 'POST', url: '/v1/snapshots', headers: json, payload: body });
  for (const body of [...BAD_BODIES, ...BAD_WHAT_IFS])
    out.push({ method: 'POST', url: '/v1/what-if', headers: json, payload: body });
  for (const body of [...BAD_BODIES, ...BAD_LOGINS])
    out.push({
      method: 'POST',
      url: '/v1/auth/tokens',
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
  for (const ct of BAD_CONTENT_TYPES)
    for (const p of ['/v1/what-if', '/v1/snapshots', '/v1/auth/tokens'])
      out.push({
        method: 'POST',
        url: p,
        headers: { ...auth, 'content-type': ct },
        payload: '{"aggregate":"gold"}',
      });
  for (const ct of BAD_CONTENT_TYPES)
    for (const p of [`/v1/plans/${planId}/approve`, '/v1/pause', '/v1/quarantine/s9/release'])
      out.push({
        method: 'POST',
        url: p,
        headers: { ...auth, 'content-type': ct },
        payload: '{"steps":[1]}',
      });
  // A body over the limit, announced and not.
  out.push({
    method: 'POST',
    url: '/v1/pause',
    headers: json,
    payload: `{"reason":"${'x'.repeat(200_000)}"}`,
  });
  out.push({
    method: 'POST',
    url: `/v1/plans/${planId}/approve`,
    headers: json,
    payload: 'x'.repeat(70_000),
  });
  // Tokens: missing, unknown, tampered, oversized, odd characters, several at once; on actions.
  // A real admin token that expired an hour ago (issued a token lifetime and an hour before now).
  const adminUser = ks.sim.keystone.userByName('admin')!;
  const project = adminUser.roles.keys().next().value as string;
  const expired = ks.sim.keystone.issue(
    adminUser,
    project,
    ['password'],
    Date.now() - (ks.sim.keystone.tokenLifetimeSeconds + 3600) * 1000,
  );
  const badTokens = [
    expired.token,
    '',
    ' ',
    'null',
    `${admin.slice(0, -4)}AAAA`,
    admin.toLowerCase(),
    'x'.repeat(9000),
    'tok\tken',
    '../../../etc/passwd',
  ];
  for (const t of badTokens)
    for (const p of [
      '/v1/pause',
      '/v1/resume',
      `/v1/plans/${planId}/approve`,
      '/v1/executions/e1/abort',
      '/v1/quarantine/s9/release',
      '/v1/snapshots',
      '/v1/what-if',
    ])
      out.push({
        method: 'POST',
        url: p,
        headers: { 'x-auth-token': t, 'content-type': 'application/json' },
        payload: p === '/v1/what-if' ? '{"aggregate":"gold"}' : '{}',
      });
  for (const t of badTokens)
    for (const url of ['/v1/whoami', '/v1/aggregates/gold/hosts', '/v1/snapshots', '/v1/shadow-reports'])
      out.push({ method: 'GET', url, headers: { 'x-auth-token': t } });
  for (const p of ['/v1/pause', `/v1/plans/${planId}/approve`, '/v1/snapshots'])
    out.push({ method: 'POST', url: p, headers: { 'content-type': 'application/json' }, payload: '{}' });
  out.push({ method: 'GET', url: '/v1/whoami' });
  // Methods the API does not have.
  for (const method of ['PUT', 'DELETE', 'PATCH'] as const)
    for (const url of ['/v1/plans', `/v1/plans/${planId}`, '/v1/pause', '/v1/audit'])
      out.push({ method, url, headers: json, payload: '{}' });
  // Random garbage: fuzzed query strings and bodies from a seeded generator.
  const rng = createRng(9);
  const alphabet = 'abc019%/.?&=:;,-_~!$\'()*+[]{}"\\ \u00e9\u4e2d';
  const garbage = (n: number) =>
    Array.from({ length: n }, () => alphabet[Math.floor(rng.next() * alphabet.length)]).join('');
  for (let i = 0; i < 300; i++) {
    const url = LIST_URLS[i % LIST_URLS.length]!;
    out.push({ method: 'GET', url: `${url}?${garbage(1 + (i % 40))}`, headers: auth });
    out.push({
      method: 'POST',
      url: POST_PATHS(planId)[i % 2]!,
      headers: json,
      payload: garbage(1 + (i % 60)),
    });
  }
  return out;
}

describe('hostile requests', () => {
  it('gets no 5xx, no stack trace, a field in every 400, and leaves the store unchanged', async () => {
    const before = await storeState();
    const all = requests();
    expect(all.length).toBeGreaterThanOrEqual(1000);
    const statuses = new Map<number, number>();
    for (const req of all) {
      const res = await h.app.inject(req);
      const label = `${req.method} ${String(req.url).slice(0, 80)} [${String((req.headers as Record<string, string> | undefined)?.['content-type'])}] ${String(req.payload ?? '').slice(0, 40)}`;
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      expect(res.statusCode, label).toBeLessThan(500);
      expect(res.body, label).not.toMatch(/\n\s+at |node_modules|\/src\/|\.ts:\d+/);
      // Only refusals: nothing valid got through.
      expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
      if (res.statusCode === 400) {
        const err = (res.json() as { error: { field?: string; message: string } }).error;
        expect(err.field, `${label}: ${err.message}`).toMatch(/^(body|query|params|headers|url|request)/);
        expect(err.message.startsWith(err.field!), label).toBe(true);
      }
    }
    expect(await storeState()).toBe(before);
    // Every kind of refusal happened.
    for (const code of [400, 401, 404, 413, 415])
      expect(statuses.get(code) ?? 0, String(code)).toBeGreaterThan(0);
  });

  it('answers a body that is not JSON with 415, and unparseable JSON with 400 on the body', async () => {
    for (const ct of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/pause',
        headers: { 'x-auth-token': admin, 'content-type': ct },
        payload: '{"reason":"x"}',
      });
      expect(res.statusCode, ct).toBe(415);
      expect(res.json().error, ct).toMatchObject({
        code: 'unsupported-media-type',
        field: 'headers.content-type',
      });
    }
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/pause',
      headers: { 'x-auth-token': admin, 'content-type': 'application/json' },
      payload: '{"reason":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({
      code: 'invalid-json',
      field: 'body',
      message: 'body: not valid JSON',
    });
  });

  it('answers malformed HTTP and oversized headers on a real socket without a 5xx', async () => {
    const url = new URL(await h.app.listen({ host: '127.0.0.1', port: 0 }));
    // end: half-close after sending. Node's HTTP server then drops a request still being worked
    // on (a token not yet validated against Keystone) without an answer, so requests that expect
    // one send "Connection: close" and leave the socket open for the server to close.
    const raw = (text: string, end = true) =>
      new Promise<string>((resolve) => {
        const sock = connect(Number(url.port), '127.0.0.1', () => (end ? sock.end(text) : sock.write(text)));
        let data = '';
        sock.on('data', (d) => {
          data += d.toString();
        });
        sock.on('close', () => resolve(data));
        sock.on('error', () => resolve(data));
      });
    const cases = [
      `GET /v1/plans HTTP/1.1\r\nHost: x\r\nX-Auth-Token: ${'a'.repeat(20_000)}\r\n\r\n`,
      'GET /v1/plans HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'POST /v1/pause HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Type: application/json\r\n\r\n{}',
      'GARBAGE\r\n\r\n',
      'GET /v1/plans%zz HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/plans HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n',
    ];
    for (const c of cases) {
      const answer = await raw(c);
      const code = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      if (code !== 0) expect(code, c.slice(0, 60)).toBeLessThan(500);
      expect(answer).not.toMatch(/\n\s+at /);
    }
    const before = await storeState();
    for (const path of ['/v1/aggregates/../pause', '/v1/aggregates/%2e%2e/pause', '/v1/plans/../../pause']) {
      const answer = await raw(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Auth-Token: ${admin}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
        false,
      );
      expect(answer, path).toMatch(/^HTTP\/1\.1 40[04]/);
    }
    expect(await storeState()).toBe(before);
    const health = await fetch(`${url.origin}/v1/health`);
    expect(health.status).toBe(200);
  });
});
