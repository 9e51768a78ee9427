// The incremental recorder against the real lab: Nova's own `changes-since` (deleted servers
// listed as DELETED, a fresh live migration with no updated_at) and Placement generations.
// Other users may change the lab meanwhile, so comparisons stay on what this file created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IncrementalRecorder } from '../../src/cloud/incremental-record.js';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { novaInstant } from '../../src/cloud/record-state.js';
import type { CloudSession } from '../../src/cloud/session.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { adminSession, bootServers, cleanupLab, uniqueName, waitFor } from './lab.js';

const P = uniqueName('inc');
let s: CloudSession;
let servers: NovaServer[];
let compute4ServiceId: string | undefined;
let ratio: { rp: string; before: number } | undefined;

beforeAll(async () => {
  s = await adminSession();
  await cleanupLab(s, P);
  servers = await bootServers(s, [
    { name: `${P}-a`, host: 'compute1', flavor: 'm1.tiny' },
    { name: `${P}-b`, host: 'compute2', flavor: 'm1.tiny' },
  ]);
});

afterAll(async () => {
  if (!s) return;
  if (compute4ServiceId) await s.nova.setServiceStatus(compute4ServiceId, 'enabled');
  if (ratio) await s.placement.setAllocationRatio(ratio.rp, 'VCPU', ratio.before);
  await cleanupLab(s, P);
});

/** What this file controls in a snapshot: its servers, and the hosts' services and inventories. */
function ours(snap: Snapshot) {
  return {
    servers: snap.servers
      .filter((x) => x.name.startsWith(P))
      .map(({ load: _load, ...rest }) => rest)
      .sort((a, b) => a.name.localeCompare(b.name)),
    hosts: snap.hosts.map((h) => ({ name: h.name, service: h.service, inventory: h.inventory })),
  };
}

describe('IncrementalRecorder against the lab', () => {
  it('follows a migration, a deletion, a boot, a disabled service and a ratio change without a full read', async () => {
    const rec = new IncrementalRecorder(s, { neutron: 'auto' });
    const first = await rec.cycle();
    expect(first.full).toBe(true);
    const [a, b] = servers as [NovaServer, NovaServer];

    const since = new Date();
    await s.nova.liveMigrate(a.id, 'compute2');
    // Nova answers the 202 before its conductor creates the migration record (an RPC cast; the
    // recorder once ran first and found none): wait until Nova lists it (server a has no other).
    await waitFor(
      'the migration record',
      async () => ((await s.nova.listMigrations({ serverId: a.id })).length > 0 ? true : undefined),
      60_000,
      100,
    );
    // Right away: the fresh record may have no updated_at yet; the recorder must list it anyway.
    const early = await rec.cycle();
    expect(early.full).toBe(false);
    expect(early.migrations.some((m) => m.serverId === a.id)).toBe(true);
    expect((await s.nova.followLiveMigration(a.id, { since, pollMs: 500, timeoutMs: 90_000 })).status).toBe(
      'completed',
    );

    await s.nova.client.request({ method: 'DELETE', path: `/servers/${b.id}` });
    await waitFor('deletion', async () =>
      (await s.nova.listServers()).some((x) => x.id === b.id) ? undefined : true,
    );
    const [c] = await bootServers(s, [{ name: `${P}-c`, host: 'compute3', flavor: 'm1.tiny' }]);
    const svc = (await s.nova.listServices()).find((x) => x.host === 'compute4');
    if (!svc) throw new Error('lab has no compute4');
    compute4ServiceId = svc.id;
    await s.nova.setServiceStatus(svc.id, 'disabled', `${P} maintenance`);
    const rp = first.providers.get('compute3');
    if (!rp) throw new Error('lab: no provider for compute3');
    const before = (await s.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio ?? 1;
    ratio = { rp: rp.uuid, before };
    await s.placement.setAllocationRatio(rp.uuid, 'VCPU', before + 1);

    // Nova's own answer: the deleted server is listed as DELETED to changes-since.
    const changed = await s.nova.listServers({ changesSince: novaInstant(since.getTime() - 60_000) });
    expect(changed.find((x) => x.id === b.id)?.status).toBe('DELETED');

    const cycle = await rec.cycle();
    expect(cycle.full).toBe(false);
    expect(cycle.changes.serversAdded).toBeGreaterThanOrEqual(1);
    expect(cycle.changes.serversDeleted).toBeGreaterThanOrEqual(1);
    const { snapshot: reference } = await recordSnapshot(s, { neutron: 'auto' });
    expect(ours(cycle.snapshot)).toEqual(ours(reference));
    const mine = ours(cycle.snapshot).servers;
    expect(mine.map((x) => [x.name, x.host])).toEqual([
      [`${P}-a`, 'compute2'],
      [`${P}-c`, c?.host],
    ]);
    expect(cycle.snapshot.hosts.find((h) => h.name === 'compute3')?.inventory.VCPU?.allocationRatio).toBe(
      before + 1,
    );
    expect(cycle.snapshot.migrationHistory?.some((m) => m.serverId === a.id && m.dest === 'compute2')).toBe(
      true,
    );
  });
});
