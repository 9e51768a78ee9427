// Following migrations through the one shared listing of os-migrations (changes-since): what
// the listing shows decides, with no read of each server's records, and what it cannot show (a
// record deleted with its server) is found by the direct read after a silence. Each test acts on
// the simulator when the listing first shows the migration running: the waits are on the
// executor's own progress, never on the wall clock.
import { afterEach, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { openSession } from '../../src/cloud/session.js';
import { OpenStackExecutorCloud } from '../../src/executor/openstack-cloud.js';
import type { ExecutorCloud, LiveMigrationView } from '../../src/executor/ports.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { abortMigration } from '../../src/sim/migrations.js';
import { deleteServer } from '../../src/sim/server-lifecycle.js';
import {
  host,
  makeExecutor,
  migrationsByServer,
  move,
  noStop,
  openWorld,
  server,
  serverId,
  snapshot,
  type World,
} from './sim-world.js';

let world: World | null = null;
afterEach(async () => {
  await world?.close();
  world = null;
});

interface Watched {
  cloud: ExecutorCloud;
  /** Calls per method of the port. */
  calls: Map<string, number>;
  /** Sizes of the listings of changed records. */
  listed: number[];
}

/** The port, counting its calls, and `onRunning` once when a listing first shows a record running. */
function watched(inner: ExecutorCloud, onRunning?: (m: LiveMigrationView) => void): Watched {
  const calls = new Map<string, number>();
  const listed: number[] = [];
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  const counted = <T>(name: string, call: () => T): T => {
    count(name);
    return call();
  };
  let fired = false;
  const cloud: ExecutorCloud = {
    getServer: (id) => counted('getServer', () => inner.getServer(id)),
    listServersChangedSince: (t) =>
      counted('listServersChangedSince', () => inner.listServersChangedSince(t)),
    listLiveMigrations: (id) => counted('listLiveMigrations', () => inner.listLiveMigrations(id)),
    listLiveMigrationsChangedSince: async (since) => {
      count('listLiveMigrationsChangedSince');
      const r = await inner.listLiveMigrationsChangedSince(since);
      listed.push(r.records.length);
      const running = r.records.find((m) => m.status === 'running');
      if (running && onRunning && !fired) {
        fired = true;
        onRunning(running);
      }
      return r;
    },
    getComputeService: (h) => counted('getComputeService', () => inner.getComputeService(h)),
    listComputeServices: () => counted('listComputeServices', () => inner.listComputeServices()),
    getHostRoom: (h) => inner.getHostRoom(h),
    getHostInventories: (h) => inner.getHostInventories(h),
    getHostUsages: (h) => inner.getHostUsages(h),
    listHostAllocations: (h) => inner.listHostAllocations(h),
    getServerAllocation: (id) => inner.getServerAllocation(id),
    liveMigrate: (id, h) => counted('liveMigrate', () => inner.liveMigrate(id, h)),
    abortLiveMigration: (id, m) => counted('abortLiveMigration', () => inner.abortLiveMigration(id, m)),
  };
  return { cloud, calls, listed };
}

const hosts = () => [host('c1'), host('c2'), host('c3')];

describe('following migrations through one listing', () => {
  it('completes moves without reading any server’s records, one listing per poll for all of them', async () => {
    world = await openWorld(
      snapshot(hosts(), [server(1, 'c1'), server(2, 'c2'), server(3, 'c1', 8192), server(4, 'c2', 8192)]),
      { speed: 20 },
    );
    const w = watched(world.executorCloud);
    const { executor } = makeExecutor(
      { executorCloud: w.cloud, clock: world.clock },
      { settings: { pollSeconds: 1 } },
    );
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [
          move(1, 1, 1, 'c1', 'c3'),
          move(2, 1, 2, 'c2', 'c3'),
          move(3, 1, 3, 'c1', 'c2'),
          move(4, 1, 4, 'c2', 'c1'),
        ],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.counts.completed).toBe(4);
    expect(w.calls.get('listLiveMigrations') ?? 0).toBe(0);
    // The pre-flight reads each server once; its end is confirmed by a shared listing of the
    // servers changed since (ends close together) or, for an end alone, one read of its own. A
    // pre-read (pre-flight before the slot frees) that its move did not use costs one more.
    const { prereads, prereadsUsed } = summary.counters;
    const single = (w.calls.get('getServer') ?? 0) - 4 - (prereads - prereadsUsed);
    const shared = w.calls.get('listServersChangedSince') ?? 0;
    expect(single).toBeGreaterThanOrEqual(0);
    expect(single).toBeLessThanOrEqual(4);
    if (shared === 0) expect(single).toBe(4);
    // A shared listing serves at least two ends, so it never costs more calls than it saves.
    expect(single + 2 * shared).toBeLessThanOrEqual(4);
    expect(w.calls.get('getComputeService') ?? 0).toBe(0);
    // The watcher counts a listing when its answer comes; the last one may still be on its way
    // when the execution ends (its last end confirmed by a server read): seen under load 6-7.
    const listings = w.calls.get('listLiveMigrationsChangedSince') ?? 0;
    const { polls, pollErrors } = executor.watchCounters();
    expect(pollErrors).toBe(0);
    expect(polls).toBeGreaterThanOrEqual(listings - 1);
    expect(polls).toBeLessThanOrEqual(listings);
    for (const [, ms] of migrationsByServer(world.cloud)) expect(ms).toHaveLength(1);
  });

  it('fails an attempt whose record ends in error (the conductor refused the destination)', async () => {
    world = await openWorld(snapshot(hosts(), [server(1, 'c1')]), { speed: 20 });
    const cloud = world.cloud;
    const inner = world.executorCloud;
    const w = watched({
      ...inner,
      getServer: (id) => inner.getServer(id),
      listServersChangedSince: (t) => inner.listServersChangedSince(t),
      listLiveMigrations: (id) => inner.listLiveMigrations(id),
      listLiveMigrationsChangedSince: (s) => inner.listLiveMigrationsChangedSince(s),
      getComputeService: (h) => inner.getComputeService(h),
      listComputeServices: () => inner.listComputeServices(),
      getHostRoom: (h) => inner.getHostRoom(h),
      getHostInventories: (h) => inner.getHostInventories(h),
      getHostUsages: (h) => inner.getHostUsages(h),
      listHostAllocations: (h) => inner.listHostAllocations(h),
      getServerAllocation: (id) => inner.getServerAllocation(id),
      abortLiveMigration: (id, m) => inner.abortLiveMigration(id, m),
      // Pre-flight saw the destination enabled; it is disabled before the conductor checks it.
      liveMigrate: async (id, h) => {
        const dest = cloud.hostsByName.get(h);
        if (dest) dest.status = 'disabled';
        return inner.liveMigrate(id, h);
      },
    });
    const { executor, recorded } = makeExecutor(
      { executorCloud: w.cloud, clock: world.clock },
      { settings: { pollSeconds: 1, retry: { attempts: 1 } } },
    );
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves[0]).toMatchObject({ state: 'failed', novaMigrationId: 1 });
    expect(summary.moves[0]?.detail).toMatch(/migration 1 ended error; the server stayed on c1/);
    expect(cloud.migrations.map((m) => m.status)).toEqual(['error']);
    expect(recorded.quarantined).toHaveLength(1);
    expect(w.calls.get('listLiveMigrations') ?? 0).toBe(0);
  });

  it('retries an attempt that someone else cancelled, and completes it', async () => {
    world = await openWorld(snapshot(hosts(), [server(1, 'c1', 16384)]), { speed: 20 });
    const cloud = world.cloud;
    // An operator aborts the migration in Nova while it runs.
    const w = watched(world.executorCloud, (m) => abortMigration(cloud, m.serverId, m.id, true));
    const { executor } = makeExecutor(
      { executorCloud: w.cloud, clock: world.clock },
      { settings: { pollSeconds: 1 } },
    );
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        // The plan knows a 16 GiB copy takes long: its silence is not suspect.
        moves: [move(1, 1, 1, 'c1', 'c2', { estimatedSeconds: 40 })],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves[0]).toMatchObject({ state: 'completed', attempt: 2, novaMigrationId: 2 });
    expect(cloud.migrations.map((m) => m.status)).toEqual(['cancelled', 'completed']);
    expect(cloud.serversByUuid.get(serverId(1))?.host).toBe('c2');
    expect(w.calls.get('listLiveMigrations') ?? 0).toBe(0);
    expect(w.calls.get('abortLiveMigration') ?? 0).toBe(0);
  });

  it('finds a record that left the listing (its server deleted mid-migration) by reading directly', async () => {
    world = await openWorld(snapshot(hosts(), [server(1, 'c1', 16384), server(2, 'c1')]), { speed: 20 });
    const cloud = world.cloud;
    const w = watched(world.executorCloud, (m) => deleteServer(cloud, m.serverId));
    const { executor, recorded } = makeExecutor(
      { executorCloud: w.cloud, clock: world.clock },
      { settings: { pollSeconds: 1 } },
    );
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 2, 2, 'c1', 'c3')],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves[0]?.state).toBe('failed');
    expect(summary.moves[0]?.detail).toMatch(/migration 1 disappeared and server \S+ no longer exists/);
    expect(recorded.quarantined.map((q) => q.serverId)).toEqual([serverId(1)]);
    // The source's slot came back with the abandoned migration: the next wave ran.
    expect(summary.moves[1]?.state).toBe('completed');
    // The listing never showed the deleted record again; the direct reads did the rest.
    expect(w.calls.get('listLiveMigrations') ?? 0).toBeGreaterThanOrEqual(2);
  });

  it('follows every page of a listing longer than a page', async () => {
    const servers = Array.from({ length: 9 }, (_, i) => server(i + 1, `c${(i % 3) + 1}`));
    world = await openWorld(snapshot(hosts(), servers), { speed: 20 });
    const config = simAdminConfig(world.sim.authUrl, 'secret', 'executor test (pages of 2)');
    // Pages of two records: every listing with three or more changed records spans pages.
    const reader = await openSession({
      config,
      credential: { kind: 'reader', label: 'reader (test)' },
      nova: { pageSize: 2 },
    });
    const actuator = await Actuator.open({ config, credential: { label: 'actuator (test)' } });
    const w = watched(new OpenStackExecutorCloud(reader, actuator));
    const { executor } = makeExecutor(
      { executorCloud: w.cloud, clock: world.clock },
      { settings: { pollSeconds: 1, limits: { perSourceHost: 3, perDestinationHost: 3 } } },
    );
    const moves = servers.map((s, i) => move(i + 1, 1, i + 1, s.host, `c${((i + 1) % 3) + 1}`));
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.counts.completed).toBe(9);
    expect(Math.max(...w.listed)).toBeGreaterThan(2);
    expect(reader.stats.total).toBeGreaterThan(w.calls.get('listLiveMigrationsChangedSince') ?? 0);
    expect(w.calls.get('listLiveMigrations') ?? 0).toBe(0);
    for (const [, ms] of migrationsByServer(world.cloud))
      expect(ms.map((m) => m.status)).toEqual(['completed']);
  });
});
