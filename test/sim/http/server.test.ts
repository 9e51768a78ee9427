import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimServerHandle } from '../../../src/sim/http/server.js';
import { host, server, snapshot } from '../fixtures.js';
import { adminToken, call, startFrozen } from './helpers.js';

const N = 25;
let sim: SimServerHandle;
let token: string;
let nova: string;
let placement: string;

beforeAll(async () => {
  const servers = Array.from({ length: N }, (_, i) => server(i + 1, i % 2 === 0 ? 'c1' : 'c2', 2048));
  sim = await startFrozen(snapshot([host('c1'), host('c2'), host('c3')], servers));
  token = await adminToken(sim);
  nova = `${sim.url}/compute/v2.1`;
  placement = `${sim.url}/placement`;
});
afterAll(() => sim.close());

const v = (ver: string) => ({ headers: { 'OpenStack-API-Version': `compute ${ver}` } });

describe('keystone', () => {
  it("issues tokens with a catalog and refuses a wrong password with Keystone's body", async () => {
    const bad = await call(`${sim.authUrl}/auth/tokens`, null, {
      method: 'POST',
      body: {
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'admin', domain: { name: 'Default' }, password: 'x' } },
          },
        },
      },
    });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({
      error: {
        code: 401,
        message: 'The request you have made requires authentication.',
        title: 'Unauthorized',
      },
    });
    const ok = await call(`${sim.authUrl}/auth/tokens`, token, {
      method: 'POST',
      body: { auth: { identity: { methods: ['token'], token: { id: token } } } },
    });
    expect(ok.status).toBe(201);
    const catalog = (ok.body as { token: { catalog: { type: string }[] } }).token.catalog.map((c) => c.type);
    expect(catalog).toEqual(expect.arrayContaining(['identity', 'compute', 'placement']));
  });

  it('enforces application credential access rules on Nova and Placement paths with 401', async () => {
    const me = (await call(`${sim.authUrl}/auth/tokens`, token, { headers: { 'X-Subject-Token': token } }))
      .body as {
      token: { user: { id: string } };
    };
    const created = await call(`${sim.authUrl}/users/${me.token.user.id}/application_credentials`, token, {
      method: 'POST',
      body: {
        application_credential: {
          name: 'reader',
          access_rules: [
            { service: 'compute', method: 'GET', path: '/compute/v2.1/os-services' },
            { service: 'placement', method: 'GET', path: '/placement/resource_providers/*/inventories' },
          ],
        },
      },
    });
    expect(created.status).toBe(201);
    const ac = (created.body as { application_credential: { id: string; secret: string } })
      .application_credential;
    const acTok = await call(`${sim.authUrl}/auth/tokens`, null, {
      method: 'POST',
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ac.id, secret: ac.secret },
          },
        },
      },
    });
    expect(acTok.status).toBe(201);
    const t = acTok.headers.get('x-subject-token') as string;
    expect((await call(`${nova}/os-services`, t)).status).toBe(200);
    const denied = await call(`${nova}/os-hypervisors`, t);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toContain('Keystone uri=');
    const rp = sim.cloud.hostsByName.get('c1')?.nodeUuid;
    expect((await call(`${placement}/resource_providers/${rp}/inventories`, t)).status).toBe(200);
    expect((await call(`${placement}/resource_providers/${rp}/usages`, t)).status).toBe(401);
  });

  it('answers 401 without a token', async () => {
    expect((await call(`${nova}/servers/detail`, null)).status).toBe(401);
  });
});

