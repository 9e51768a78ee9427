import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { readJsonFile } from '../../src/formats/json-file.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { importVmr2l, importVmr2lWithWarnings } from '../../src/snapshot/import-vmr2l.js';
import type { VmSeries } from '../../src/traces/bitbrains.js';

// VMR2L has no licence: its files are read in place from ../shared and never copied here.
const SHARED = resolve(import.meta.dirname, '../../../shared/traces/vmr2l-bytedance');
const STREAM = resolve(SHARED, 'json_stream_c1_2022-03-28+32c.json');
const RESET = resolve(SHARED, 'reset_vm_pm0.json');

/** A tiny instance in the VMR2L shape, written for these tests. */
function tinyDoc(): Record<string, unknown> {
  const vm = (id: string, type: string, host: string, allow: number | boolean) => ({
    instance_id: id,
    instance_type: type,
    host_id: host,
    numa: [{ node: 0, cpu: 2, mem_mb: 4096.0 }],
    allow_migration: allow,
  });
  return {
    cluster_list: [
      {
        cluster_name: 'alpha',
        host_info: [
          { node_id: 'h1', status: 'ACTIVE', node_cpu: 16, node_mem_mb: 65536.0, numa: [], rack_id: 1 },
          { node_id: 'h2', status: 'DISABLED', node_cpu: 16, node_mem_mb: 65536.0, numa: [], rack_id: 1 },
          { node_id: 'h3', status: 'OUTAGE', node_cpu: 8, node_mem_mb: 32768.0, numa: [], rack_id: 2 },
        ],
        vm_type_info: [],
        vm_instance: [
          vm('v1', 'small', 'h1', 1),
          vm('v2', 'small', 'h1', 0),
          vm('v3', 'big', 'h2', true),
          vm('v4', 'small', 'h3', false),
        ],
        other_requirement: {
          deployment_set: [
            { granularity: 'host', data: ['v1', 'v2', 'ghost'] },
            { granularity: 'host', data: ['v2', 'v3'] },
            { granularity: 'rack', data: ['v1', 'v4'] },
            { granularity: 'host', data: ['elsewhere'] },
          ],
        },
      },
      {
        cluster_name: 'beta',
        host_info: [
          { node_id: 'h9', status: 'ACTIVE', node_cpu: 8, node_mem_mb: 16384.0, numa: [], rack_id: 1 },
        ],
        vm_type_info: [],
        vm_instance: [vm('v9', 'small', 'h9', 1)],
        other_requirement: { deployment_set: [] },
      },
    ],
    vm_type_list: [
      { vm_type: 'small', request_cpu: 2, request_mem_mb: 4096.0, numa: 1 },
      { vm_type: 'big', request_cpu: 8, request_mem_mb: 32768.0, numa: 2 },
    ],
    general_requirement: { maximum_migration: 10, available_zone: 'zone-x' },
  };
}

function series(cores: number, cpu: number[], memCapacityMB: number, mem: number[]): VmSeries {
  return {
    id: 's',
    cores,
    memCapacityMB,
    stepSeconds: 3600,
    startTs: 0,
    cpuCores: Float32Array.from(cpu),
    memMB: Float32Array.from(mem),
  };
}

