// A sanity check at the size the simulator is built for (5,000 hosts, 100,000 servers): it
// fits in memory and pages correctly. Speed is measured in bench/, not here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimClock } from '../../src/sim/clock.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { generatedLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { adminToken, call } from './http/helpers.js';

let sim: SimServerHandle;
let token: string;

beforeAll(async () => {
  const snap = synthesizeSnapshot({
    hosts: 5000,
    servers: 100_000,
    groups: 1000,
    seed: 11,
    aggregates: 10,
    disabled: 5,
  });
  const cloud = new SimCloud(snap, { clock: new SimClock({ speed: 0 }), load: generatedLoadModel() });
  sim = await startSimServer({ cloud, password: 'pw' });
  token = await adminToken(sim);
}, 120_000);
afterAll(() => sim.close());

const page = async (url: string) => {
  const r = await call(url, token, { headers: { 'OpenStack-API-Version': 'compute 2.88' } });
  expect(r.status).toBe(200);
  return r.body as Record<string, unknown> & { servers?: { id: string }[] };
};

describe('simulator at 5,000 hosts and 100,000 servers', () => {
  it('holds the cloud in well under 2 GiB', () => {
    expect(sim.cloud.servers).toHaveLength(100_000);
    expect(process.memoryUsage().heapUsed).toBeLessThan(2 * 1024 ** 3);
  });

  it('pages servers 1,000 at a time from any marker, with next links', async () => {
    const first = await page(`${sim.url}/compute/v2.1/servers/detail?all_tenants=1`);
    expect(first.servers).toHaveLength(1000);
    const deep = sim.cloud.servers[98_999]?.uuid as string;
    const last = await page(`${sim.url}/compute/v2.1/servers/detail?all_tenants=1&marker=${deep}`);
    expect(last.servers).toHaveLength(1000);
    expect(last.servers?.[999]?.id).toBe(sim.cloud.servers[99_999]?.uuid);
    expect(last.servers_links).toBeDefined();
    const beyond = await page(
      `${sim.url}/compute/v2.1/servers/detail?all_tenants=1&marker=${sim.cloud.servers[99_999]?.uuid}`,
    );
    expect(beyond.servers).toHaveLength(0);
    expect(beyond.servers_links).toBeUndefined();
  });

  it('answers a host filter from the host index and pages hypervisors', async () => {
    const h = sim.cloud.hosts[4321];
    const onHost = await page(`${sim.url}/compute/v2.1/servers/detail?all_tenants=1&host=${h?.name}`);
    expect(onHost.servers?.length).toBe(h?.servers.length);
    const hyp = await page(
      `${sim.url}/compute/v2.1/os-hypervisors/detail?limit=1000&marker=${sim.cloud.hosts[3999]?.nodeUuid}`,
    );
    expect((hyp.hypervisors as unknown[]).length).toBe(1000);
    const rps = await call(`${sim.url}/placement/resource_providers`, token);
    expect((rps.body as { resource_providers: unknown[] }).resource_providers).toHaveLength(5000);
  });
});