describe('nova', () => {
  it('serves the version document without a token and echoes the microversion', async () => {
    const doc = await call(`${sim.url}/compute/v2.1/`, null);
    expect(doc.status).toBe(200);
    expect((doc.body as { version: { version: string; min_version: string } }).version).toMatchObject({
      version: '2.93',
      min_version: '2.1',
    });
    const r = await call(`${nova}/os-services`, token, v('2.88'));
    expect(r.headers.get('openstack-api-version')).toBe('compute 2.88');
    expect(r.headers.get('x-openstack-nova-api-version')).toBe('2.88');
    expect(r.headers.get('vary')).toContain('OpenStack-API-Version');
  });

  it("refuses unsupported and malformed microversions with Nova's bodies", async () => {
    const hi = await call(`${nova}/os-services`, token, v('2.99'));
    expect(hi.status).toBe(406);
    expect(hi.body).toEqual({
      computeFault: {
        code: 406,
        message: 'Version 2.99 is not supported by the API. Minimum is 2.1 and maximum is 2.93.',
      },
    });
    const bad = await call(`${nova}/os-services`, token, v('2.x'));
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      badRequest: {
        code: 400,
        message: 'API Version String 2.x is of invalid format. Must be of format MajorNum.MinorNum.',
      },
    });
  });

  it('pages servers with limit/marker and a next link until the last short page', async () => {
    const seen: string[] = [];
    let url: string | null = `${nova}/servers/detail?all_tenants=1&limit=10`;
    let pages = 0;
    while (url) {
      const r = await call(url, token, v('2.88'));
      expect(r.status).toBe(200);
      const body = r.body as { servers: { id: string }[]; servers_links?: { rel: string; href: string }[] };
      seen.push(...body.servers.map((s) => s.id));
      url = body.servers_links?.find((l) => l.rel === 'next')?.href ?? null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(N);
    const badMarker = await call(`${nova}/servers/detail?marker=nope`, token);
    expect(badMarker.body).toEqual({ badRequest: { code: 400, message: 'marker [nope] not found' } });
  });

  it('filters servers by host through the host index, and embeds flavors from 2.47', async () => {
    const r = await call(`${nova}/servers/detail?all_tenants=1&host=c2`, token, v('2.47'));
    const servers = (r.body as { servers: Record<string, unknown>[] }).servers;
    expect(servers).toHaveLength(12);
    expect(servers.every((s) => s['OS-EXT-SRV-ATTR:host'] === 'c2')).toBe(true);
    expect(servers[0]?.flavor).toMatchObject({
      vcpus: 2,
      ram: 2048,
      original_name: 'f2048',
      extra_specs: {},
    });
  });

  it('live-migrates through the API and shows the record in os-migrations and server migrations', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    const post = await call(`${nova}/servers/${id}/action`, token, {
      method: 'POST',
      body: { 'os-migrateLive': { host: 'c3', block_migration: 'auto' } },
      ...v('2.88'),
    });
    expect(post.status).toBe(202);
    sim.cloud.advance(2);
    const inProgress = await call(`${nova}/servers/${id}/migrations`, token, v('2.80'));
    const ms = (inProgress.body as { migrations: Record<string, unknown>[] }).migrations;
    expect(ms).toHaveLength(1);
    expect(ms[0]).toMatchObject({
      status: 'running',
      source_compute: 'c1',
      dest_compute: 'c3',
      server_uuid: id,
    });
    const mid = ms[0]?.id as number;
    const forced = await call(`${nova}/servers/${id}/migrations/${mid}/action`, token, {
      method: 'POST',
      body: { force_complete: null },
      ...v('2.22'),
    });
    expect(forced.status).toBe(202);
    sim.cloud.advance(2);
    const list = await call(`${nova}/os-migrations?instance_uuid=${id}`, token, v('2.80'));
    const rec = (list.body as { migrations: Record<string, unknown>[] }).migrations[0];
    expect(rec).toMatchObject({ status: 'completed', migration_type: 'live-migration', dest_compute: 'c3' });
    expect(rec).toHaveProperty('uuid');
    expect(rec).toHaveProperty('project_id');
    const again = await call(`${nova}/servers/${id}/migrations/${mid}`, token, v('2.80'));
    expect(again.body).toEqual({
      itemNotFound: { code: 404, message: `Live migration ${mid} for server ${id} is not in progress.` },
    });
  });

  it('lists migrations changed since a time as Nova does: whole seconds, pages, deleted ones gone', async () => {
    // Its own simulator: a server is deleted here.
    const own = await startFrozen(
      snapshot(
        [host('c1'), host('c2'), host('c3')],
        [1, 2, 3].map((n) => server(n, 'c1', 2048)),
      ),
    );
    const token = await adminToken(own);
    const nova = `${own.url}/compute/v2.1`;
    const sim = own;
    const ids = [1, 2, 3].map((n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
    const t0 = sim.cloud.nowMs();
    for (const id of ids) {
      const post = await call(`${nova}/servers/${id}/action`, token, {
        method: 'POST',
        body: { 'os-migrateLive': { host: 'c3', block_migration: 'auto' } },
        ...v('2.88'),
      });
      expect(post.status).toBe(202);
    }
    const since = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    type Listed = { migrations: { uuid: string; instance_uuid: string; updated_at: string | null }[] };
    // Not saved since creation: no updated_at, so no changes-since listing shows them.
    const fresh = await call(`${nova}/os-migrations?changes-since=${since(t0 - 5000)}`, token, v('2.80'));
    expect((fresh.body as Listed).migrations.filter((m) => ids.includes(m.instance_uuid))).toEqual([]);
    sim.cloud.advance(2);
    const all = (await call(`${nova}/os-migrations?changes-since=${since(t0 - 5000)}`, token, v('2.80')))
      .body as Listed;
    const ours = all.migrations.filter((m) => ids.includes(m.instance_uuid));
    expect(ours.map((m) => m.instance_uuid)).toEqual([...ids].reverse());
    // updated_at is kept in whole seconds: asking from within its second still lists it.
    const stamp = Date.parse(`${ours[0]?.updated_at}Z`);
    const within = (await call(`${nova}/os-migrations?changes-since=${since(stamp + 999)}`, token, v('2.80')))
      .body as Listed;
    expect(within.migrations.length).toBe(0);
    const exact = (await call(`${nova}/os-migrations?changes-since=${since(stamp)}`, token, v('2.80')))
      .body as Listed;
    expect(exact.migrations.length).toBeGreaterThan(0);
    // Pages: limit, then the marker of the last one; the next link only on a full page.
    const page1 = await call(
      `${nova}/os-migrations?changes-since=${since(t0 - 5000)}&limit=2`,
      token,
      v('2.80'),
    );
    const p1 = page1.body as Listed & { migrations_links?: { rel: string; href: string }[] };
    expect(p1.migrations).toHaveLength(2);
    const next = new URL(p1.migrations_links?.[0]?.href ?? '').searchParams;
    expect(next.get('marker')).toBe(p1.migrations[1]?.uuid);
    expect(next.get('changes-since')).not.toBeNull();
    const page2 = (
      await call(
        `${nova}/os-migrations?changes-since=${since(t0 - 5000)}&limit=2&marker=${next.get('marker')}`,
        token,
        v('2.80'),
      )
    ).body as Listed & { migrations_links?: unknown };
    expect([...p1.migrations, ...page2.migrations].map((m) => m.uuid)).toEqual(
      all.migrations.map((m) => m.uuid),
    );
    // A server deleted mid-migration takes its records with it (soft-deleted), markers included.
    const gone = ours.at(-1) as Listed['migrations'][number];
    expect(gone.instance_uuid).toBe(ids[0]);
    const del = await call(`${nova}/servers/${gone.instance_uuid}`, token, { method: 'DELETE' });
    expect(del.status).toBe(204);
    const after = (await call(`${nova}/os-migrations?changes-since=${since(t0 - 5000)}`, token, v('2.80')))
      .body as Listed;
    expect(after.migrations.map((m) => m.instance_uuid)).not.toContain(gone.instance_uuid);
    const badMarker = await call(`${nova}/os-migrations?marker=${gone.uuid}`, token, v('2.80'));
    expect(badMarker.body).toEqual({
      badRequest: { code: 400, message: `Marker ${gone.uuid} could not be found.` },
    });
    // The source compute's slot came back with the abandoned migration: the next one runs.
    const running = [...(sim.cloud.hostsByName.get('c1')?.running ?? [])];
    expect(running.map((m) => m.server.uuid)).toEqual([ids[1]]);
    await own.close();
  });

  it('rejects os-migrateLive to an unknown host with 400 as Nova does', async () => {
    const r = await call(`${nova}/servers/00000000-0000-4000-8000-000000000002/action`, token, {
      method: 'POST',
      body: { 'os-migrateLive': { host: 'nosuch', block_migration: 'auto' } },
      ...v('2.88'),
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ badRequest: { code: 400, message: 'Compute host nosuch could not be found.' } });
  });

  it('disables and enables a compute service with PUT os-services/{id}', async () => {
    const svc = sim.cloud.hostsByName.get('c3')?.serviceUuid;
    const r = await call(`${nova}/os-services/${svc}`, token, {
      method: 'PUT',
      body: { status: 'disabled', disabled_reason: 'maintenance' },
      ...v('2.53'),
    });
    expect(r.status).toBe(200);
    expect((r.body as { service: Record<string, unknown> }).service).toMatchObject({
      status: 'disabled',
      disabled_reason: 'maintenance',
      host: 'c3',
    });
    await call(`${nova}/os-services/${svc}`, token, {
      method: 'PUT',
      body: { status: 'enabled' },
      ...v('2.53'),
    });
    expect(sim.cloud.hostsByName.get('c3')?.status).toBe('enabled');
  });
});

