import { describe, expect, it } from 'vitest';
import { encodeJson } from '../../src/formats/json-file.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import type { Host, Inventory, Server, Snapshot } from '../../src/model/snapshot.js';
import { type SynthOptions, synthesizeSnapshot } from '../../src/snapshot/synth.js';

const PINNING_KEYS = [
  'hw:cpu_policy',
  'pci_passthrough:alias',
  'hw:numa_nodes',
  'hw:mem_page_size',
  'resources:VGPU',
] as const;

function capacity(inv: Inventory | undefined): number {
  if (inv === undefined) throw new Error('missing inventory');
  return (inv.total - inv.reserved) * inv.allocationRatio;
}

function movable(v: Server): boolean {
  const specs = v.flavor.extraSpecs ?? {};
  return (
    v.status === 'ACTIVE' &&
    v.taskState === null &&
    v.sharedStorage &&
    v.sriov !== true &&
    v.metadata?.['aicerine:exclude'] !== 'true' &&
    specs['hw:cpu_policy'] !== 'dedicated' &&
    !PINNING_KEYS.some((k) => k !== 'hw:cpu_policy' && k in specs)
  );
}

function byHost(s: Snapshot): Map<string, Server[]> {
  const m = new Map<string, Server[]>(s.hosts.map((h) => [h.name, []]));
  for (const v of s.servers) m.get(v.host)?.push(v);
  return m;
}

const CASES: SynthOptions[] = [
  { hosts: 24, servers: 600, groups: 12, seed: 7, aggregates: 2, disabled: 1 },
  { hosts: 50, servers: 5000, groups: 100, seed: 1 },
  { hosts: 300, servers: 3000, groups: 80, seed: 42, aggregates: 5, disabled: 4 },
  { hosts: 1000, servers: 6000, groups: 200, seed: 3, aggregates: 4, disabled: 10 },
];

