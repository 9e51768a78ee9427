import { describe, expect, it } from 'vitest';
import { exportSnapshot } from '../../src/sim/export.js';
import { startLiveMigration } from '../../src/sim/migrations.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { frozenCloud } from './fixtures.js';

describe('exportSnapshot', () => {
  it('gives back the snapshot the simulator was seeded with', () => {
    const snap = synthesizeSnapshot({
      hosts: 10,
      servers: 120,
      groups: 6,
      seed: 4,
      aggregates: 2,
      disabled: 1,
    });
    const out = exportSnapshot(frozenCloud(snap));
    expect(out.hosts.map((h) => [h.name, h.availabilityZone, h.aggregates, h.service, h.inventory])).toEqual(
      snap.hosts.map((h) => [h.name, h.availabilityZone, h.aggregates, h.service, h.inventory]),
    );
    for (const [i, h] of snap.hosts.entries()) {
      expect(out.hosts[i]?.usage.VCPU).toBe(h.usage.VCPU);
      expect(out.hosts[i]?.usage.MEMORY_MB).toBe(h.usage.MEMORY_MB);
      // Static load model: what the snapshot measured, to rounding.
      expect(out.hosts[i]?.load?.cpu).toBeCloseTo(h.load?.cpu ?? 0, 2);
    }
    expect(out.servers.map((s) => [s.id, s.host, s.status, s.flavor, s.sharedStorage])).toEqual(
      snap.servers.map((s) => [
        s.id,
        s.host,
        s.status,
        { ...s.flavor, extraSpecs: s.flavor.extraSpecs ?? {} },
        s.sharedStorage,
      ]),
    );
    expect(out.serverGroups.map((g) => [g.id, g.policy, g.members])).toEqual(
      snap.serverGroups.map((g) => [g.id, g.policy, g.members]),
    );
  });

  it('shows a finished migration in the host and the history', () => {
    const snap = synthesizeSnapshot({ hosts: 6, servers: 40, groups: 0, seed: 9 });
    const cloud = frozenCloud(snap);
    const s = snap.servers.find((x) => x.status === 'ACTIVE' && x.taskState === null);
    if (!s) throw new Error('no active server');
    // The emptiest other host in the server's zone: room for sure.
    const zone = snap.hosts.find((h) => h.name === s.host)?.availabilityZone;
    const dest = snap.hosts
      .filter((h) => h.name !== s.host && h.availabilityZone === zone && h.service.status === 'enabled')
      .sort((a, b) => (a.usage.MEMORY_MB ?? 0) - (b.usage.MEMORY_MB ?? 0))[0]?.name as string;
    const m = startLiveMigration(cloud, { serverUuid: s.id, host: dest });
    cloud.advance(3600);
    const out = exportSnapshot(cloud);
    expect(m.status).toBe('completed');
    expect(out.servers.find((x) => x.id === s.id)?.host).toBe(dest);
    expect(out.migrationHistory?.[0]).toMatchObject({
      serverId: s.id,
      source: s.host,
      dest,
      status: 'completed',
    });
  });
});
