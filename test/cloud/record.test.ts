import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accessRuleMatches, accessRules } from '../../src/cloud/credentials.js';
import type { ResourceProvider } from '../../src/cloud/openstack/placement.js';
import { mapProvidersToHosts, recordSnapshot } from '../../src/cloud/record.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
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

describe('recordSnapshot on recorded lab responses', () => {
  it('builds a valid snapshot with hosts, servers, groups and history', async () => {
    const s = await cloud.session();
    const { snapshot, warnings } = await recordSnapshot(s, { now: NOW });
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(snapshot)), 'fake')).not.toThrow();
    expect(snapshot).toMatchObject({
      format: 'aicerine-snapshot/1',
      takenAt: '2026-11-29T17:30:00Z',
      source: 'openstack:fake',
    });
    expect(snapshot.hosts.map((h) => h.name)).toEqual(['compute1', 'compute2', 'compute3', 'compute4']);
    const c1 = snapshot.hosts[0];
    expect(c1?.aggregates).toEqual(['aic-contract-agg', 'aic-fixture-gold']);
    expect(c1?.inventory.VCPU).toEqual({ total: 16, reserved: 0, allocationRatio: 4 });
    expect(c1?.inventory.MEMORY_MB).toEqual({ total: 65536, reserved: 512, allocationRatio: 1 });
    expect(c1?.service).toEqual({ state: 'up', status: 'enabled', forcedDown: false });

    const db1 = snapshot.servers.find((x) => x.name === 'aic-fixture-db1');
    expect(db1).toMatchObject({
      host: 'compute1',
      status: 'ACTIVE',
      taskState: null,
      sharedStorage: true,
      sriov: false,
    });
    expect(db1?.flavor).toEqual({ name: 'm1.tiny', vcpus: 1, ramMB: 512, diskGB: 1, extraSpecs: {} });
    // compute3 is in no aggregate declaring storage: local by default.
    expect(snapshot.servers.find((x) => x.name === 'aic-fixture-db2')?.sharedStorage).toBe(false);
    const migrating = snapshot.servers.find((x) => x.name === 'aic-contract-b');
    expect(migrating?.status).toBe('MIGRATING');
    expect(migrating?.taskState).toBe('migrating');

    const group = snapshot.serverGroups.find((g) => g.name === 'aic-fixture-db');
    expect(group).toMatchObject({ policy: 'anti-affinity', rules: { max_server_per_host: 1 } });
    expect(group?.members).toHaveLength(2);
    // Members of a group that no longer exist as servers are dropped, rules {} gives no rules.
    const contract = snapshot.serverGroups.find((g) => g.name === 'aic-contract-group');
    expect(contract?.rules).toBeUndefined();
    for (const m of contract?.members ?? []) expect(snapshot.servers.some((x) => x.id === m)).toBe(true);

    // Only final live migrations with a destination and a known server are history (not the "error" without one).
    expect(snapshot.migrationHistory?.map((m) => m.status).sort()).toEqual([
      'cancelled',
      'completed',
      'failed',
    ]);
    expect(snapshot.migrationHistory?.[0]).toMatchObject({
      source: 'compute1',
      dest: 'compute3',
      ramMB: 2048,
      startedAt: '2026-11-29T17:26:55.000Z',
    });
    expect(warnings).toEqual([]);
  });

  it('asks only list endpoints: calls do not grow with servers, and every call is in the reader rules', async () => {
    const s = await cloud.session();
    const base = s.stats.total;
    await recordSnapshot(s, { now: NOW });
    const calls = s.stats.total - base;
    // versions 2, services, aggregates, hypervisors, servers, groups, migrations, ports, providers, 2 x 4 hosts
    expect(calls).toBe(18);

    const servers = fixture<{ servers: Record<string, unknown>[] }>('nova-servers').servers;
    const many = Array.from({ length: 40 }, (_, i) =>
      servers.map((x) => ({ ...x, id: `${String(x.id).slice(0, 30)}${String(i).padStart(6, '0')}` })),
    ).flat();
    cloud.fake.route('GET /compute/v2.1/servers/detail', { body: { servers: many } });
    const s2 = await cloud.session();
    const base2 = s2.stats.total;
    const { snapshot } = await recordSnapshot(s2, { now: NOW });
    expect(snapshot.servers.length).toBe(many.length);
    expect(s2.stats.total - base2).toBe(calls);

    const rules = accessRules('reader', {
      compute: '/compute/v2.1',
      placement: '/placement',
      network: '/network/v2.0',
    });
    const services: Record<string, string> = {
      compute: 'compute',
      placement: 'placement',
      network: 'network',
    };
    for (const r of cloud.fake.requests) {
      if (r.path.startsWith('/identity') || r.path.endsWith('/')) continue;
      const svc = services[r.path.split('/')[1] ?? ''] ?? '?';
      expect(
        rules.some((rule) => accessRuleMatches(rule, svc, r.method, r.path)),
        `${r.method} ${r.path}`,
      ).toBe(true);
    }
    // Version documents are read without a token, so they need no access rule.
    expect(
      cloud.fake.requests.filter((r) => r.path.endsWith('/')).every((r) => !r.headers['x-auth-token']),
    ).toBe(true);
  });

  it('leaves out hosts without a provider and their servers, saying so', async () => {
    const providers = fixture<{ resource_providers: Record<string, unknown>[] }>('placement-providers');
    cloud.fake.route('GET /placement/resource_providers', {
      body: { resource_providers: providers.resource_providers.filter((p) => p.name !== 'compute3') },
    });
    const hyps = fixture<{ hypervisors: Record<string, unknown>[] }>('nova-hypervisors');
    cloud.fake.route('GET /compute/v2.1/os-hypervisors/detail', {
      body: { hypervisors: hyps.hypervisors.filter((h) => h.hypervisor_hostname !== 'compute3') },
    });
    const { snapshot, warnings } = await recordSnapshot(await cloud.session(), { now: NOW });
    expect(snapshot.hosts.map((h) => h.name)).not.toContain('compute3');
    expect(snapshot.servers.some((x) => x.host === 'compute3')).toBe(false);
    expect(warnings).toContain(
      'host compute3: no Placement resource provider found; host and its servers left out',
    );
    expect(warnings.some((w) => /server .*: on host compute3, which is not recorded; left out/.test(w))).toBe(
      true,
    );
    expect(() => parseSnapshot(JSON.parse(JSON.stringify(snapshot)))).not.toThrow();
  });

  it('marks servers with SR-IOV ports from Neutron, and says when Neutron is missing', async () => {
    const servers = fixture<{ servers: { id: string; name: string }[] }>('nova-servers').servers;
    const target = servers.find((x) => x.name === 'aic-probe-1');
    cloud.fake.route('GET /network/v2.0/ports', (req) => {
      expect(req.query.getAll('binding:vnic_type')).toContain('direct');
      return { body: { ports: [{ id: 'p1', device_id: target?.id, 'binding:vnic_type': 'direct' }] } };
    });
    const { snapshot } = await recordSnapshot(await cloud.session(), { now: NOW });
    expect(snapshot.servers.find((x) => x.id === target?.id)?.sriov).toBe(true);
    expect(snapshot.servers.filter((x) => x.sriov).length).toBe(1);

    cloud.fake.route('GET /network/v2.0/ports', {
      status: 403,
      body: { NeutronError: { message: 'forbidden' } },
    });
    const r2 = await recordSnapshot(await cloud.session(), { now: NOW });
    expect(r2.snapshot.servers.every((x) => x.sriov === undefined)).toBe(true);
    expect(r2.warnings[0]).toMatch(
      /^Neutron ports not readable \(network: GET \/network\/v2\.0\/ports forbidden by policy \(403\)/,
    );
  });

  it('reports progress through every step', async () => {
    const steps: string[] = [];
    await recordSnapshot(await cloud.session(), {
      now: NOW,
      onProgress: (step, done, total) => steps.push(`${done}/${total} ${step}`),
    });
    expect(steps[0]).toBe('0/10 versions');
    expect(steps.at(-1)).toBe('10/10 done');
  });
});

