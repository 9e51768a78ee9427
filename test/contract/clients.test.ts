// One suite, two clouds: the OpenStack clients of src/cloud against the simulator (default, in
// `npm test`) and against the real lab (AICERINE_CONTRACT_TARGET=lab, `npm run test:lab`).
// A difference between the two is a simulator bug (docs/simulator.md lists the known ones).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudError } from '../../src/cloud/errors.js';
import { FINAL_MIGRATION_STATUSES } from '../../src/cloud/openstack/nova.js';
import { mapProvidersToHosts, recordSnapshot } from '../../src/cloud/record.js';
import { openSession } from '../../src/cloud/session.js';
import { openWorld, type World } from './world.js';

let w: World;
beforeAll(async () => {
  w = await openWorld();
}, 300_000);
afterAll(async () => {
  await w?.close();
}, 300_000);

const MIGRATION_TIMEOUT = 120_000;

async function migrateAndFollow(serverId: string, host: string) {
  const since = new Date();
  await w.session.nova.liveMigrate(serverId, host);
  return w.session.nova.followLiveMigration(serverId, { since, pollMs: 250, timeoutMs: MIGRATION_TIMEOUT });
}

// Polled: Nova (the simulator's or the lab's) offers no event for a migration record's state.
async function waitForStatus(serverId: string, since: Date, status: string) {
  const deadline = Date.now() + MIGRATION_TIMEOUT;
  for (;;) {
    const m = await w.session.nova.latestLiveMigration(serverId, since);
    if (m?.status === status) return m;
    if (m && FINAL_MIGRATION_STATUSES.has(m.status))
      throw new Error(`migration ended ${m.status}, expected ${status}`);
    if (Date.now() > deadline)
      throw new Error(`migration of ${serverId} never reached ${status} (last ${m?.status})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function providerOf(host: string) {
  const rp = mapProvidersToHosts(
    await w.session.placement.listResourceProviders(),
    await w.session.nova.listHypervisors(),
  ).get(host);
  if (!rp) throw new Error(`no resource provider for ${host}`);
  return rp;
}

/** Nova rolls the claims back after it saves the migration as cancelled: wait for Placement. */
// Polled: Placement offers no event for a provider's usages.
async function waitForUsage(rpUuid: string, rc: string, value: number) {
  const deadline = Date.now() + MIGRATION_TIMEOUT;
  for (;;) {
    const u = await w.session.placement.getUsages(rpUuid);
    if (u[rc] === value) return u;
    if (Date.now() > deadline) throw new Error(`usage ${rc} of ${rpUuid} stayed ${u[rc]}, expected ${value}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('versions and reads', () => {
  it('negotiates the microversions Aicerine wants', async () => {
    expect(await w.session.nova.negotiate()).toBe('2.80');
    expect(await w.session.placement.negotiate()).toBe('1.36');
    const range = await w.session.nova.versionRange();
    expect(range).toBeDefined();
  });

  it('lists compute services, hypervisors and their resource providers', async () => {
    const services = await w.session.nova.listServices('nova-compute');
    for (const h of w.hosts) {
      expect(services.find((s) => s.host === h)).toMatchObject({
        binary: 'nova-compute',
        state: 'up',
        status: 'enabled',
      });
    }
    const hypervisors = await w.session.nova.listHypervisors();
    const providers = await w.session.placement.listResourceProviders();
    const rpOf = mapProvidersToHosts(providers, hypervisors);
    for (const h of w.hosts) {
      const rp = rpOf.get(h);
      expect(rp).toBeDefined();
      expect(hypervisors.find((x) => x.serviceHost === h)?.id).toBe(rp?.uuid);
    }
  });

  it('lists servers of all projects with host, embedded flavor and image', async () => {
    const servers = await w.session.nova.listServers();
    for (const f of Object.values(w.servers)) {
      const s = servers.find((x) => x.id === f.id);
      expect(s).toMatchObject({ name: f.name, host: f.host, status: 'ACTIVE', taskState: null });
      expect(s?.flavor).toMatchObject({
        name: 'm1.small',
        vcpus: 1,
        ramMB: 2048,
        diskGB: 20,
        extraSpecs: {},
      });
      expect(s?.instanceName).toMatch(/^instance-[0-9a-f]{8}$/);
      expect(s?.imageId).not.toBeNull();
    }
    const onHost = await w.session.nova.listServers({ host: w.hosts[0] });
    expect(onHost.map((s) => s.id)).toEqual(expect.arrayContaining([w.servers.a.id, w.servers.c.id]));
    expect(onHost.every((s) => s.host === w.hosts[0])).toBe(true);
  });

  it('lists server groups of all projects and aggregates', async () => {
    const groups = await w.session.nova.listServerGroups(true);
    const g = groups.find((x) => x.id === w.groupId);
    expect(g).toMatchObject({ policy: 'anti-affinity', rules: {} });
    expect([...(g?.members ?? [])].sort()).toEqual([w.servers.a.id, w.servers.b.id].sort());
    const aggs = await w.session.nova.listAggregates();
    expect(aggs.find((a) => a.name === w.aggregateName)?.hosts.sort()).toEqual(
      [w.hosts[0], w.hosts[1]].sort(),
    );
  });

  it('reads inventories and usages that count the servers', async () => {
    const rpOf = mapProvidersToHosts(
      await w.session.placement.listResourceProviders(),
      await w.session.nova.listHypervisors(),
    );
    const rp = rpOf.get(w.hosts[0]);
    if (!rp) throw new Error('no provider');
    const inv = await w.session.placement.getInventories(rp.uuid);
    expect(inv.inventories.VCPU).toMatchObject({ minUnit: 1, stepSize: 1 });
    expect(inv.inventories.MEMORY_MB?.total).toBeGreaterThan(0);
    const usage = await w.session.placement.getUsages(rp.uuid);
    expect(usage.MEMORY_MB).toBeGreaterThanOrEqual(2 * 2048);
    expect(await w.session.placement.getTraits(rp.uuid)).toContain('COMPUTE_NODE');
  });

  it('records a snapshot that holds the fixture', async () => {
    const { snapshot } = await recordSnapshot(w.session, { neutron: 'never' });
    for (const f of Object.values(w.servers))
      expect(snapshot.servers.find((s) => s.id === f.id)?.host).toBe(f.host);
    expect(snapshot.hosts.find((h) => h.name === w.hosts[0])?.aggregates).toContain(w.aggregateName);
    expect(snapshot.serverGroups.find((g) => g.id === w.groupId)?.policy).toBe('anti-affinity');
  });
});

describe('writes', () => {
  it('round-trips an allocation ratio with the provider generation, and refuses a stale one with 409', async () => {
    const rpOf = mapProvidersToHosts(
      await w.session.placement.listResourceProviders(),
      await w.session.nova.listHypervisors(),
    );
    const rp = rpOf.get(w.hosts[2]);
    if (!rp) throw new Error('no provider');
    const before = await w.session.placement.getInventories(rp.uuid);
    const old = before.inventories.VCPU?.allocationRatio as number;
    try {
      const updated = await w.session.placement.setAllocationRatio(rp.uuid, 'VCPU', 3.5);
      expect(updated.allocationRatio).toBe(3.5);
      const after = await w.session.placement.getInventories(rp.uuid);
      expect(after.generation).toBe(before.generation + 1);
      const stale = w.session.placement.client.request({
        method: 'PUT',
        path: `/resource_providers/${rp.uuid}/inventories/VCPU`,
        headers: await w.session.placement.headers(),
        body: { resource_provider_generation: before.generation, total: 16, allocation_ratio: 2 },
      });
      await expect(stale).rejects.toMatchObject({
        kind: 'conflict',
        status: 409,
        code: 'placement.concurrent_update',
      });
    } finally {
      await w.session.placement.setAllocationRatio(rp.uuid, 'VCPU', old);
    }
  });

  it('live-migrates a server to a named host and sees it in os-migrations', async () => {
    const m = await migrateAndFollow(w.servers.c.id, w.hosts[2]);
    expect(m).toMatchObject({
      status: 'completed',
      migrationType: 'live-migration',
      sourceCompute: w.hosts[0],
      destCompute: w.hosts[2],
    });
    expect((await w.session.nova.getServer(w.servers.c.id)).host).toBe(w.hosts[2]);
    const history = await w.session.nova.listMigrations({
      migrationType: 'live-migration',
      serverId: w.servers.c.id,
    });
    expect(history.map((x) => x.id)).toContain(m.id);
    w.servers.c.host = w.hosts[2];
  });

  it('reports a migration the scheduler refuses (anti-affinity) as error, the server staying', async () => {
    const m = await migrateAndFollow(w.servers.a.id, w.servers.b.host);
    expect(m.status).toBe('error');
    expect((await w.session.nova.getServer(w.servers.a.id)).host).toBe(w.servers.a.host);
  });

  it('aborts a held migration: cancelled, the server stays on its source', async () => {
    await w.holdMigrations(60);
    try {
      const since = new Date();
      await w.session.nova.liveMigrate(w.servers.c.id, w.hosts[1]);
      const running = await waitForStatus(w.servers.c.id, since, 'running');
      const inProgress = await w.session.nova.listServerMigrations(w.servers.c.id);
      expect(inProgress.map((x) => x.id)).toContain(running.id);
      // The destination holds the server's claim while it runs.
      const dest = await providerOf(w.hosts[1]);
      const claimed = await w.session.placement.getUsages(dest.uuid);
      await w.session.nova.abortMigration(w.servers.c.id, running.id);
      const done = await w.session.nova.followLiveMigration(w.servers.c.id, {
        since,
        pollMs: 250,
        timeoutMs: MIGRATION_TIMEOUT,
      });
      expect(done.status).toBe('cancelled');
      expect((await w.session.nova.getServer(w.servers.c.id)).host).toBe(w.servers.c.host);
      // Placement drops the destination claim without bumping that provider's generation: a
      // reader that re-reads usages only when the generation moves keeps the old usage.
      const released = await waitForUsage(dest.uuid, 'VCPU', (claimed.VCPU ?? 0) - 1);
      expect(released.MEMORY_MB).toBe((claimed.MEMORY_MB ?? 0) - 2048);
      expect((await providerOf(w.hosts[1])).generation).toBe(dest.generation);
    } finally {
      await w.holdMigrations(0);
    }
  });

  it('reports an injected failure as failed, the server staying ACTIVE on its source', async () => {
    await w.failMigrations([w.servers.b.id]);
    try {
      const m = await migrateAndFollow(w.servers.b.id, w.hosts[2]);
      expect(m.status).toBe('failed');
      const s = await w.session.nova.getServer(w.servers.b.id);
      expect(s).toMatchObject({ host: w.servers.b.host, status: 'ACTIVE' });
    } finally {
      await w.failMigrations(null);
    }
  });

  it('refuses aborting a migration of a server that is not migrating with a 409', async () => {
    const back = w.servers.c.host === w.hosts[0] ? w.hosts[2] : w.hosts[0];
    const finished = await migrateAndFollow(w.servers.c.id, back);
    expect(finished.status).toBe('completed');
    w.servers.c.host = back;
    const r = w.session.nova.abortMigration(w.servers.c.id, finished.id);
    await expect(r).rejects.toBeInstanceOf(CloudError);
    await expect(r).rejects.toMatchObject({ status: 409 });
    await expect(r).rejects.toThrow(
      `Instance ${w.servers.c.id} is in an invalid state for 'abort live migration'`,
    );
  });
});

describe('errors', () => {
  it('says the password is wrong', async () => {
    const bad = openSession({
      config: {
        name: 'contract',
        method: 'password',
        auth: {
          authUrl: w.authUrl,
          username: 'admin',
          password: 'not-the-password',
          userDomainName: 'Default',
          projectName: 'admin',
          projectDomainName: 'Default',
        },
        interface: 'public',
        insecure: false,
        origin: 'contract test',
      },
    });
    await expect(bad).rejects.toMatchObject({ kind: 'auth' });
  });
});
