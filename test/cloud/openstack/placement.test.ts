import { afterEach, describe, expect, it } from 'vitest';
import { type FakeCloud, startFakeCloud } from '../fake-cloud.js';
import { fixture } from '../fake-server.js';

let cloud: FakeCloud;
afterEach(async () => {
  await cloud.close();
});

const RP = '4b747605-cecf-49e8-ac42-e316b4d09f13';

function inventoriesAt(generation: number, ratio = 4) {
  const inv = fixture<{ inventories: Record<string, Record<string, number>> }>(
    'placement-inventories-compute1',
  );
  return {
    resource_provider_generation: generation,
    inventories: { ...inv.inventories, VCPU: { ...inv.inventories.VCPU, allocation_ratio: ratio } },
  };
}

describe('PlacementClient', () => {
  it('reads inventories and usages with the negotiated microversion', async () => {
    cloud = await startFakeCloud();
    const s = await cloud.session();
    const inv = await s.placement.getInventories(RP);
    expect(inv.inventories.VCPU).toEqual({
      total: 16,
      reserved: 0,
      allocationRatio: 4,
      minUnit: 1,
      maxUnit: 16,
      stepSize: 1,
    });
    expect(await s.placement.getUsages(RP)).toMatchObject({
      VCPU: expect.any(Number),
      MEMORY_MB: expect.any(Number),
    });
    const req = cloud.fake.requests.find((r) => r.path.endsWith('/inventories'));
    expect(req?.headers['openstack-api-version']).toBe('placement 1.36');
  });

  it('re-reads and retries a PUT that lost a generation race (409)', async () => {
    cloud = await startFakeCloud();
    let generation = 5;
    cloud.fake.route(`GET /placement/resource_providers/${RP}/inventories`, () => ({
      body: inventoriesAt(generation),
    }));
    let puts = 0;
    cloud.fake.route(`PUT /placement/resource_providers/${RP}/inventories/VCPU`, (req) => {
      puts++;
      const body = req.body as { resource_provider_generation: number; allocation_ratio: number };
      if (puts === 1) {
        generation = 6; // someone else wrote meanwhile
        return { status: 409, body: fixture('placement-409') };
      }
      expect(body.resource_provider_generation).toBe(6);
      return {
        body: {
          ...body,
          resource_provider_generation: 7,
          min_unit: 1,
          max_unit: 16,
          step_size: 1,
          total: 16,
          reserved: 0,
        },
      };
    });
    const s = await cloud.session();
    const out = await s.placement.setAllocationRatio(RP, 'VCPU', 3.5);
    expect(out.allocationRatio).toBe(3.5);
    expect(puts).toBe(2);
    const gets = cloud.fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/inventories'));
    expect(gets).toHaveLength(2);
    const first = cloud.fake.requests.find((r) => r.method === 'PUT')?.body as Record<string, unknown>;
    expect(first).toMatchObject({
      resource_provider_generation: 5,
      total: 16,
      reserved: 0,
      allocation_ratio: 3.5,
      min_unit: 1,
      max_unit: 16,
      step_size: 1,
    });
  });

  it('gives up after the retries and reports the conflict', async () => {
    cloud = await startFakeCloud();
    cloud.fake.route(`PUT /placement/resource_providers/${RP}/inventories/VCPU`, {
      status: 409,
      body: fixture('placement-409'),
    });
    const s = await cloud.session();
    await expect(
      s.placement.updateInventory(RP, 'VCPU', (i) => ({ ...i, allocationRatio: 3 }), {
        maxConflictRetries: 2,
      }),
    ).rejects.toThrow(
      /^placement: PUT \/placement\/resource_providers\/.*\/inventories\/VCPU conflict \(409\)/,
    );
    expect(cloud.fake.requests.filter((r) => r.method === 'PUT')).toHaveLength(3);
  });

  it('does not retry an inventory-in-use conflict, which another read cannot fix', async () => {
    cloud = await startFakeCloud();
    cloud.fake.route(`PUT /placement/resource_providers/${RP}/inventories/VCPU`, {
      status: 409,
      body: {
        errors: [{ status: 409, code: 'placement.inventory.inuse', detail: 'Inventory for VCPU in use' }],
      },
    });
    const s = await cloud.session();
    await expect(s.placement.setAllocationRatio(RP, 'VCPU', 0.5)).rejects.toThrow(
      /Inventory for VCPU in use/,
    );
    expect(cloud.fake.requests.filter((r) => r.method === 'PUT')).toHaveLength(1);
  });

  it('says which resource class is missing', async () => {
    cloud = await startFakeCloud();
    const s = await cloud.session();
    await expect(s.placement.setAllocationRatio(RP, 'VGPU', 1)).rejects.toThrow(
      `resource provider ${RP} has no VGPU inventory`,
    );
  });
});
