// The simulator's scheduler and the writes a validation makes, as the lab (Nova Zed) answers
// them: a forced host skips ComputeFilter but not Placement's COMPUTE_STATUS_DISABLED, a
// flavor's required trait is honoured, private flavors, aggregates mirrored into Placement,
// custom traits, and Keystone projects with role grants.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_IMAGE_ID } from '../../../src/sim/http/glance.js';
import type { SimServerHandle } from '../../../src/sim/http/server.js';
import { COMPUTE_STATUS_DISABLED } from '../../../src/sim/model.js';
import { host, snapshot } from '../fixtures.js';
import { adminToken, call, startFrozen } from './helpers.js';

let sim: SimServerHandle;
let token: string;
let nova: string;
let placement: string;
const NV = { 'OpenStack-API-Version': 'compute 2.80' };
const PV = { 'OpenStack-API-Version': 'placement 1.36' };

beforeAll(async () => {
  sim = await startFrozen(snapshot([host('c1'), host('c2')], []));
  token = await adminToken(sim);
  nova = `${sim.url}/compute/v2.1`;
  placement = `${sim.url}/placement`;
});

afterAll(async () => {
  await sim?.close();
});

const h = (name: string) => sim.cloud.hostsByName.get(name)!;

async function flavor(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await call(`${nova}/flavors`, token, {
    method: 'POST',
    headers: NV,
    body: { flavor: { name, vcpus: 1, ram: 512, disk: 1, ...extra } },
  });
  expect(r.status).toBe(200);
  return (r.body as { flavor: { id: string } }).flavor.id;
}

async function boot(name: string, flavorId: string, az?: string) {
  const r = await call(`${nova}/servers`, token, {
    method: 'POST',
    headers: NV,
    body: {
      server: {
        name,
        imageRef: SIM_IMAGE_ID,
        flavorRef: flavorId,
        networks: 'none',
        ...(az ? { availability_zone: az } : {}),
      },
    },
  });
  expect(r.status).toBe(202);
  const id = (r.body as { server: { id: string } }).server.id;
  return (await call(`${nova}/servers/${id}`, token, { headers: NV })).body as {
    server: Record<string, unknown>;
  };
}

async function disable(name: string) {
  const r = await call(`${nova}/os-services/${h(name).serviceUuid}`, token, {
    method: 'PUT',
    headers: NV,
    body: { status: 'disabled', disabled_reason: 'test' },
  });
  expect(r.status).toBe(200);
}

describe('simulated scheduler', () => {
  it('keeps COMPUTE_STATUS_DISABLED on the provider of a disabled service, and removes it on enable', async () => {
    await disable('c2');
    expect(h('c2').rp.traits.has(COMPUTE_STATUS_DISABLED)).toBe(true);
    await call(`${nova}/os-services/${h('c2').serviceUuid}`, token, {
      method: 'PUT',
      headers: NV,
      body: { status: 'enabled' },
    });
    expect(h('c2').rp.traits.has(COMPUTE_STATUS_DISABLED)).toBe(false);
  });

  it('never places an unforced boot on a disabled host; a forced one fails with No valid host while the trait is there', async () => {
    await disable('c1');
    const f = await flavor('plain');
    for (let i = 0; i < 3; i++)
      expect((await boot(`free-${i}`, f)).server['OS-EXT-SRV-ATTR:host']).toBe('c2');
    const forced = await boot('forced', f, 'nova:c1');
    expect(forced.server).toMatchObject({
      status: 'ERROR',
      'OS-EXT-SRV-ATTR:host': null,
      fault: { code: 500, message: 'No valid host was found. ' },
    });
  });

  it('places a forced boot on a disabled host once its provider lacks the trait, BUILD then ACTIVE', async () => {
    h('c1').rp.traits.delete(COMPUTE_STATUS_DISABLED);
    const s = await boot('forced-ok', await flavor('plain2'), 'nova:c1');
    expect(s.server).toMatchObject({
      status: 'BUILD',
      'OS-EXT-STS:task_state': 'spawning',
      'OS-EXT-SRV-ATTR:host': 'c1',
    });
    sim.cloud.advance(3);
    const after = await call(`${nova}/servers/${s.server.id}`, token, { headers: NV });
    expect((after.body as { server: Record<string, unknown> }).server).toMatchObject({
      status: 'ACTIVE',
      'OS-EXT-STS:task_state': null,
    });
  });

  it('honours a flavor requiring a trait no host has', async () => {
    const put = await call(`${placement}/traits/CUSTOM_ONLY_HERE`, token, { method: 'PUT', headers: PV });
    expect(put.status).toBe(201);
    expect(
      (await call(`${placement}/traits/CUSTOM_ONLY_HERE`, token, { method: 'PUT', headers: PV })).status,
    ).toBe(204);
    const f = await flavor('needs-trait');
    await call(`${nova}/flavors/${f}/os-extra_specs`, token, {
      method: 'POST',
      headers: NV,
      body: { extra_specs: { 'trait:CUSTOM_ONLY_HERE': 'required' } },
    });
    expect((await boot('no-trait', f)).server.status).toBe('ERROR');
  });
});

