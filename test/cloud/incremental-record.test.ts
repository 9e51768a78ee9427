// The incremental recorder against the simulator: after migrations, deletions, new servers, a
// disabled service and an inventory change, each cycle's snapshot equals a fresh full record,
// and a cycle with no changes costs the same calls at 20 hosts as at 200.
import { afterEach, describe, expect, it } from 'vitest';
import { type IncrementalOptions, IncrementalRecorder } from '../../src/cloud/incremental-record.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { generatedLoadModel } from '../../src/sim/load.js';
import { SimCloud, type SimServer } from '../../src/sim/model.js';
import { createServer } from '../../src/sim/server-lifecycle.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';

let sims: SimServerHandle[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

interface World {
  sim: SimServerHandle;
  cloud: SimCloud;
  session: () => Promise<CloudSession>;
  now: () => Date;
}

/** A synthetic cloud on a clock frozen at wall time: only `cloud.advance()` moves it. */
async function world(hosts: number, servers: number): Promise<World> {
  const snap = synthesizeSnapshot({
    hosts,
    servers,
    groups: Math.round(servers / 20),
    seed: 5,
    aggregates: 2,
  });
  const cloud = new SimCloud(snap, { clock: new SimClock({ speed: 0 }), load: generatedLoadModel() });
  const sim = await startSimServer({ cloud, password: 'pw' });
  sims.push(sim);
  return {
    sim,
    cloud,
    now: () => new Date(cloud.nowMs()),
    session: () =>
      openSession({
        config: simAdminConfig(sim.authUrl, 'pw', 'test'),
        prometheusUrl: `${sim.url}/prometheus`,
      }),
  };
}

const recorder = async (w: World, opts: IncrementalOptions = {}) =>
  new IncrementalRecorder(await w.session(), { now: w.now, ...opts });

async function fullRecord(w: World): Promise<Snapshot> {
  return (await recordSnapshot(await w.session(), { now: w.now })).snapshot;
}

/** A server that can move now: active, no task, on an enabled host, with a destination named. */
function movable(cloud: SimCloud, skip: Set<string>): SimServer {
  const s = cloud.servers.find(
    (x) =>
      x.status === 'ACTIVE' &&
      x.taskState === null &&
      !skip.has(x.uuid) &&
      !cloud.groupOfServer.has(x.uuid) &&
      cloud.hostsByName.get(x.host)?.status === 'enabled',
  );
  if (!s) throw new Error('no movable server');
  skip.add(s.uuid);
  return s;
}

function destinationFor(cloud: SimCloud, s: SimServer): string {
  const src = cloud.hostsByName.get(s.host);
  const need = cloud.resourcesOf(s);
  const h = cloud.hosts.find(
    (x) =>
      x.name !== s.host && x.status === 'enabled' && x.az === src?.az && cloud.placement.fits(x.rp, need),
  );
  if (!h) throw new Error(`no destination for ${s.uuid}`);
  return h.name;
}

describe('IncrementalRecorder on the simulator', () => {
  it('reads host series every cycle and per-server series on their slower cadence', async () => {
    const w = await world(12, 240);
    const rec = await recorder(w, { serverMetricsEveryCycles: 3 });
    const first = await rec.cycle();
    expect(first.callsByService.prometheus).toBe(8);
    const serverLoads = (snap: Snapshot) => snap.servers.map((s) => [s.id, s.load]);
    const hostLoads = (snap: Snapshot) => snap.hosts.map((h) => [h.name, h.load]);
    for (const cycle of [2, 3, 4]) {
      // Half an hour later the generated loads have moved: hosts show it, servers keep the first read.
      w.cloud.advance(1800);
      const r = await rec.cycle();
      const full = await fullRecord(w);
      expect(hostLoads(r.snapshot)).toEqual(hostLoads(full));
      if (cycle < 4) {
        expect(r.callsByService.prometheus).toBe(4);
        expect(r.changes.reread).not.toContain('server metrics');
        expect(serverLoads(r.snapshot)).toEqual(serverLoads(first.snapshot));
        expect(serverLoads(r.snapshot)).not.toEqual(serverLoads(full));
        // The server rules' health is that of the read they come from, so the gate judges it.
        expect(r.metrics?.health.rules.filter((x) => x.scope === 'server')).toEqual(
          first.metrics?.health.rules.filter((x) => x.scope === 'server'),
        );
      } else {
        expect(r.callsByService.prometheus).toBe(8);
        expect(r.changes.reread).toContain('server metrics');
        expect(serverLoads(r.snapshot)).toEqual(serverLoads(full));
      }
    }
  });

  it('between server series, servers booted or changed take the figures of the last series read', async () => {
    const w = await world(12, 240);
    const rec = await recorder(w, { serverMetricsEveryCycles: 3 });
    const session = await w.session();
    const first = await rec.cycle();
    const read = new Map(first.snapshot.servers.map((s) => [s.id, s.load]));
    const used = new Set<string>();
    const moving = movable(w.cloud, used);
    await session.nova.liveMigrate(moving.uuid, destinationFor(w.cloud, moving));
    const born = createServer(w.cloud, {
      name: 'new-1',
      host: w.cloud.hosts[1]?.name as string,
      flavor: { name: 'm1.small', vcpus: 1, ramMB: 2048, diskGB: 20 },
    });
    w.cloud.advance(5);
    const r = await rec.cycle();
    expect(r.changes.reread).not.toContain('server metrics');
    expect(r.changes.serversAdded).toBe(1);
    expect(r.changes.serversUpdated).toBeGreaterThanOrEqual(1);
    // Every server, rebuilt or not, carries the figure of the series read in the first cycle; the
    // new one has none yet.
    expect(r.snapshot.servers.map((s) => [s.id, s.load])).toEqual(
      r.snapshot.servers.map((s) => [s.id, read.get(s.id)]),
    );
    expect(r.snapshot.servers.find((s) => s.id === born.uuid)?.load).toBeUndefined();
    expect(read.get(moving.uuid)).toBeDefined();
  });

  it('gives the full record after every kind of change, re-reading only what changed', async () => {
    const w = await world(12, 240);
    // Server series every cycle: the snapshot is then the full record's to the last figure.
    const rec = await recorder(w, { serverMetricsEveryCycles: 1 });
    const session = await w.session();

    const first = await rec.cycle();
    expect(first.full).toBe(true);
    expect(first.fullReason).toBe('first cycle');
    expect(first.snapshot).toEqual(await fullRecord(w));

    // Live migrations (one to a host too small, which ends in error), two deletions, two new
    // servers (one joins a group), a disabled service, a changed allocation ratio.
    w.cloud.advance(5);
    const used = new Set<string>();
    const moving = [movable(w.cloud, used), movable(w.cloud, used), movable(w.cloud, used)];
    for (const s of moving) await session.nova.liveMigrate(s.uuid, destinationFor(w.cloud, s));
    const doomed = [movable(w.cloud, used), movable(w.cloud, used)];
    for (const s of doomed) {
      await session.nova.client.request({
        method: 'DELETE',
        path: `/servers/${s.uuid}`,
        headers: await session.nova.headers(),
      });
    }
    const group = w.cloud.groups.find((g) => g.policy === 'soft-anti-affinity') ?? w.cloud.groups[0];
    const born = [
      createServer(w.cloud, {
        name: 'new-1',
        host: w.cloud.hosts[1]?.name as string,
        flavor: { name: 'm1.small', vcpus: 1, ramMB: 2048, diskGB: 20 },
        ...(group ? { group: group.uuid } : {}),
      }),
      createServer(w.cloud, {
        name: 'new-2',
        host: w.cloud.hosts[2]?.name as string,
        flavor: { name: 'm1.small', vcpus: 1, ramMB: 2048, diskGB: 20 },
        sharedStorage: false,
      }),
    ];
    const disabled = w.cloud.hosts[3];
    await session.nova.setServiceStatus(disabled?.serviceUuid as string, 'disabled', 'maintenance: test');
    await session.placement.setAllocationRatio(w.cloud.hosts[4]?.nodeUuid as string, 'VCPU', 7);

    // Mid-flight: the migrations are queued or running, both hosts hold each claim.
    w.cloud.advance(1);
    const mid = await rec.cycle();
    expect(mid.full).toBe(false);
    expect(mid.snapshot).toEqual(await fullRecord(w));
    expect(mid.changes).toMatchObject({ serversAdded: 2, serversDeleted: 2 });
    expect(mid.changes.serversUpdated).toBeGreaterThanOrEqual(3);
    expect(mid.changes.reread).toEqual(['server groups', 'ports']);
    expect(mid.snapshot.servers.some((s) => s.id === born[0]?.uuid)).toBe(true);
    expect(mid.snapshot.servers.some((s) => s.id === doomed[0]?.uuid)).toBe(false);
    if (group) {
      const g = mid.snapshot.serverGroups.find((x) => x.id === group.uuid);
      expect(g?.members).toContain(born[0]?.uuid);
    }
    expect(mid.snapshot.hosts.find((h) => h.name === disabled?.name)?.service).toEqual({
      state: 'up',
      status: 'disabled',
      forcedDown: false,
      disabledReason: 'maintenance: test',
    });
    expect(
      mid.snapshot.hosts.find((h) => h.name === w.cloud.hosts[4]?.name)?.inventory.VCPU?.allocationRatio,
    ).toBe(7);
    expect(mid.migrations.filter((m) => moving.some((s) => s.uuid === m.serverId))).toHaveLength(3);

    // Until they end: servers on their destinations, completed records in the history.
    w.cloud.advance(600);
    const after = await rec.cycle();
    expect(after.full).toBe(false);
    expect(after.snapshot).toEqual(await fullRecord(w));
    for (const s of moving) {
      expect(after.snapshot.servers.find((x) => x.id === s.uuid)?.host).toBe(
        w.cloud.serversByUuid.get(s.uuid)?.host,
      );
    }
    expect(
      after.snapshot.migrationHistory?.filter((m) => moving.some((s) => s.uuid === m.serverId)),
    ).toHaveLength(3);
    expect(after.changes.serversAdded + after.changes.serversDeleted).toBe(0);
    expect(after.changes.migrationsChanged).toBe(3);

    // Nothing changed: nothing but the cheap lists is read, and the snapshot still matches.
    w.cloud.advance(120);
    const idle = await rec.cycle();
    expect(idle.full).toBe(false);
    expect(idle.changes).toEqual({
      serversAdded: 0,
      serversUpdated: 0,
      serversDeleted: 0,
      migrationsChanged: 0,
      providersRead: 0,
      providersReadByHost: 0,
      reread: [],
    });
    expect(idle.snapshot).toEqual(await fullRecord(w));
  });

  it('hands back the same object for a server Nova reports unchanged, a new one for a changed one', async () => {
    const w = await world(20, 300);
    const rec = await recorder(w);
    const session = await w.session();
    const first = await rec.cycle();
    w.cloud.advance(30);
    const idle = await rec.cycle();
    expect(idle.full).toBe(false);
    expect(idle.snapshot.servers.length).toBe(first.snapshot.servers.length);
    expect(idle.snapshot.servers.every((s, i) => s === first.snapshot.servers[i])).toBe(true);

    const used = new Set<string>();
    const moved = movable(w.cloud, used);
    await session.nova.liveMigrate(moved.uuid, destinationFor(w.cloud, moved));
    w.cloud.advance(600);
    const after = await rec.cycle();
    // Server loads are those of the first cycle's read (a slower cadence): compared apart.
    expect(after.snapshot.servers.find((s) => s.id === moved.uuid)?.host).toBe(
      w.cloud.serversByUuid.get(moved.uuid)?.host,
    );
    const changed = after.snapshot.servers.filter((s, i) => s !== idle.snapshot.servers[i]).map((s) => s.id);
    expect(changed).toEqual([moved.uuid]);
    // The earlier snapshot is left as it was: the moved server is still on its old host there.
    expect(idle.snapshot.servers.find((s) => s.id === moved.uuid)?.host).not.toBe(
      after.snapshot.servers.find((s) => s.id === moved.uuid)?.host,
    );
  });

  it('costs the same calls per idle cycle at 20 hosts as at 200', async () => {
    const counts: number[] = [];
    for (const [hosts, servers] of [
      [20, 300],
      [200, 3000],
    ] as const) {
      const w = await world(hosts, servers);
      const rec = await recorder(w);
      const first = await rec.cycle();
      w.cloud.advance(60);
      const idle = await rec.cycle();
      expect(idle.full).toBe(false);
      // The first cycle reads each provider: it grows with the cloud.
      expect(first.callCount).toBeGreaterThan(2 * hosts);
      counts.push(idle.callCount);
      // services, aggregates, providers, servers, accepted + changed migrations; 2 per metric rule.
      expect(idle.callsByService).toEqual({ compute: 5, placement: 1, prometheus: idle.callCount - 6 });
    }
    expect(counts[0]).toBe(counts[1]);
  });

  it('reads a moved provider again, and only it', async () => {
    const w = await world(20, 300);
    const rec = await recorder(w);
    await rec.cycle();
    const session = await w.session();
    await session.placement.setAllocationRatio(w.cloud.hosts[7]?.nodeUuid as string, 'MEMORY_MB', 1.5);
    w.cloud.advance(30);
    const c = await rec.cycle();
    expect(c.changes.providersRead).toBe(1);
    expect(c.callsByService.placement).toBe(3);
    expect(
      c.snapshot.hosts.find((h) => h.name === w.cloud.hosts[7]?.name)?.inventory.MEMORY_MB?.allocationRatio,
    ).toBe(1.5);
  });

  it('sees a fresh migration that changes-since hides, and reads in full when one is lost', async () => {
    const w = await world(10, 100);
    const session = await w.session();
    // Real Nova: a record whose updated_at is null is invisible to changes-since (issue 13).
    const hidden = new Set<number>();
    const list = session.nova.listMigrations.bind(session.nova);
    session.nova.listMigrations = async (f = {}) =>
      (await list(f)).filter((m) => !hidden.has(m.id) && !(f.changesSince && m.updatedAt === null));
    const rec = new IncrementalRecorder(session, { now: w.now, serverMetricsEveryCycles: 1 });
    await rec.cycle();

    const used = new Set<string>();
    const a = movable(w.cloud, used);
    await session.nova.liveMigrate(a.uuid, destinationFor(w.cloud, a));
    const fresh = await rec.cycle();
    expect(fresh.full).toBe(false);
    expect(fresh.migrations.find((m) => m.serverId === a.uuid)).toMatchObject({
      status: 'accepted',
      updatedAt: null,
    });
    w.cloud.advance(1);
    const next = await rec.cycle();
    expect(next.full).toBe(false);
    expect(next.migrations.find((m) => m.serverId === a.uuid)?.status).not.toBe('accepted');

    // A fresh record whose first update the window misses (as with clock skew): a full read.
    const b = movable(w.cloud, used);
    await session.nova.liveMigrate(b.uuid, destinationFor(w.cloud, b));
    await rec.cycle();
    const id = w.cloud.migrations.at(-1)?.id as number;
    hidden.add(id);
    w.cloud.advance(1);
    const lost = await rec.cycle();
    expect(lost.full).toBe(true);
    expect(lost.fullReason).toBe(
      `live migration ${id} left "accepted" unseen by changes-since (clock skew beyond 60 s?)`,
    );
  });

  it('re-reads the hosts of a cancelled migration, whose released claim moves no generation', async () => {
    const w = await world(10, 100);
    const rec = await recorder(w, { serverMetricsEveryCycles: 1 });
    const session = await w.session();
    await rec.cycle();
    w.cloud.timing.holdSeconds = 600;
    const s = movable(w.cloud, new Set());
    const dest = destinationFor(w.cloud, s);
    await session.nova.liveMigrate(s.uuid, dest);
    w.cloud.advance(5);
    const during = await rec.cycle();
    expect(during.full).toBe(false);
    const destRp = w.cloud.hostsByName.get(dest)!.rp;
    const generation = destRp.generation;
    const [running] = await session.nova.listServerMigrations(s.uuid);
    await session.nova.abortMigration(s.uuid, running!.id);
    w.cloud.advance(5);
    // The destination's claim is gone and its generation did not move (as on the real Placement).
    expect(destRp.generation).toBe(generation);
    const after = await rec.cycle();
    expect(after.full).toBe(false);
    expect(after.changes.providersReadByHost).toBeGreaterThanOrEqual(1);
    expect(after.snapshot.hosts.find((h) => h.name === dest)?.usage).toEqual(
      (await fullRecord(w)).hosts.find((h) => h.name === dest)?.usage,
    );
    expect(after.snapshot).toEqual(await fullRecord(w));
  });

  it('re-reads the hosts the caller names, once', async () => {
    const w = await world(10, 100);
    const rec = await recorder(w);
    await rec.cycle();
    // Long after any migration: only the named host is read beyond the generations.
    w.cloud.advance(600);
    rec.requestHostReads([w.cloud.hosts[2]!.name]);
    expect((await rec.cycle()).changes.providersReadByHost).toBe(1);
    w.cloud.advance(30);
    expect((await rec.cycle()).changes.providersReadByHost).toBe(0);
  });

  it('reads in full periodically, on request and after a long gap, and says why', async () => {
    const w = await world(10, 100);
    const rec = await recorder(w, { fullEveryCycles: 3, maxGapMs: 600_000 });
    const reasons: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      w.cloud.advance(30);
      reasons.push((await rec.cycle()).fullReason);
    }
    // Full on cycles 1 and 4: every third cycle.
    expect(reasons).toEqual(['first cycle', undefined, undefined, 'every 3 cycles', undefined]);
    const overlapping = [rec.cycle(), rec.cycle()];
    await expect(overlapping[1]).rejects.toThrow(
      'IncrementalRecorder.cycle: the previous cycle has not finished',
    );
    await overlapping[0];
    rec.requestFullRead('data health: contradictory usage');
    const requested = rec.cycle();
    // Asked while that full read runs: it is for the cycle after.
    rec.requestFullRead('asked during a read');
    expect((await requested).fullReason).toBe('data health: contradictory usage');
    expect((await rec.cycle()).fullReason).toBe('asked during a read');
    w.cloud.advance(601);
    expect((await rec.cycle()).fullReason).toBe('the previous read is more than 600 s old');
    expect(() => new IncrementalRecorder({} as CloudSession, { overlapSeconds: -1 })).toThrow(
      'IncrementalRecorder option overlapSeconds: expected a number >= 0, got -1',
    );
  });
});
