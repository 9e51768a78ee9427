// Servers deleted through Nova's API and created through /sim/servers, and `changes-since` on
// the server list: deleted servers are listed (status DELETED) only to such a query.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SimServerHandle } from '../../src/sim/http/server.js';
import { host, server, snapshot, usage } from './fixtures.js';
import { adminToken, call, startFrozen } from './http/helpers.js';

let sim: SimServerHandle;
let token: string;
beforeEach(async () => {
  sim = await startFrozen(
    snapshot(
      [host('c1'), host('c2')],
      [server(1, 'c1'), server(2, 'c1', 4096), server(3, 'c2'), server(4, 'c2')],
      {
        serverGroups: [
          {
            id: 'g0000000-0000-4000-8000-000000000001',
            name: 'g',
            policy: 'soft-anti-affinity',
            members: [server(2, 'c1').id, server(3, 'c2').id],
          },
        ],
      },
    ),
  );
  token = await adminToken(sim);
});
afterEach(() => sim.close());

const V = { 'OpenStack-API-Version': 'compute 2.80' };
const iso = (ms: number) => new Date(ms).toISOString();
const list = async (query: string) => {
  const r = await call(`${sim.url}/compute/v2.1/servers/detail?all_tenants=1${query}`, token, { headers: V });
  return r as { status: number; body: { servers: { id: string; status: string; name: string }[] } };
};

describe('server lifecycle and changes-since', () => {
  it('deletes a server: 204, then gone from lists, Placement and its group, DELETED to changes-since', async () => {
    const t0 = sim.cloud.nowMs();
    sim.cloud.advance(10);
    const id = server(2, 'c1').id;
    const del = await call(`${sim.url}/compute/v2.1/servers/${id}`, token, { method: 'DELETE', headers: V });
    expect(del.status).toBe(204);
    expect((await call(`${sim.url}/compute/v2.1/servers/${id}`, token, { headers: V })).status).toBe(404);
    expect((await list('')).body.servers.map((s) => s.id)).not.toContain(id);
    expect(usage(sim.cloud, 'c1')).toBe(8192);
    expect(sim.cloud.groups[0]?.members).toEqual([server(3, 'c2').id]);
    expect(sim.cloud.hostsByName.get('c1')?.servers).toEqual([0]);

    const changed = await list(`&changes-since=${iso(t0)}`);
    expect(changed.status).toBe(200);
    expect(changed.body.servers).toEqual([expect.objectContaining({ id, status: 'DELETED' })]);
    // Unchanged servers are not listed; a window after the deletion lists nothing.
    expect((await list(`&changes-since=${iso(sim.cloud.nowMs() + 1000)}`)).body.servers).toEqual([]);
    // Deleting it again: it is not found.
    const again = await call(`${sim.url}/compute/v2.1/servers/${id}`, token, {
      method: 'DELETE',
      headers: V,
    });
    expect(again.status).toBe(404);
  });

  it('creates a server on a host: newest first, claimed, in its group, paged by marker', async () => {
    const t0 = sim.cloud.nowMs();
    sim.cloud.advance(5);
    const r = await call(`${sim.url}/sim/servers`, null, {
      method: 'POST',
      body: {
        name: 'fresh',
        host: 'c2',
        flavor: { name: 'm1.small', vcpus: 1, ramMB: 2048, diskGB: 10 },
        group: 'g0000000-0000-4000-8000-000000000001',
      },
    });
    expect(r.status).toBe(201);
    const id = (r.body as { server: { id: string } }).server.id;
    const all = (await list('')).body.servers;
    expect(all.map((s) => s.name)).toEqual(['fresh', 'vm-1', 'vm-2', 'vm-3', 'vm-4']);
    expect(usage(sim.cloud, 'c2')).toBe(8192 * 2 + 2048);
    expect(sim.cloud.groups[0]?.members).toContain(id);
    const page = await list(`&limit=2&marker=${all[1]?.id}`);
    expect(page.body.servers.map((s) => s.name)).toEqual(['vm-2', 'vm-3']);
    const host = await list('&host=c2');
    expect(host.body.servers.map((s) => s.name)).toEqual(['fresh', 'vm-3', 'vm-4']);
    expect((await list(`&changes-since=${iso(t0)}`)).body.servers.map((s) => s.name)).toEqual(['fresh']);

    const full = await call(`${sim.url}/sim/servers`, null, {
      method: 'POST',
      body: { name: 'huge', host: 'c1', flavor: { name: 'x', vcpus: 1, ramMB: 600000, diskGB: 1 } },
    });
    expect(full.status).toBe(409);
    const bad = await call(`${sim.url}/sim/servers`, null, {
      method: 'POST',
      body: { name: 'x', host: 'c1' },
    });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/^flavor: expected/);
  });

  it('pages a changes-since listing and refuses changes-since after changes-before', async () => {
    const t0 = sim.cloud.nowMs();
    sim.cloud.advance(1);
    for (const n of [1, 3, 4]) {
      const id = server(n, 'c1').id;
      await call(`${sim.url}/compute/v2.1/servers/${id}`, token, { method: 'DELETE', headers: V });
    }
    const first = await list(`&changes-since=${iso(t0)}&limit=2`);
    expect(first.body.servers.map((s) => s.name)).toEqual(['vm-1', 'vm-3']);
    const next = await list(`&changes-since=${iso(t0)}&limit=2&marker=${first.body.servers[1]?.id}`);
    expect(next.body.servers.map((s) => s.name)).toEqual(['vm-4']);
    const bad = await list(`&changes-since=${iso(t0 + 5000)}&changes-before=${iso(t0)}`);
    expect(bad.status).toBe(400);
    const notTime = await list('&changes-since=yesterday');
    expect(notTime.status).toBe(400);
  });
});
