import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatReport, runChecks, storageDeclaration } from '../../src/cloud/check.js';
import { nonMigratableReasons } from '../../src/cloud/migratable.js';
import { parseSiteDeclarations } from '../../src/cloud/site.js';
import { decideStorage } from '../../src/cloud/storage.js';
import { InputError } from '../../src/errors.js';
import { type FakeCloud, startFakeCloud } from './fake-cloud.js';
import { fixture } from './fake-server.js';

let cloud: FakeCloud;
beforeEach(async () => {
  cloud = await startFakeCloud();
});
afterEach(async () => {
  await cloud.close();
});

const NOW = () => new Date('2026-11-29T17:30:00Z');

const site = parseSiteDeclarations({
  defaults: {
    cpuAllocationRatioInNovaConf: false,
    maintenanceWindows: [{ days: ['sun'], start: '01:00', end: '05:00' }],
  },
  aggregates: { 'aic-fixture-gold': { ratioBounds: { VCPU: { min: 1, max: 8 } } } },
});

describe('runChecks on recorded lab responses', () => {
  it('reports every precondition per aggregate, with why and what happens', async () => {
    const report = await runChecks(await cloud.session(), { site, now: NOW });
    const gold = report.results.filter((r) => r.aggregate === 'aic-fixture-gold');
    expect(gold.map((r) => `${r.id}:${r.status}`)).toEqual([
      'live-migration:fail',
      'storage:ok',
      'migratable-flavors:info',
      'ratio-owner:ok',
      'maintenance-windows:ok',
      'ratio-bounds:ok',
      'hosts:info',
    ]);
    // The recorded history has completed compute1 -> compute3 only: not within gold.
    expect(gold[0]?.details[0]).toBe(
      'no completed live migration between hosts of this aggregate in os-migrations (0 failed)',
    );
    expect(report.allHold).toBe(false);
    for (const r of report.results) {
      expect(r.why.length).toBeGreaterThan(20);
      expect(r.ifNot.length).toBeGreaterThan(20);
    }
    // compute3 and compute4 are in no aggregate.
    const unassigned = report.results.filter((r) => r.aggregate === '_unassigned_');
    expect(unassigned.find((r) => r.id === 'ratio-bounds')?.status).toBe('fail');
    expect(unassigned.find((r) => r.id === 'storage')?.status).toBe('fail');
    // Which aggregates will be treated as local storage, said in so many words.
    expect(unassigned.find((r) => r.id === 'storage')?.details[0]).toMatch(
      /^treated as local storage: nothing declares this aggregate's storage/,
    );
    expect(gold.find((r) => r.id === 'storage')?.details[0]).toMatch(
      /^storage declared by aggregate metadata aicerine:shared_storage=/,
    );
    const text = formatReport(report);
    expect(text).toContain('aggregate aic-fixture-gold\n  [FAIL] live migration works between the hosts');
    expect(text).toMatch(/\d+ preconditions do not hold\n$/);
  });

  it('names non-migratable flavors used in the aggregate and out-of-bounds ratios', async () => {
    const flavors = fixture<{ flavors: Record<string, unknown>[] }>('nova-flavors');
    cloud.fake.route('GET /compute/v2.1/flavors/detail', {
      body: {
        flavors: flavors.flavors.map((f) =>
          f.name === 'm1.tiny' ? { ...f, extra_specs: { 'hw:cpu_policy': 'dedicated' } } : f,
        ),
      },
    });
    const strict = parseSiteDeclarations({
      aggregates: { 'aic-fixture-gold': { ratioBounds: { VCPU: { min: 1, max: 2 } } } },
    });
    const report = await runChecks(await cloud.session(), { site: strict, now: NOW });
    const gold = report.results.filter((r) => r.aggregate === 'aic-fixture-gold');
    expect(gold.find((r) => r.id === 'migratable-flavors')?.details[0]).toBe(
      'flavor m1.tiny: pinned CPUs (hw:cpu_policy=dedicated) (1 servers)',
    );
    expect(gold.find((r) => r.id === 'ratio-bounds')?.details).toEqual([
      'compute1 VCPU ratio 4 outside [1, 2]',
      'compute2 VCPU ratio 4 outside [1, 2]',
    ]);
    expect(gold.find((r) => r.id === 'ratio-owner')?.status).toBe('fail');
    expect(gold.find((r) => r.id === 'maintenance-windows')?.details).toEqual([
      'none declared for this aggregate (site file: maintenanceWindows)',
    ]);
  });
});

