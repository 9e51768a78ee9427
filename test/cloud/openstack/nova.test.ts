import { afterEach, describe, expect, it } from 'vitest';
import { CloudError } from '../../../src/cloud/errors.js';
import { negotiateVersion, versionRangeFromDocument } from '../../../src/cloud/openstack/microversion.js';
import { type FakeCloud, startFakeCloud } from '../fake-cloud.js';
import { type FakeRequest, fixture } from '../fake-server.js';

let cloud: FakeCloud;
let started = false;
afterEach(async () => {
  if (started) await cloud.close();
  started = false;
});
async function start(): Promise<FakeCloud> {
  cloud = await startFakeCloud();
  started = true;
  return cloud;
}

describe('microversions', () => {
  it('reads Nova and Placement version documents', () => {
    expect(versionRangeFromDocument(fixture('nova-version'), 2)).toEqual({ min: [2, 1], max: [2, 93] });
    expect(versionRangeFromDocument(fixture('placement-version'), 1)).toEqual({ min: [1, 0], max: [1, 39] });
    expect(
      versionRangeFromDocument({ versions: [{ id: 'v2.0', version: '', min_version: '' }] }, 2),
    ).toBeUndefined();
  });

  it('uses what it wants when the cloud has more, the cloud max when it has less', () => {
    expect(negotiateVersion('Nova', { min: [2, 1], max: [2, 93] }, [2, 64], [2, 80], 'x')).toEqual([2, 80]);
    expect(negotiateVersion('Nova', { min: [2, 1], max: [2, 70] }, [2, 64], [2, 80], 'x')).toEqual([2, 70]);
  });

  it('refuses a cloud below what is needed, saying both versions', () => {
    expect(() =>
      negotiateVersion('Nova', { min: [2, 1], max: [2, 60] }, [2, 64], [2, 80], 'http://n/v2.1'),
    ).toThrow(
      'Nova at http://n/v2.1 supports microversions up to 2.60, Aicerine needs 2.64 or later. Upgrade Nova',
    );
    expect(() => negotiateVersion('Nova', undefined, [2, 64], [2, 80], 'http://n')).toThrow(
      /publishes no microversion range/,
    );
  });

  it('sends the negotiated microversion on every Nova call', async () => {
    await start();
    const s = await cloud.session();
    await s.nova.listServices();
    const req = cloud.fake.requests.find((r) => r.path.endsWith('/os-services'));
    expect(req?.headers['openstack-api-version']).toBe('compute 2.80');
    expect(req?.headers['x-openstack-nova-api-version']).toBe('2.80');
    expect(req?.query.get('binary')).toBe('nova-compute');
  });

  it('fails every call clearly when the cloud is too old', async () => {
    await start();
    cloud.fake.route('GET /compute/v2.1/', {
      body: { version: { id: 'v2.1', version: '2.53', min_version: '2.1' } },
    });
    const s = await cloud.session();
    const err = (await s.nova.listServers().catch((e: unknown) => e)) as CloudError;
    expect(err).toBeInstanceOf(CloudError);
    expect(err.kind).toBe('microversion');
    expect(err.message).toContain('supports microversions up to 2.53, Aicerine needs 2.64 or later');
  });
});