describe('placement', () => {
  it('PUTs inventories with the generation and answers a stale one with 409 placement.concurrent_update', async () => {
    const rp = sim.cloud.hostsByName.get('c2')?.nodeUuid;
    const h = { headers: { 'OpenStack-API-Version': 'placement 1.39' } };
    const got = await call(`${placement}/resource_providers/${rp}/inventories`, token, h);
    const body = got.body as {
      resource_provider_generation: number;
      inventories: Record<string, Record<string, number>>;
    };
    const inventories = { ...body.inventories, VCPU: { ...body.inventories.VCPU, allocation_ratio: 2 } };
    const ok = await call(`${placement}/resource_providers/${rp}/inventories`, token, {
      method: 'PUT',
      body: { resource_provider_generation: body.resource_provider_generation, inventories },
      ...h,
    });
    expect(ok.status).toBe(200);
    expect((ok.body as { resource_provider_generation: number }).resource_provider_generation).toBe(
      body.resource_provider_generation + 1,
    );
    const stale = await call(`${placement}/resource_providers/${rp}/inventories`, token, {
      method: 'PUT',
      body: { resource_provider_generation: body.resource_provider_generation, inventories },
      ...h,
    });
    expect(stale.status).toBe(409);
    const err = (stale.body as { errors: Record<string, unknown>[] }).errors[0];
    expect(err).toMatchObject({ status: 409, title: 'Conflict', code: 'placement.concurrent_update' });
    expect(err?.detail).toContain('resource provider generation conflict');
  });

  it('reports usages as the sum of allocations and 404s an unknown provider', async () => {
    const rp = sim.cloud.hostsByName.get('c2')?.nodeUuid;
    const u = await call(`${placement}/resource_providers/${rp}/usages`, token);
    expect((u.body as { usages: Record<string, number> }).usages.MEMORY_MB).toBe(
      sim.cloud.placement.usageOf(sim.cloud.hostsByName.get('c2')?.rp as never, 'MEMORY_MB'),
    );
    const missing = await call(`${placement}/resource_providers/nope/usages`, token);
    expect(missing.status).toBe(404);
    expect((missing.body as { errors: { detail: string }[] }).errors[0]?.detail).toContain(
      'No resource provider with uuid nope found',
    );
  });
});

