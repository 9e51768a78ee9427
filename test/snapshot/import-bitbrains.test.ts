import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeJson } from '../../src/formats/json-file.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import type { Inventory, Snapshot } from '../../src/model/snapshot.js';
import { BITBRAINS_TARGET_ALLOCATION, importBitbrains } from '../../src/snapshot/import-bitbrains.js';
import { loadBitbrainsHourly, type VmSeries } from '../../src/traces/bitbrains.js';

const SAMPLE = resolve(import.meta.dirname, '../../data/bitbrains-sample/hourly-sample.csv.gz');
const SHARED_HOURLY = resolve(
  import.meta.dirname,
  '../../../shared/traces/bitbrains-rnd/derived/hourly_2013-8.csv.gz',
);

function vm(
  id: string,
  cores: number,
  memCapacityMB: number,
  cpu: number[],
  mem: number[],
  startTs = 0,
): VmSeries {
  return {
    id,
    cores,
    memCapacityMB,
    stepSeconds: 3600,
    startTs,
    cpuCores: Float32Array.from(cpu),
    memMB: Float32Array.from(mem),
  };
}

const cap = (inv: Inventory | undefined): number =>
  inv ? (inv.total - inv.reserved) * inv.allocationRatio : 0;

function checkUsage(s: Snapshot): void {
  for (const h of s.hosts) {
    const on = s.servers.filter((v) => v.host === h.name);
    expect(h.usage.VCPU).toBe(on.reduce((a, v) => a + v.flavor.vcpus, 0));
    expect(h.usage.MEMORY_MB).toBe(on.reduce((a, v) => a + v.flavor.ramMB, 0));
    expect(h.usage.VCPU as number).toBeLessThanOrEqual(cap(h.inventory.VCPU));
    expect(h.usage.MEMORY_MB as number).toBeLessThanOrEqual(cap(h.inventory.MEMORY_MB));
    expect(h.load?.cpu).toBeCloseTo(
      on.reduce((a, v) => a + (v.load?.cpu ?? 0), 0),
      2,
    );
    expect(h.load?.memoryMB).toBe(on.reduce((a, v) => a + (v.load?.memoryMB ?? 0), 0));
  }
}

describe('importBitbrains', () => {
  const series = [
    vm('1', 2, 8192, [0.5, 1.5, 2], [1000, 2000, 3000], 7200),
    vm('2', 4, 16384, [1, 2, 3], [4000, 5000, 6000], 7200),
    vm('3', 2, 8192, [0, 0], [10, 20], 10800),
  ];

  it('makes servers of the VMs, with flavors of their size and the load of the chosen hour', () => {
    const s = importBitbrains(series, { seed: 1, at: 1 });
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
    expect(s.source).toBe('trace:bitbrains');
    expect(s.takenAt).toBe('1970-01-01T03:00:00Z');
    expect(s.servers.map((v) => [v.id, v.flavor.name, v.flavor.vcpus, v.flavor.ramMB, v.load])).toEqual([
      ['bitbrains-1', 'bb-2c-8192m', 2, 8192, { cpu: 1.5, memoryMB: 2000 }],
      ['bitbrains-2', 'bb-4c-16384m', 4, 16384, { cpu: 2, memoryMB: 5000 }],
      // Starts an hour later: hour 1 is its first.
      ['bitbrains-3', 'bb-2c-8192m', 2, 8192, { cpu: 0, memoryMB: 10 }],
    ]);
    expect(s.servers[0]?.flavor).toBe(s.servers[2]?.flavor);
    checkUsage(s);
  });

  it('is deterministic for a seed and refuses hours outside the trace and too few hosts', () => {
    const a = encodeJson('a.json', importBitbrains(series, { seed: 4, hosts: 2 }));
    expect(a.equals(encodeJson('b.json', importBitbrains(series, { seed: 4, hosts: 2 })))).toBe(true);
    expect(() => importBitbrains(series, { seed: 1, at: 4 })).toThrow(
      '--at must be an hour 0..2 of the trace, got 4',
    );
    const huge = [vm('x', 200, 8192, [0], [0])];
    expect(() => importBitbrains(huge, { seed: 1, hosts: 1 })).toThrow(/1 hosts .* cannot hold these 1 VMs/);
    expect(() => importBitbrains([], { seed: 1 })).toThrow('no VM series');
  });

  it('fills hosts first fit, largest first, up to the target allocation', () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      vm(String(i), 1 + (i % 8), 4096 * (1 + (i % 4)), [0.1], [100]),
    );
    const s = importBitbrains(many, { seed: 3 });
    checkUsage(s);
    const first = s.hosts[0];
    expect((first?.usage.VCPU as number) / cap(first?.inventory.VCPU)).toBeLessThanOrEqual(
      BITBRAINS_TARGET_ALLOCATION,
    );
    const onFirst = s.servers.filter((v) => v.host === first?.name).map((v) => v.flavor.vcpus);
    expect(Math.max(...onFirst)).toBe(8);
  });
});

describe('importBitbrains on the shipped sample', () => {
  it('places 300 real VMs and stays valid at any hour', async () => {
    const series = await loadBitbrainsHourly(SAMPLE);
    for (const at of [0, 100, 167]) {
      const s = importBitbrains(series, { seed: 2, at });
      expect(s.servers).toHaveLength(300);
      expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
      checkUsage(s);
    }
  });
});

describe.runIf(existsSync(SHARED_HOURLY))('importBitbrains on the shared month', () => {
  it('places all 500 VMs on about 70%-allocated hosts', async () => {
    const s = importBitbrains(await loadBitbrainsHourly(SHARED_HOURLY), { seed: 1, at: 300 });
    expect(s.servers).toHaveLength(500);
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
    const used = s.hosts.reduce((a, h) => a + (h.usage.MEMORY_MB ?? 0), 0);
    const total = s.hosts.reduce((a, h) => a + cap(h.inventory.MEMORY_MB), 0);
    expect(used / total).toBeGreaterThan(0.5);
    expect(used / total).toBeLessThanOrEqual(BITBRAINS_TARGET_ALLOCATION);
  });
});