describe('synthesizeSnapshot', () => {
  it('gives the same bytes for the same options and different ones for another seed', () => {
    const opts = { hosts: 30, servers: 400, groups: 10, seed: 11, aggregates: 3, disabled: 2 };
    const a = encodeJson('a.json', synthesizeSnapshot(opts));
    const b = encodeJson('b.json', synthesizeSnapshot({ ...opts }));
    const c = encodeJson('c.json', synthesizeSnapshot({ ...opts, seed: 12 }));
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
    const s = synthesizeSnapshot(opts);
    expect(s.source).toBe('synthetic:11');
    expect(s.takenAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
  });

  describe.each(CASES)('%o', (opts) => {
    const s = synthesizeSnapshot(opts);
    const servers = byHost(s);
    const hostByName = new Map(s.hosts.map((h) => [h.name, h]));

    it('is accepted by parseSnapshot and has the requested counts', () => {
      expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
      expect(s.hosts).toHaveLength(opts.hosts);
      expect(s.servers).toHaveLength(opts.servers);
      expect(s.serverGroups).toHaveLength(opts.groups);
      expect(new Set(s.servers.map((v) => v.id)).size).toBe(opts.servers);
    });

    it('has usage equal to the sum of flavors, within capacity, at a realistic level', () => {
      const total = { VCPU: [0, 0], MEMORY_MB: [0, 0] };
      for (const h of s.hosts) {
        const on = servers.get(h.name) ?? [];
        expect(h.usage.VCPU).toBe(on.reduce((a, v) => a + v.flavor.vcpus, 0));
        expect(h.usage.MEMORY_MB).toBe(on.reduce((a, v) => a + v.flavor.ramMB, 0));
        expect(h.usage.DISK_GB).toBe(on.reduce((a, v) => a + v.flavor.diskGB, 0));
        for (const rc of ['VCPU', 'MEMORY_MB', 'DISK_GB'] as const) {
          expect(h.usage[rc] as number).toBeLessThanOrEqual(capacity(h.inventory[rc]));
        }
        total.VCPU[0] = (total.VCPU[0] as number) + (h.usage.VCPU as number);
        total.VCPU[1] = (total.VCPU[1] as number) + capacity(h.inventory.VCPU);
        total.MEMORY_MB[0] = (total.MEMORY_MB[0] as number) + (h.usage.MEMORY_MB as number);
        total.MEMORY_MB[1] = (total.MEMORY_MB[1] as number) + capacity(h.inventory.MEMORY_MB);
      }
      for (const [used, cap] of Object.values(total)) {
        expect((used as number) / (cap as number)).toBeGreaterThanOrEqual(0.55);
        expect((used as number) / (cap as number)).toBeLessThanOrEqual(0.8);
      }
    });

    it('has heterogeneous hosts with allocation ratios and some reserved resources', () => {
      const shapes = new Set(
        s.hosts.map((h) => `${h.inventory.VCPU?.allocationRatio}/${h.inventory.MEMORY_MB?.allocationRatio}`),
      );
      expect(shapes.size).toBeGreaterThanOrEqual(3);
      expect(s.hosts.some((h) => (h.inventory.MEMORY_MB?.reserved ?? 0) > 0)).toBe(true);
    });

    it('puts every server in at most one group, of 2 to 8 existing members, all four policies', () => {
      const ids = new Set(s.servers.map((v) => v.id));
      const seen = new Set<string>();
      for (const g of s.serverGroups) {
        expect(g.members.length).toBeGreaterThanOrEqual(2);
        expect(g.members.length).toBeLessThanOrEqual(8);
        for (const m of g.members) {
          expect(ids.has(m)).toBe(true);
          expect(seen.has(m)).toBe(false);
          seen.add(m);
        }
      }
      const count = (p: string): number => s.serverGroups.filter((g) => g.policy === p).length;
      for (const p of ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity']) {
        expect(count(p)).toBeGreaterThanOrEqual(Math.floor(opts.groups / 4));
      }
      const rules = new Set(s.serverGroups.map((g) => g.rules?.max_server_per_host));
      expect(rules).toEqual(new Set([undefined, 1, 2]));
      for (const g of s.serverGroups) {
        if (g.policy !== 'anti-affinity') expect(g.rules).toBeUndefined();
      }
    });

    it('keeps each group in one aggregate, on enabled hosts', () => {
      const hostOf = new Map(s.servers.map((v) => [v.id, hostByName.get(v.host) as Host]));
      for (const g of s.serverGroups) {
        const hosts = g.members.map((m) => hostOf.get(m) as Host);
        expect(new Set(hosts.map((h) => h.aggregates.join(','))).size).toBe(1);
        for (const h of hosts) expect(h.service.status).toBe('enabled');
      }
    });

    it('plants repairable violations of both hard policies', () => {
      const hostOf = new Map(s.servers.map((v) => [v.id, v]));
      let affinity = 0;
      let anti = 0;
      for (const g of s.serverGroups) {
        const members = g.members.map((m) => hostOf.get(m) as Server);
        const perHost = new Map<string, Server[]>();
        for (const v of members) perHost.set(v.host, [...(perHost.get(v.host) ?? []), v]);
        if (g.policy === 'affinity' && perHost.size > 1) {
          affinity++;
          // The majority host has room to take the others back.
          const [main] = [...perHost].sort((a, b) => b[1].length - a[1].length)[0] as [string, Server[]];
          const others = members.filter((v) => v.host !== main);
          const h = hostByName.get(main) as Host;
          expect(
            (h.usage.VCPU as number) + others.reduce((a, v) => a + v.flavor.vcpus, 0),
          ).toBeLessThanOrEqual(capacity(h.inventory.VCPU));
          expect(
            (h.usage.MEMORY_MB as number) + others.reduce((a, v) => a + v.flavor.ramMB, 0),
          ).toBeLessThanOrEqual(capacity(h.inventory.MEMORY_MB));
        }
        const max = g.rules?.max_server_per_host ?? 1;
        const stacked = g.policy === 'anti-affinity' && [...perHost.values()].some((on) => on.length > max);
        if (stacked) anti++;
        if (stacked || (g.policy === 'affinity' && perHost.size > 1)) {
          for (const v of members) expect(movable(v)).toBe(true);
        }
      }
      expect(affinity).toBeGreaterThanOrEqual(1);
      expect(anti).toBeGreaterThanOrEqual(1);
    });

    it('lays out aggregates, availability zones and disabled hosts as asked', () => {
      const K = opts.aggregates ?? 0;
      const aggs = new Set(s.hosts.flatMap((h) => h.aggregates));
      expect(aggs.size).toBe(K);
      for (const h of s.hosts) expect(h.aggregates).toHaveLength(K > 0 ? 1 : 0);
      for (const a of aggs) {
        expect(
          new Set(s.hosts.filter((h) => h.aggregates[0] === a).map((h) => h.availabilityZone)).size,
        ).toBe(1);
      }
      const disabled = s.hosts.filter((h) => h.service.status === 'disabled');
      expect(disabled).toHaveLength(opts.disabled ?? 0);
      for (const h of disabled) {
        expect(h.service).toEqual({
          state: 'up',
          status: 'disabled',
          forcedDown: false,
          disabledReason: 'maintenance',
        });
      }
      for (const h of s.hosts) expect(h.service.state).toBe('up');
    });

    it('has a few % of servers that must not move, for every reason', () => {
      for (const key of PINNING_KEYS) {
        expect(s.servers.some((v) => v.flavor.extraSpecs?.[key] !== undefined)).toBe(true);
      }
      expect(s.servers.some((v) => !v.sharedStorage)).toBe(true);
      expect(s.servers.some((v) => v.sriov === true)).toBe(true);
      expect(s.servers.some((v) => v.metadata?.['aicerine:exclude'] === 'true')).toBe(true);
      expect(s.servers.some((v) => v.status === 'SHUTOFF')).toBe(true);
      expect(s.servers.some((v) => v.taskState !== null)).toBe(true);
      const pinned = s.servers.filter((v) => !movable(v)).length / s.servers.length;
      expect(pinned).toBeGreaterThan(0.05);
      expect(pinned).toBeLessThan(0.2);
    });

    it('has skewed loads whose host totals are the servers plus a small overhead', () => {
      for (const v of s.servers) {
        const load = v.load as { cpu: number; memoryMB: number };
        expect(load.cpu).toBeGreaterThanOrEqual(0);
        expect(load.cpu).toBeLessThanOrEqual(v.flavor.vcpus);
        expect(load.memoryMB).toBeLessThanOrEqual(v.flavor.ramMB);
        if (v.status !== 'ACTIVE') expect(load).toEqual({ cpu: 0, memoryMB: 0 });
      }
      const utilisation: number[] = [];
      for (const h of s.hosts) {
        const on = servers.get(h.name) ?? [];
        const cpu = on.reduce((a, v) => a + (v.load?.cpu ?? 0), 0);
        const mem = on.reduce((a, v) => a + (v.load?.memoryMB ?? 0), 0);
        const load = h.load as { cpu: number; memoryMB: number };
        expect(load.cpu - cpu).toBeGreaterThan(0);
        expect(load.cpu - cpu).toBeLessThan(0.2 + 0.03 * on.length);
        expect(load.memoryMB - mem).toBeGreaterThan(0);
        expect(load.memoryMB - mem).toBeLessThanOrEqual(512 + 32 * on.length + 1);
        const inv = h.inventory.VCPU as Inventory;
        expect(load.cpu).toBeLessThanOrEqual(inv.total - inv.reserved);
        utilisation.push(load.cpu / (inv.total - inv.reserved));
      }
      utilisation.sort((a, b) => a - b);
      const median = utilisation[Math.floor(utilisation.length / 2)] as number;
      expect(utilisation[utilisation.length - 1] as number).toBeGreaterThan(1.8 * median);
    });
  });

  it('offers only flavors that fit the hosts: small hosts for sparse clusters, big ones for dense', () => {
    const dense = synthesizeSnapshot({ hosts: 20, servers: 3000, groups: 0, seed: 5 });
    const sparse = synthesizeSnapshot({ hosts: 2000, servers: 8000, groups: 0, seed: 5 });
    const maxCores = (s: Snapshot): number => Math.max(...s.hosts.map((h) => h.inventory.VCPU?.total ?? 0));
    expect(maxCores(dense)).toBeGreaterThan(2 * maxCores(sparse));
    const biggest = Math.max(...sparse.servers.map((v) => v.flavor.vcpus));
    const smallestHost = Math.min(...sparse.hosts.map((h) => capacity(h.inventory.VCPU)));
    expect(biggest).toBeLessThanOrEqual(smallestHost);
  });

  it('makes the simulator-sized cluster (5,000 hosts, 100,000 servers) within capacity', () => {
    const s = synthesizeSnapshot({
      hosts: 5000,
      servers: 100000,
      groups: 2000,
      seed: 8,
      aggregates: 20,
      disabled: 10,
    });
    expect([s.hosts.length, s.servers.length, s.serverGroups.length]).toEqual([5000, 100000, 2000]);
    const over = s.hosts.filter(
      (h) =>
        (h.usage.VCPU as number) > capacity(h.inventory.VCPU) ||
        (h.usage.MEMORY_MB as number) > capacity(h.inventory.MEMORY_MB),
    );
    expect(over).toEqual([]);
    expect(new Set(s.servers.map((v) => v.host)).size).toBeGreaterThan(4900);
  });

  it('handles a cluster with no servers, and one host', () => {
    const empty = synthesizeSnapshot({ hosts: 3, servers: 0, groups: 0, seed: 0 });
    expect(empty.servers).toEqual([]);
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(empty)))).not.toThrow();
    const one = synthesizeSnapshot({ hosts: 1, servers: 40, groups: 2, seed: 9 });
    expect(new Set(one.servers.map((v) => v.host))).toEqual(new Set(['compute-01']));
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(one)))).not.toThrow();
  });

  it.each([
    [{ hosts: 0 }, /hosts must be an integer 1\.\.20000, got 0/],
    [{ hosts: 2.5 }, /hosts must be an integer 1\.\.20000/],
    [{ hosts: 100_000_000 }, /hosts must be an integer 1\.\.20000, got 100000000/],
    [{ servers: -1 }, /servers must be an integer 0\.\.250000/],
    [{ seed: -3 }, /seed must be an integer 0\.\.4294967295, got -3/],
    [{ aggregates: 11 }, /aggregates must be an integer 0\.\.hosts \(10\), got 11/],
    [{ disabled: 10 }, /disabled must be an integer 0\.\.hosts-1 \(9\), got 10/],
    [{ groups: 51 }, /51 groups of at least 2 servers need at least 102 servers/],
  ])('refuses %o', (bad, message) => {
    expect(() => synthesizeSnapshot({ hosts: 10, servers: 100, groups: 5, seed: 1, ...bad })).toThrow(
      message,
    );
  });
});
