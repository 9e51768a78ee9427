import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeRatio, probeRatioOwner } from '../../src/cloud/ratio-probe.js';
import { type FakeCloud, startFakeCloud } from './fake-cloud.js';
import { fixture } from './fake-server.js';

const RP = '4b747605-cecf-49e8-ac42-e316b4d09f13';
let cloud: FakeCloud;
let ratio: number;
let generation: number;

beforeEach(async () => {
  cloud = await startFakeCloud();
  ratio = 4;
  generation = 1;
  const inv = fixture<{ inventories: Record<string, Record<string, number>> }>(
    'placement-inventories-compute1',
  );
  cloud.fake.route(`GET /placement/resource_providers/${RP}/inventories`, () => ({
    body: {
      resource_provider_generation: generation,
      inventories: { ...inv.inventories, VCPU: { ...inv.inventories.VCPU, allocation_ratio: ratio } },
    },
  }));
  cloud.fake.route(`PUT /placement/resource_providers/${RP}/inventories/VCPU`, (req) => {
    const body = req.body as Record<string, number>;
    if (body.resource_provider_generation !== generation)
      return { status: 409, body: fixture('placement-409') };
    ratio = body.allocation_ratio ?? ratio;
    generation++;
    return { body: { ...body, resource_provider_generation: generation } };
  });
});
afterEach(async () => {
  await cloud.close();
});

describe('probeRatioOwner', () => {
  it('finds Placement owning the ratio when the nudge stays, and restores it', async () => {
    const s = await cloud.session();
    const r = await probeRatioOwner(s.placement, 'compute1', RP, { waitMs: 1000, sleep: async () => {} });
    expect(r).toMatchObject({
      host: 'compute1',
      original: 4,
      probe: 4.0001,
      observed: 4.0001,
      pinned: false,
    });
    expect(ratio).toBe(4);
  });

  it('finds nova.conf owning it when nova-compute rewrites the ratio during the wait, and keeps that', async () => {
    const s = await cloud.session();
    const r = await probeRatioOwner(s.placement, 'compute1', RP, {
      waitMs: 1000,
      sleep: async () => {
        ratio = 16;
        generation++;
      },
    });
    expect(r).toMatchObject({ original: 4, observed: 16, pinned: true });
    expect(ratio).toBe(16);
    expect(cloud.fake.requests.filter((q) => q.method === 'PUT')).toHaveLength(1);
  });

  it('nudges by less than one whole unit of capacity', () => {
    for (const [ratio, usable] of [
      [4, 16],
      [1.5, 7],
      [16, 1000],
      [1, 0],
    ] as const) {
      const p = probeRatio(ratio, usable);
      expect(p).toBeGreaterThan(ratio);
      expect(Math.floor(usable * p)).toBe(Math.floor(usable * ratio));
    }
  });
});