describe('importVmr2l on a handwritten instance', () => {
  const { snapshot: s, warnings } = importVmr2lWithWarnings(tinyDoc(), { file: 'tiny_2022-03-28.json' });

  it('makes a valid snapshot: each cluster an aggregate, hosts at ratio 1.0 with summed usage', () => {
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
    expect(s.takenAt).toBe('2022-03-28T00:00:00Z');
    expect(s.source).toBe('trace:vmr2l');
    expect(s.hosts.map((h) => [h.name, h.aggregates, h.availabilityZone])).toEqual([
      ['h1', ['alpha'], 'zone-x'],
      ['h2', ['alpha'], 'zone-x'],
      ['h3', ['alpha'], 'zone-x'],
      ['h9', ['beta'], 'zone-x'],
    ]);
    const h1 = s.hosts[0];
    expect(h1?.inventory.VCPU).toEqual({ total: 16, reserved: 0, allocationRatio: 1 });
    expect(h1?.inventory.MEMORY_MB).toEqual({ total: 65536, reserved: 0, allocationRatio: 1 });
    expect(h1?.usage).toEqual({ VCPU: 4, MEMORY_MB: 8192 });
    expect(s.hosts[1]?.usage).toEqual({ VCPU: 8, MEMORY_MB: 32768 });
    expect(h1?.load).toBeUndefined();
  });

  it('maps host status to the compute service', () => {
    expect(s.hosts[0]?.service).toEqual({ state: 'up', status: 'enabled', forcedDown: false });
    expect(s.hosts[1]?.service).toMatchObject({ state: 'up', status: 'disabled' });
    expect(s.hosts[2]?.service).toMatchObject({ state: 'down', status: 'enabled' });
  });

  it('makes flavors from VM types and excludes VMs that may not migrate', () => {
    const v3 = s.servers.find((v) => v.id === 'v3');
    expect(v3?.flavor).toEqual({ name: 'big', vcpus: 8, ramMB: 32768, diskGB: 0, extraSpecs: {} });
    const excluded = s.servers.filter((v) => v.metadata?.['aicerine:exclude'] === 'true').map((v) => v.id);
    expect(excluded).toEqual(['v2', 'v4']);
    for (const v of s.servers) expect(v.load).toBeUndefined();
  });

  it('turns host-level sets into anti-affinity groups, one group per server, and says what it dropped', () => {
    expect(s.serverGroups).toHaveLength(2);
    expect(s.serverGroups[0]).toMatchObject({ policy: 'anti-affinity', rules: { max_server_per_host: 1 } });
    expect(s.serverGroups.map((g) => g.members)).toEqual([['v1', 'v2'], ['v3']]);
    expect(warnings).toEqual([
      'cluster_list[0] (alpha): 1 rack-level deployment set(s) skipped: Nova has no rack anti-affinity',
      'cluster_list[0] (alpha): 1 VM(s) in more than one deployment set: each kept in its first set only (Nova allows one server group per server)',
      'cluster_list[0] (alpha): 2 deployment-set member(s) are not VMs of this cluster: ignored',
      'cluster_list[0] (alpha): 1 deployment set(s) with no VM of this cluster: skipped',
      'NUMA layout (host_info[].numa, vm_instance[].numa) ignored: capacity is per host, as in Placement',
      'general_requirement.maximum_migration = 10 is not part of a snapshot: give it to the planner as the move budget',
    ]);
  });

  it('imports one cluster when asked, and refuses an unknown one listing the names', () => {
    const beta = importVmr2l(tinyDoc(), {
      cluster: 'beta',
      file: 'reset_vm_pm0.json',
      fileModified: new Date('2026-05-04T10:20:30.456Z'),
    });
    expect(beta.hosts.map((h) => h.name)).toEqual(['h9']);
    expect(beta.servers.map((v) => v.id)).toEqual(['v9']);
    expect(beta.source).toBe('trace:vmr2l:beta');
    expect(beta.takenAt).toBe('2026-05-04T10:20:30Z');
    expect(() => importVmr2l(tinyDoc(), { file: 'undated.json' })).toThrow(
      'undated.json: no date for the snapshot: the file name has no YYYY-MM-DD and no modification time was given',
    );
    expect(() => importVmr2l(tinyDoc(), { cluster: 'gamma', file: 'f.json' })).toThrow(
      'f.json: cluster_list: no cluster named "gamma" (clusters: "alpha", "beta")',
    );
  });

  it('gives loads from series by index when asked, hosts summing their servers', () => {
    const loads = [series(4, [1, 3], 1000, [100, 300]), series(2, [0, 0], 1000, [0, 0])];
    const withLoad = importVmr2l(tinyDoc(), { file: 'tiny_2022-03-28.json', withLoad: loads });
    const byId = new Map(withLoad.servers.map((v) => [v.id, v]));
    // v1 <- series 0: mean 2 of 4 cores = 0.5 of 2 vCPU; mean 200 of 1000 MiB = 0.2 of 4096.
    expect(byId.get('v1')?.load).toEqual({ cpu: 1, memoryMB: 819 });
    expect(byId.get('v2')?.load).toEqual({ cpu: 0, memoryMB: 0 });
    expect(byId.get('v3')?.load).toEqual({ cpu: 4, memoryMB: 6554 });
    // Each cluster starts from series 0 again.
    expect(byId.get('v9')?.load).toEqual({ cpu: 1, memoryMB: 819 });
    expect(withLoad.hosts[0]?.load).toEqual({ cpu: 1, memoryMB: 819 });
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(withLoad)))).not.toThrow();
  });
});