describe('prometheus', () => {
  it('answers the default policy queries per host and per server', async () => {
    const q = async (query: string) => {
      const r = await call(`${sim.url}/prometheus/api/v1/query?query=${encodeURIComponent(query)}`, null);
      expect(r.status).toBe(200);
      return (r.body as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } })
        .data.result;
    };
    const cpu = await q('sum by (instance) (rate(node_cpu_seconds_total{mode!~"idle|iowait|steal"}[5m]))');
    expect(cpu.map((r) => r.metric.instance).sort()).toEqual(['c1:9100', 'c2:9100', 'c3:9100']);
    const mem = await q('node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes');
    expect(mem).toHaveLength(3);
    const dom = await q('libvirt_domain_info_memory_usage_bytes');
    expect(dom).toHaveLength(N);
    // Static load model: each server uses half its 2048 MiB.
    expect(Number(dom[0]?.value[1])).toBe(1024 * 1048576);
    const direct = await q('aicerine_sim_server_cpu_busy_cores{host="c1"}');
    expect(direct.every((r) => r.metric.host === 'c1')).toBe(true);
    const bad = await call(
      `${sim.url}/prometheus/api/v1/query?query=${encodeURIComponent('histogram_quantile(0.9, x)')}`,
      null,
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 'error', errorType: 'bad_data' });
  });
});

