// Allocation ratio writes against the lab's Placement, including a lost generation race.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCloudError } from '../../src/cloud/errors.js';
import type { ResourceProvider } from '../../src/cloud/openstack/placement.js';
import { probeRatioOwner } from '../../src/cloud/ratio-probe.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { adminSession } from './lab.js';

let s: CloudSession;
let rp: ResourceProvider;
let original: number;

beforeAll(async () => {
  s = await adminSession();
  const found = (await s.placement.listResourceProviders({ name: 'compute4' }))[0];
  if (!found) throw new Error('lab: no resource provider compute4');
  rp = found;
  original = (await s.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio ?? 4;
});

afterAll(async () => {
  if (s && rp) await s.placement.setAllocationRatio(rp.uuid, 'VCPU', original);
});

describe('placement inventories against the lab', () => {
  it('writes a VCPU allocation ratio that reads back', async () => {
    const written = await s.placement.setAllocationRatio(rp.uuid, 'VCPU', 3.5);
    expect(written.allocationRatio).toBe(3.5);
    const { inventories } = await s.placement.getInventories(rp.uuid);
    expect(inventories.VCPU?.allocationRatio).toBe(3.5);
    expect(inventories.VCPU?.total).toBe(written.total);
  });

  it('re-reads and retries when another writer moved the generation', async () => {
    // A write with a stale generation is refused with 409 by the real Placement.
    const { generation, inventories } = await s.placement.getInventories(rp.uuid);
    const vcpu = inventories.VCPU;
    if (!vcpu) throw new Error('no VCPU inventory');
    await s.placement.setAllocationRatio(rp.uuid, 'VCPU', 2.5);
    const stale = await s.placement.client
      .request({
        method: 'PUT',
        path: `/resource_providers/${rp.uuid}/inventories/VCPU`,
        headers: await s.placement.headers(),
        body: {
          resource_provider_generation: generation,
          total: vcpu.total,
          reserved: vcpu.reserved,
          allocation_ratio: 2.0,
          min_unit: vcpu.minUnit,
          max_unit: vcpu.maxUnit,
          step_size: vcpu.stepSize,
        },
      })
      .catch((e: unknown) => e);
    expect(isCloudError(stale, 'conflict')).toBe(true);

    // Now race for real: another writer gets in between our read and our write.
    const other = await adminSession();
    const client = s.placement.client;
    const send = client.request.bind(client);
    let interfered = false;
    client.request = async (req) => {
      if (req.method === 'PUT' && !interfered) {
        interfered = true;
        await other.placement.setAllocationRatio(rp.uuid, 'VCPU', 2.0);
      }
      return send(req);
    };
    let attempts = 0;
    try {
      const final = await s.placement.updateInventory(rp.uuid, 'VCPU', (inv) => {
        attempts++;
        return { ...inv, allocationRatio: 2.75 };
      });
      expect(final.allocationRatio).toBe(2.75);
    } finally {
      client.request = send;
    }
    expect(interfered).toBe(true);
    expect(attempts).toBe(2);
    expect((await s.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio).toBe(2.75);
  });

  it('probes that nova-compute leaves the ratio to Placement (the lab leaves cpu_allocation_ratio unset)', async () => {
    await s.placement.setAllocationRatio(rp.uuid, 'VCPU', 4);
    // nova-compute's periodic resource update runs every 60 s: wait past one.
    const r = await probeRatioOwner(s.placement, 'compute4', rp.uuid, { waitMs: 75_000 });
    expect(r).toMatchObject({ original: 4, probe: 4.0001, observed: 4.0001, pinned: false });
    expect((await s.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio).toBe(4);
  });
});