describe('importVmr2l refuses malformed input, naming file, JSON path and value', () => {
  function issues(mutate: (d: Record<string, unknown>) => void): string[] {
    const d = tinyDoc();
    mutate(d);
    try {
      importVmr2l(d, { file: 'x.json' });
    } catch (err) {
      if (err instanceof InputError) return err.message.split('\n');
      throw err;
    }
    throw new Error('accepted a malformed document');
  }
  const cluster0 = (d: Record<string, unknown>): Record<string, unknown[]> =>
    (d.cluster_list as Record<string, unknown[]>[])[0] as Record<string, unknown[]>;

  it('a non-object', () => {
    expect(() => importVmr2l([1, 2], { file: 'x.json' })).toThrow(/^x\.json: /);
  });

  it('a negative host size', () => {
    expect(
      issues((d) => {
        (cluster0(d).host_info?.[0] as Record<string, unknown>).node_cpu = -4;
      }),
    ).toEqual(['x.json: cluster_list[0].host_info[0].node_cpu: expected a positive integer, got -4']);
  });

  it('an unknown host status', () => {
    const [line] = issues((d) => {
      (cluster0(d).host_info?.[1] as Record<string, unknown>).status = 'BROKEN';
    });
    expect(line).toMatch(
      /^x\.json: cluster_list\[0\]\.host_info\[1\]\.status: expected one of .*"OUTAGE".*, got "BROKEN"$/,
    );
  });

  it('a VM on an unknown host, of an unknown type, and a duplicate VM', () => {
    expect(
      issues((d) => {
        const vms = cluster0(d).vm_instance as Record<string, unknown>[];
        (vms[0] as Record<string, unknown>).host_id = 'h77';
        (vms[1] as Record<string, unknown>).instance_type = 'huge';
        (vms[3] as Record<string, unknown>).instance_id = 'v3';
      }),
    ).toEqual([
      'x.json: cluster_list[0].vm_instance[0].host_id: not a host of cluster alpha, got "h77"',
      'x.json: cluster_list[0].vm_instance[1].instance_type: not in vm_type_list, got "huge"',
      'x.json: cluster_list[0].vm_instance[3].instance_id: duplicate VM (also cluster_list[0].vm_instance[2].instance_id), got "v3"',
    ]);
  });

  it('a host whose VMs need more than it has', () => {
    expect(
      issues((d) => {
        (cluster0(d).host_info?.[2] as Record<string, unknown>).node_cpu = 1;
      }),
    ).toEqual(['x.json: cluster_list[0].host_info[2].node_cpu: VMs placed here need 2 vCPUs, got 1']);
  });

  it('a bad allow_migration and a bad granularity', () => {
    const lines = issues((d) => {
      (cluster0(d).vm_instance?.[0] as Record<string, unknown>).allow_migration = 'yes';
      const sets = (cluster0(d) as Record<string, unknown>).other_requirement as {
        deployment_set: { granularity: string }[];
      };
      (sets.deployment_set[0] as { granularity: string }).granularity = 'zone';
    });
    expect(lines[0]).toBe(
      'x.json: cluster_list[0].vm_instance[0].allow_migration: expected true, false, 0 or 1, got "yes"',
    );
    expect(lines[1]).toMatch(
      /^x\.json: cluster_list\[0\]\.other_requirement\.deployment_set\[0\]\.granularity: .*got "zone"$/,
    );
  });
});

describe.runIf(existsSync(STREAM))('importVmr2l on the shared VMR2L files (read in place)', () => {
  const anchors = (s: Snapshot, aggregate: string) => {
    const hosts = s.hosts.filter((h) => h.aggregates[0] === aggregate);
    const names = new Set(hosts.map((h) => h.name));
    const servers = s.servers.filter((v) => names.has(v.host));
    return { hosts, servers };
  };

  it('json_stream_c1: two clusters, 237 + 43 hosts, 1,934 + 155 VMs, 105 pinned, valid', async () => {
    const { snapshot: s, warnings } = importVmr2lWithWarnings(await readJsonFile(STREAM), { file: STREAM });
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
    const b05 = anchors(s, 'b05-dpdk-c1');
    const b04 = anchors(s, 'b04-dpdk-c1');
    expect([b05.hosts.length, b05.servers.length, b04.hosts.length, b04.servers.length]).toEqual([
      237, 1934, 43, 155,
    ]);
    expect(b05.servers.filter((v) => v.metadata?.['aicerine:exclude'] === 'true')).toHaveLength(105);
    // SOURCE.md: CPU 96% allocated, memory 47% in b05.
    const used = b05.hosts.reduce((a, h) => a + (h.usage.VCPU ?? 0), 0);
    const total = b05.hosts.reduce((a, h) => a + (h.inventory.VCPU?.total ?? 0), 0);
    expect(used / total).toBeGreaterThan(0.95);
    expect(used / total).toBeLessThan(0.97);
    expect(b05.hosts.filter((h) => h.service.state === 'down')).toHaveLength(1);
    // 300 host-level sets, shared by both cluster lists; members of the other cluster are dropped.
    const groups = s.serverGroups.filter((g) => g.id.startsWith('b05-dpdk-c1/'));
    expect(groups.length).toBeGreaterThan(290);
    expect(groups.length).toBeLessThanOrEqual(300);
    expect(warnings.some((w) => w.includes('b04-dpdk-c1') && w.includes('not VMs of this cluster'))).toBe(
      true,
    );
    expect(s.takenAt).toBe('2022-03-28T00:00:00Z');
  });

  it('reset_vm_pm0: boolean allow_migration, a disabled host, no sets', async () => {
    const fileModified = (await stat(RESET)).mtime;
    const s = importVmr2l(await readJsonFile(RESET), { file: RESET, fileModified, cluster: 'b04-dpdk-c1' });
    expect(s.takenAt).toBe(`${fileModified.toISOString().slice(0, 19)}Z`);
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(s)))).not.toThrow();
    expect(s.hosts).toHaveLength(43);
    expect(s.servers).toHaveLength(307);
    expect(s.serverGroups).toEqual([]);
    expect(s.servers.some((v) => v.metadata !== undefined)).toBe(false);
    const all = importVmr2l(await readJsonFile(RESET), { file: RESET, fileModified });
    expect(all.hosts.filter((h) => h.service.status === 'disabled')).toHaveLength(1);
  });
});