describe('prometheus query_range', () => {
  const range = async (params: Record<string, string>) => {
    const r = await call(`${sim.url}/prometheus/api/v1/query_range?${new URLSearchParams(params)}`, null);
    return r as { status: number; body: Record<string, unknown> };
  };

  it('answers a matrix of [time, "value"] points per series, up to the simulated now', async () => {
    // The frozen clock of the fixture.
    const now = Date.parse('2026-11-29T14:00:00Z') / 1000;
    const r = await range({
      query: 'libvirt_domain_info_memory_usage_bytes',
      start: String(now - 6 * 3600),
      end: String(now + 6 * 3600),
      step: '1h',
    });
    expect(r.status).toBe(200);
    const data = r.body.data as {
      resultType: string;
      result: { metric: Record<string, string>; values: [number, string][] }[];
    };
    expect(data.resultType).toBe('matrix');
    expect(data.result).toHaveLength(N);
    const first = data.result[0]!;
    expect(first.metric.domain).toMatch(/^instance-/);
    // The frozen clock stands at the time the simulator started: no points after it.
    expect(first.values).toHaveLength(7);
    expect(first.values[0]).toEqual([now - 6 * 3600, String(1024 * 1048576)]);
    expect(first.values[1]?.[0]).toBe(now - 5 * 3600);
  });

  it('takes RFC 3339 times and seconds as step, and a scalar as one unlabelled series', async () => {
    const r = await range({
      query: '2',
      start: '2026-11-29T00:00:00Z',
      end: '2026-11-29T00:10:00Z',
      step: '300',
    });
    const t0 = Date.parse('2026-11-29T00:00:00Z') / 1000;
    expect(r.status).toBe(200);
    const result = (r.body.data as { result: { metric: object; values: [number, string][] }[] }).result;
    expect(result).toEqual([
      {
        metric: {},
        values: [
          [t0, '2'],
          [t0 + 300, '2'],
          [t0 + 600, '2'],
        ],
      },
    ]);
  });

  it('refuses bad parameters with Prometheus errors', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ start: '0', end: '10', step: '1' }, 'invalid parameter "query": unknown query'],
      [
        { query: 'x', start: 'yesterday', end: '10', step: '1' },
        'invalid parameter "start": cannot parse "yesterday" to a valid timestamp',
      ],
      [
        { query: 'x', start: '0', step: '1' },
        'invalid parameter "end": cannot parse "" to a valid timestamp',
      ],
      [{ query: 'x', start: '10', end: '0', step: '1' }, 'end timestamp must not be before start time'],
      [
        { query: 'x', start: '0', end: '10', step: 'often' },
        'invalid parameter "step": cannot parse "often" to a valid duration',
      ],
      [
        { query: 'x', start: '0', end: '10', step: '0' },
        'zero or negative query resolution step widths are not accepted. Try a positive integer',
      ],
      [
        { query: 'x', start: '0', end: '100000', step: '1' },
        'exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)',
      ],
      [{ query: 'histogram_quantile(0.9, x)', start: '0', end: '10', step: '1' }, ''],
    ];
    for (const [params, error] of cases) {
      const r = await range(params);
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(r.body).toMatchObject({ status: 'error', errorType: 'bad_data' });
      if (error) expect(r.body.error).toBe(error);
    }
  });
});