describe('mapProvidersToHosts', () => {
  const rp = (uuid: string, name: string, parent: string | null = null): ResourceProvider => ({
    uuid,
    name,
    generation: 1,
    parentProviderUuid: parent,
    rootProviderUuid: parent ?? uuid,
  });

  it('maps by hypervisor id (the compute node uuid) even when names differ', () => {
    const m = mapProvidersToHosts(
      [rp('u1', 'node1.example.com'), rp('u2', 'node2.example.com')],
      [
        {
          id: 'u1',
          hypervisorHostname: 'node1.example.com',
          serviceHost: 'compute-a',
          state: 'up',
          status: 'enabled',
        },
        {
          id: 'u2',
          hypervisorHostname: 'node2.example.com',
          serviceHost: 'compute-b',
          state: 'up',
          status: 'enabled',
        },
      ],
    );
    expect(m.get('compute-a')?.uuid).toBe('u1');
    expect(m.get('compute-b')?.uuid).toBe('u2');
  });

  it('falls back to the provider name, and never maps a child provider', () => {
    const m = mapProvidersToHosts([rp('u1', 'compute1'), rp('c1', 'compute1_pf0', 'u1')], []);
    expect(m.get('compute1')?.uuid).toBe('u1');
    expect(m.has('compute1_pf0')).toBe(false);
  });
});