describe('simulated writes', () => {
  it('lists a private flavor only to admins asking for all, and to projects given access', async () => {
    const id = await flavor('private-one', { 'os-flavor-access:is_public': false });
    const names = async (q: string) =>
      (
        (await call(`${nova}/flavors/detail${q}`, token, { headers: NV })).body as {
          flavors: { name: string }[];
        }
      ).flavors.map((x) => x.name);
    expect(await names('')).not.toContain('private-one');
    expect(await names('?is_public=None')).toContain('private-one');
    const access = await call(`${nova}/flavors/${id}/action`, token, {
      method: 'POST',
      headers: NV,
      body: { addTenantAccess: { tenant: sim.keystone.projectByName('admin')!.id } },
    });
    expect(access.status).toBe(200);
    expect(await names('')).toContain('private-one');
    expect(
      (
        await call(`${nova}/flavors`, token, {
          method: 'POST',
          headers: NV,
          body: { flavor: { name: 'private-one', vcpus: 1, ram: 1, disk: 0 } },
        })
      ).status,
    ).toBe(409);
    expect((await call(`${nova}/flavors/${id}`, token, { method: 'DELETE', headers: NV })).status).toBe(202);
    expect(await names('?is_public=None')).not.toContain('private-one');
  });

  it('mirrors aggregate membership into Placement and refuses to delete a non-empty aggregate', async () => {
    const created = await call(`${nova}/os-aggregates`, token, {
      method: 'POST',
      headers: NV,
      body: { aggregate: { name: 'agg-x' } },
    });
    const agg = (created.body as { aggregate: { id: number; uuid: string } }).aggregate;
    const act = (body: unknown) =>
      call(`${nova}/os-aggregates/${agg.id}/action`, token, { method: 'POST', headers: NV, body });
    expect((await act({ add_host: { host: 'c1' } })).status).toBe(200);
    expect((await act({ add_host: { host: 'c1' } })).status).toBe(409);
    expect((await act({ add_host: { host: 'nope' } })).status).toBe(404);
    expect(h('c1').rp.aggregates.has(agg.uuid)).toBe(true);
    const meta = await act({ set_metadata: { metadata: { filter_tenant_id: 'p1' } } });
    expect((meta.body as { aggregate: { metadata: Record<string, string> } }).aggregate.metadata).toEqual({
      filter_tenant_id: 'p1',
    });
    expect(
      (await call(`${nova}/os-aggregates/${agg.id}`, token, { method: 'DELETE', headers: NV })).status,
    ).toBe(400);
    expect((await act({ remove_host: { host: 'c1' } })).status).toBe(200);
    expect(h('c1').rp.aggregates.has(agg.uuid)).toBe(false);
    expect(
      (await call(`${nova}/os-aggregates/${agg.id}`, token, { method: 'DELETE', headers: NV })).status,
    ).toBe(200);
  });

  it('sets provider traits with the generation, and refuses to delete a trait in use', async () => {
    await call(`${placement}/traits/CUSTOM_TMP`, token, { method: 'PUT', headers: PV });
    const rp = h('c2').rp;
    const stale = await call(`${placement}/resource_providers/${rp.uuid}/traits`, token, {
      method: 'PUT',
      headers: PV,
      body: { resource_provider_generation: rp.generation - 1, traits: ['CUSTOM_TMP'] },
    });
    expect(stale.status).toBe(409);
    const ok = await call(`${placement}/resource_providers/${rp.uuid}/traits`, token, {
      method: 'PUT',
      headers: PV,
      body: { resource_provider_generation: rp.generation, traits: [...rp.traits, 'CUSTOM_TMP'] },
    });
    expect(ok.status).toBe(200);
    expect(
      (await call(`${placement}/resource_providers?required=CUSTOM_TMP`, token, { headers: PV })).body,
    ).toMatchObject({
      resource_providers: [{ uuid: rp.uuid }],
    });
    expect(
      (await call(`${placement}/resource_providers?required=CUSTOM_NEVER`, token, { headers: PV })).status,
    ).toBe(400);
    expect(
      (await call(`${placement}/traits/CUSTOM_TMP`, token, { method: 'DELETE', headers: PV })).status,
    ).toBe(409);
  });

  it('creates a project, grants a role on it, scopes a token to it, and deletes it', async () => {
    const ks = sim.authUrl;
    const created = await call(`${ks}/projects`, token, {
      method: 'POST',
      body: { project: { name: 'proj-x', domain_id: 'default' } },
    });
    expect(created.status).toBe(201);
    const pid = (created.body as { project: { id: string } }).project.id;
    expect(
      (await call(`${ks}/projects`, token, { method: 'POST', body: { project: { name: 'proj-x' } } })).status,
    ).toBe(409);
    const roles = (await call(`${ks}/roles?name=admin`, token)).body as { roles: { id: string }[] };
    const admin = sim.keystone.userByName('admin')!;
    expect(
      (
        await call(`${ks}/projects/${pid}/users/${admin.id}/roles/${roles.roles[0]!.id}`, token, {
          method: 'PUT',
        })
      ).status,
    ).toBe(204);
    const scoped = await fetch(`${ks}/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'admin', domain: { name: 'Default' }, password: 'pw' } },
          },
          scope: { project: { id: pid } },
        },
      }),
    });
    expect(scoped.status).toBe(201);
    expect((await call(`${ks}/projects?name=proj-x`, token)).body).toMatchObject({ projects: [{ id: pid }] });
    expect((await call(`${ks}/projects/${pid}`, token, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`${ks}/projects?name=proj-x`, token)).body).toMatchObject({ projects: [] });
  });
});