describe('pagination', () => {
  it('follows next links by marker (never by their host) until the last page', async () => {
    await start();
    const all = fixture<{ servers: { id: string }[] }>('nova-servers').servers;
    cloud.fake.route('GET /compute/v2.1/servers/detail', (req: FakeRequest) => {
      const limit = Number(req.query.get('limit'));
      const marker = req.query.get('marker');
      const start = marker ? all.findIndex((x) => x.id === marker) + 1 : 0;
      const page = all.slice(start, start + limit);
      const body: Record<string, unknown> = { servers: page };
      if (start + limit < all.length) {
        body.servers_links = [
          {
            rel: 'next',
            href: `http://internal-name:8774/v2.1/servers/detail?all_tenants=1&limit=${limit}&marker=${page.at(-1)?.id}`,
          },
        ];
      }
      return { body };
    });
    const s = await cloud.session({ nova: { pageSize: 4 } });
    const servers = await s.nova.listServers();
    expect(servers.map((x) => x.id)).toEqual(all.map((x) => x.id));
    const pages = cloud.fake.requests.filter((r) => r.path.endsWith('/servers/detail'));
    expect(pages).toHaveLength(Math.ceil(all.length / 4));
    expect(pages.every((p) => p.query.get('all_tenants') === '1' && p.query.get('limit') === '4')).toBe(true);
  });

  it('refuses a next link that repeats a marker instead of looping', async () => {
    await start();
    cloud.fake.route('GET /compute/v2.1/flavors/detail', {
      body: {
        flavors: [],
        flavors_links: [{ rel: 'next', href: 'http://x/v2.1/flavors/detail?marker=same' }],
      },
    });
    const s = await cloud.session();
    await expect(s.nova.listFlavors()).rejects.toThrow('GET /flavors/detail: pagination repeats marker same');
  });

  it('pages server groups by offset', async () => {
    await start();
    const groups = Array.from({ length: 5 }, (_, i) => ({
      id: `g${i}`,
      name: `g${i}`,
      policy: 'affinity',
      rules: {},
      members: [],
    }));
    cloud.fake.route('GET /compute/v2.1/os-server-groups', (req) => {
      const offset = Number(req.query.get('offset'));
      const limit = Number(req.query.get('limit'));
      expect(req.query.get('all_projects')).toBe('1');
      return { body: { server_groups: groups.slice(offset, offset + limit) } };
    });
    const s = await cloud.session({ nova: { pageSize: 2 } });
    expect((await s.nova.listServerGroups()).map((g) => g.id)).toEqual(['g0', 'g1', 'g2', 'g3', 'g4']);
    expect(cloud.fake.requests.filter((r) => r.path.endsWith('/os-server-groups'))).toHaveLength(3);
  });
});

describe('live migration actions', () => {
  it('posts os-migrateLive with a host and block_migration auto, never force', async () => {
    await start();
    cloud.fake.route('POST /compute/v2.1/servers/s1/action', { status: 202 });
    const s = await cloud.session();
    await s.nova.liveMigrate('s1', 'compute2');
    const req = cloud.fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/action'));
    expect(req?.body).toEqual({ 'os-migrateLive': { host: 'compute2', block_migration: 'auto' } });
  });

  it('follows the newest migration of the server to its final status', async () => {
    await start();
    const statuses = ['queued', 'preparing', 'running', 'running', 'completed'];
    let poll = 0;
    const old = {
      id: 1,
      instance_uuid: 's1',
      status: 'completed',
      migration_type: 'live-migration',
      source_compute: 'a',
      dest_compute: 'b',
      created_at: '2020-01-01T00:00:00.000000',
      updated_at: null,
    };
    cloud.fake.route('GET /compute/v2.1/os-migrations', (req) => {
      expect(req.query.get('instance_uuid')).toBe('s1');
      const status = statuses[Math.min(poll++, statuses.length - 1)];
      const fresh = {
        ...old,
        id: 7,
        status,
        source_compute: 'compute1',
        dest_compute: 'compute2',
        created_at: new Date().toISOString().replace('Z', ''),
      };
      return { body: { migrations: [fresh, old] } };
    });
    const s = await cloud.session();
    const seen: string[] = [];
    const m = await s.nova.followLiveMigration('s1', {
      since: new Date(Date.now() - 500),
      pollMs: 1,
      onStatus: (x) => seen.push(x.status),
    });
    expect(m).toMatchObject({
      id: 7,
      status: 'completed',
      sourceCompute: 'compute1',
      destCompute: 'compute2',
    });
    expect(seen).toEqual(['queued', 'preparing', 'running', 'completed']);
  });

  it('gives up after its timeout with the last status', async () => {
    await start();
    cloud.fake.route('GET /compute/v2.1/os-migrations', { body: { migrations: [] } });
    const s = await cloud.session();
    await expect(s.nova.followLiveMigration('s1', { timeoutMs: 20, pollMs: 5 })).rejects.toThrow(
      /live migration of server s1 did not finish within 0 s \(last status: not started\)/,
    );
  });

  it('aborts with DELETE and force-completes with the action', async () => {
    await start();
    cloud.fake.route('DELETE /compute/v2.1/servers/s1/migrations/7', { status: 202 });
    cloud.fake.route('POST /compute/v2.1/servers/s1/migrations/7/action', { status: 202 });
    const s = await cloud.session();
    await s.nova.abortMigration('s1', 7);
    await s.nova.forceCompleteMigration('s1', 7);
    const sent = cloud.fake.requests.filter((r) => r.path.includes('/migrations/7'));
    expect(sent.map((r) => r.method)).toEqual(['DELETE', 'POST']);
    expect(sent[1]?.body).toEqual({ force_complete: null });
  });
});
