import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultInjector } from '../../src/sim/faults.js';
import type { SimServerHandle } from '../../src/sim/http/server.js';
import { host, server, snapshot } from './fixtures.js';
import { adminToken, call, startFrozen } from './http/helpers.js';

describe('FaultInjector', () => {
  it('hits matching requests at the given rate, a limited number of times', () => {
    const f = new FaultInjector(7);
    f.add({ pattern: '^GET /compute/', kind: 'error', rate: 1, count: 2 });
    expect(f.decide('GET', '/compute/v2.1/servers')?.kind).toBe('error');
    expect(f.decide('POST', '/compute/v2.1/servers')).toBeUndefined();
    expect(f.decide('GET', '/compute/v2.1/os-services')?.kind).toBe('error');
    expect(f.decide('GET', '/compute/v2.1/os-services')).toBeUndefined();
  });

  it('draws the rate from its seeded coin', () => {
    const f = new FaultInjector(3);
    f.add({ pattern: 'placement', kind: 'error', rate: 0.25 });
    let hits = 0;
    for (let i = 0; i < 2000; i++) if (f.decide('GET', '/placement/resource_providers')) hits++;
    expect(hits).toBeGreaterThan(400);
    expect(hits).toBeLessThan(600);
  });

  it('refuses an error status that is not 5xx or 409, and a rate outside [0, 1]', () => {
    const f = new FaultInjector();
    expect(() => f.add({ pattern: 'x', kind: 'error', status: 404 })).toThrow(/5xx/);
    expect(() => f.add({ pattern: 'x', kind: 'error', rate: 2 })).toThrow(/rate/);
  });
});

describe('injected faults over HTTP', () => {
  let sim: SimServerHandle;
  let token: string;
  beforeAll(async () => {
    sim = await startFrozen(snapshot([host('c1')], [server(1, 'c1')]));
    token = await adminToken(sim);
  });
  afterAll(() => sim.close());

  it('answers 5xx, slows down and hangs up as configured through /sim/faults', async () => {
    const add = (body: unknown) => call(`${sim.url}/sim/faults`, null, { method: 'POST', body });
    expect((await add({ pattern: 'os-services', kind: 'error', status: 500, count: 1 })).status).toBe(201);
    expect((await call(`${sim.url}/compute/v2.1/os-services`, token)).status).toBe(500);
    expect((await call(`${sim.url}/compute/v2.1/os-services`, token)).status).toBe(200);

    // Nova's and Placement's conflicts, on writes as the whole-loop fault test injects them.
    await add({ pattern: '^PUT /placement/', kind: 'error', status: 409, count: 1 });
    const conflict = await call(`${sim.url}/placement/resource_providers/x/inventories`, token, {
      method: 'PUT',
      body: {},
    });
    expect(conflict.status).toBe(409);

    await add({ pattern: 'os-aggregates', kind: 'slow', delayMs: 300, count: 1 });
    const t0 = Date.now();
    expect((await call(`${sim.url}/compute/v2.1/os-aggregates`, token)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);

    await add({ pattern: 'os-hypervisors', kind: 'timeout', delayMs: 200, count: 1 });
    await expect(call(`${sim.url}/compute/v2.1/os-hypervisors`, token)).rejects.toThrow();

    const listed = await call(`${sim.url}/sim/faults`, null);
    expect((listed.body as { faults: { hits: number }[] }).faults.map((f) => f.hits)).toEqual([1, 1, 1, 1]);
    await call(`${sim.url}/sim/faults`, null, { method: 'DELETE' });
    expect((await call(`${sim.url}/compute/v2.1/os-hypervisors`, token)).status).toBe(200);
  });

  it('fails migrations and moves the clock through the control endpoints', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    await call(`${sim.url}/sim/migration-failures`, null, { method: 'PUT', body: { servers: [id] } });
    expect(sim.cloud.failServers.has(id)).toBe(true);
    const before = sim.cloud.nowMs();
    await call(`${sim.url}/sim/clock`, null, { method: 'POST', body: { advance: 90 } });
    expect(sim.cloud.nowMs() - before).toBe(90_000);
    const bad = await call(`${sim.url}/sim/clock`, null, { method: 'POST', body: { advance: -1 } });
    expect(bad.status).toBe(400);
  });
});