describe('site declarations', () => {
  it('merge an aggregate entry over the defaults', () => {
    expect(site.aggregates['aic-fixture-gold']?.ratioBounds?.VCPU).toEqual({ min: 1, max: 8 });
    expect(site.defaults.cpuAllocationRatioInNovaConf).toBe(false);
  });

  it('refuse bad windows and bounds with their paths', () => {
    const bad = {
      defaults: {
        maintenanceWindows: [{ days: ['someday'], start: '25:00', end: '01:00' }],
        ratioBounds: { VCPU: { min: 4, max: 2 } },
      },
    };
    try {
      parseSiteDeclarations(bad, 'site.yaml');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      const m = (e as InputError).message;
      expect(m).toContain('site.yaml: defaults.maintenanceWindows[0].days[0]');
      expect(m).toContain('site.yaml: defaults.maintenanceWindows[0].start: expected HH:MM (24 h)');
      expect(m).toContain('site.yaml: defaults.ratioBounds.VCPU: min is above max');
    }
  });
});

describe('storage and migratability rules', () => {
  const agg = (name: string, v?: string): { name: string; metadata: Record<string, string> } => ({
    name,
    metadata: v ? { 'aicerine:shared_storage': v } : {},
  });
  it('decide shared storage by volume, flavor, aggregate metadata, policy, default', () => {
    const policy = { default: 'local' as const, aggregates: { silver: 'shared' as const } };
    expect(decideStorage({ imageId: null, flavorExtraSpecs: {} }, [], policy)).toEqual({
      shared: true,
      because: 'boots from a volume',
    });
    expect(
      decideStorage(
        { imageId: 'i', flavorExtraSpecs: { 'aicerine:shared_storage': 'false' } },
        [agg('g', 'true')],
        policy,
      ).shared,
    ).toBe(false);
    expect(decideStorage({ imageId: 'i', flavorExtraSpecs: {} }, [agg('g', 'true')], policy).because).toBe(
      'aggregate g metadata aicerine:shared_storage',
    );
    expect(decideStorage({ imageId: 'i', flavorExtraSpecs: {} }, [agg('silver')], policy)).toEqual({
      shared: true,
      because: 'storage policy for aggregate silver',
    });
    expect(decideStorage({ imageId: 'i', flavorExtraSpecs: {} }, [agg('other')], policy)).toEqual({
      shared: false,
      because: 'storage policy default (local)',
    });
  });

  it('list the extra specs that pin a guest to its host', () => {
    expect(
      nonMigratableReasons({
        'pci_passthrough:alias': 'gpu:1',
        'hw:numa_nodes': '2',
        'hw:cpu_policy': 'shared',
      }),
    ).toEqual(['NUMA topology (hw:numa_nodes=2)', 'PCI passthrough (pci_passthrough:alias=gpu:1)']);
    expect(
      nonMigratableReasons({
        'resources:VGPU': '1',
        'resources:PCI_NIC': '1',
        'trait:CUSTOM_SRIOV_NIC': 'required',
        'hw:mem_page_size': 'large',
      }),
    ).toHaveLength(4);
    expect(
      nonMigratableReasons({ 'trait:CUSTOM_SRIOV_NIC': 'forbidden', 'hw:cpu_policy': 'dedicated' }),
    ).toEqual(['pinned CPUs (hw:cpu_policy=dedicated)']);
  });
});

describe('storageDeclaration', () => {
  it('says how an aggregate is declared, or that it will be treated as local storage', () => {
    const aggs: { name: string; metadata: Record<string, string> }[] = [
      { name: 'gold', metadata: { 'aicerine:shared_storage': 'true' } },
      { name: 'silver', metadata: {} },
    ];
    expect(storageDeclaration('gold', aggs, undefined)).toBe(
      'storage declared by aggregate metadata aicerine:shared_storage=true',
    );
    expect(storageDeclaration('silver', aggs, { default: 'local', aggregates: { silver: 'shared' } })).toBe(
      "storage declared shared by the site file's storage.aggregates",
    );
    expect(storageDeclaration('silver', aggs, { default: 'shared' })).toBe(
      "storage declared shared by the site file's storage.default",
    );
    expect(storageDeclaration('silver', aggs, undefined)).toMatch(/^treated as local storage: /);
  });
});
