// Records the real lab after building a known state in it, and compares.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import {
  adminSession,
  bootServers,
  cleanupLab,
  createAggregate,
  createServerGroup,
  uniqueName,
} from './lab.js';

const P = uniqueName('rec');
let s: CloudSession;
let servers: NovaServer[];
let groupId: string;
let compute4ServiceId: string;

beforeAll(async () => {
  s = await adminSession();
  await cleanupLab(s, P);
  await createAggregate(s, `${P}-gold`, ['compute1', 'compute2'], { 'aicerine:shared_storage': 'true' });
  await createAggregate(s, `${P}-silver`, ['compute3', 'compute4']);
  groupId = await createServerGroup(s, `${P}-db`, 'anti-affinity', { max_server_per_host: 1 });
  servers = await bootServers(s, [
    { name: `${P}-web1`, host: 'compute1' },
    { name: `${P}-web2`, host: 'compute2', flavor: 'm1.medium', metadata: { 'aicerine:exclude': 'true' } },
    { name: `${P}-web3`, host: 'compute3', flavor: 'm1.tiny' },
    { name: `${P}-db1`, host: 'compute1', group: groupId },
    { name: `${P}-db2`, host: 'compute2', group: groupId },
  ]);
  const svc = (await s.nova.listServices()).find((x) => x.host === 'compute4');
  if (!svc) throw new Error('lab has no compute4');
  compute4ServiceId = svc.id;
  await s.nova.setServiceStatus(compute4ServiceId, 'disabled', `${P} maintenance`);
});

afterAll(async () => {
  if (!s) return;
  if (compute4ServiceId) await s.nova.setServiceStatus(compute4ServiceId, 'enabled');
  await cleanupLab(s, P);
});

describe('record against the lab', () => {
  it('records what was created, as a valid aicerine-snapshot/1', async () => {
    const { snapshot } = await recordSnapshot(s, { neutron: 'auto' });
    const parsed = parseSnapshot(JSON.parse(JSON.stringify(snapshot)), 'lab');
    expect(parsed.format).toBe('aicerine-snapshot/1');
    expect(snapshot.source).toBe('openstack:env');

    const host = (n: string) => snapshot.hosts.find((h) => h.name === n);
    expect(host('compute1')?.aggregates).toContain(`${P}-gold`);
    expect(host('compute3')?.aggregates).toContain(`${P}-silver`);
    expect(host('compute4')?.service).toMatchObject({ state: 'up', status: 'disabled', forcedDown: false });
    expect(host('compute4')?.service.disabledReason).toBe(`${P} maintenance`);
    expect(host('compute1')?.inventory.VCPU?.total).toBeGreaterThan(0);
    expect(host('compute1')?.inventory.MEMORY_MB?.allocationRatio).toBeGreaterThan(0);

    for (const created of servers) {
      const rec = snapshot.servers.find((x) => x.id === created.id);
      expect(rec, created.name).toBeDefined();
      expect(rec?.host).toBe(created.host);
      expect(rec?.status).toBe('ACTIVE');
    }
    const web1 = snapshot.servers.find((x) => x.name === `${P}-web1`);
    const web2 = snapshot.servers.find((x) => x.name === `${P}-web2`);
    const web3 = snapshot.servers.find((x) => x.name === `${P}-web3`);
    expect(web1?.flavor).toMatchObject({ name: 'm1.small', vcpus: 1, ramMB: 2048, diskGB: 20 });
    expect(web2?.flavor).toMatchObject({ name: 'm1.medium', vcpus: 2, ramMB: 4096 });
    expect(web2?.metadata).toEqual({ 'aicerine:exclude': 'true' });
    // gold declares shared storage in its aggregate metadata; silver declares nothing.
    expect(web1?.sharedStorage).toBe(true);
    expect(web3?.sharedStorage).toBe(false);
    // The lab's Neutron stub lists no ports: nothing is SR-IOV, and that is known.
    expect(web1?.sriov).toBe(false);

    const group = snapshot.serverGroups.find((g) => g.id === groupId);
    expect(group).toMatchObject({
      name: `${P}-db`,
      policy: 'anti-affinity',
      rules: { max_server_per_host: 1 },
    });
    expect([...(group?.members ?? [])].sort()).toEqual(
      servers
        .filter((x) => x.name.startsWith(`${P}-db`))
        .map((x) => x.id)
        .sort(),
    );

    // Placement usage accounts for what runs on the host.
    const onCompute1 = snapshot.servers.filter((x) => x.host === 'compute1');
    expect(host('compute1')?.usage.MEMORY_MB).toBeGreaterThanOrEqual(
      onCompute1.reduce((sum, x) => sum + x.flavor.ramMB, 0),
    );
  });

  it('makes the same number of API calls whatever the number of servers', async () => {
    const countCalls = async () => {
      const fresh = await adminSession();
      const before = fresh.stats.total;
      await recordSnapshot(fresh, { neutron: 'auto' });
      return fresh.stats.total - before;
    };
    const first = await countCalls();
    await bootServers(s, [
      { name: `${P}-more1`, host: 'compute1', flavor: 'm1.tiny' },
      { name: `${P}-more2`, host: 'compute2', flavor: 'm1.tiny' },
      { name: `${P}-more3`, host: 'compute3', flavor: 'm1.tiny' },
    ]);
    const second = await countCalls();
    expect(second).toBe(first);
    // 2 version documents, services, aggregates, hypervisors, servers, groups, migrations,
    // ports, providers, and 2 per host: independent of servers.
    const hosts = (await s.nova.listServices()).length;
    expect(first).toBe(10 + 2 * hosts);
  });
});
