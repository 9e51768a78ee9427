// Nova's awkward moments (issue 13), reproduced at the executor's port over the simulator: a
// record that shows up seconds after the 202, a server that finishes before its record, an early
// synchronous "No valid host was found". The executor must neither resend nor finish early.
import { afterEach, describe, expect, it } from 'vitest';
import { ActuatorError, type ExecutorCloud, type LiveMigrationView } from '../../src/executor/ports.js';
import {
  host,
  makeExecutor,
  move,
  noStop,
  openWorld,
  server,
  serverId,
  snapshot,
  type World,
} from './sim-world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function awkward(
  w: World,
  opts: {
    hideRecordsForSeconds?: number;
    finalStatusLagSeconds?: number;
    refuse?: { serverId: string; message: string };
  },
): ExecutorCloud {
  const inner = w.executorCloud;
  const view = (m: LiveMigrationView): LiveMigrationView | null => {
    const now = w.clock.now();
    if (opts.hideRecordsForSeconds && now - m.createdAt < opts.hideRecordsForSeconds * 1000) return null;
    const lag = opts.finalStatusLagSeconds;
    if (lag && m.status === 'completed' && m.updatedAt !== null && now - m.updatedAt < lag * 1000) {
      return { ...m, status: 'running' };
    }
    return m;
  };
  return {
    getServer: (id) => inner.getServer(id),
    listServersChangedSince: (t) => inner.listServersChangedSince(t),
    listLiveMigrations: async (id) =>
      (await inner.listLiveMigrations(id)).map(view).filter((m): m is LiveMigrationView => m !== null),
    listLiveMigrationsChangedSince: async (since) => {
      const listed = await inner.listLiveMigrationsChangedSince(since);
      const records = listed.records.map(view).filter((m): m is LiveMigrationView => m !== null);
      return { ...listed, records };
    },
    getComputeService: (h) => inner.getComputeService(h),
    listComputeServices: () => inner.listComputeServices(),
    getHostRoom: (h) => inner.getHostRoom(h),
    getHostInventories: (h) => inner.getHostInventories(h),
    getHostUsages: (h) => inner.getHostUsages(h),
    listHostAllocations: (h) => inner.listHostAllocations(h),
    getServerAllocation: (id) => inner.getServerAllocation(id),
    liveMigrate: async (id, h) => {
      if (opts.refuse?.serverId === id) throw new ActuatorError('refused', opts.refuse.message, 400);
      return inner.liveMigrate(id, h);
    },
    abortLiveMigration: (id, m) => inner.abortLiveMigration(id, m),
  };
}

const twoServers = () => snapshot([host('c1'), host('c2')], [server(1, 'c1'), server(2, 'c1')]);

describe('an awkward Nova', () => {
  it('waits for a migration record that shows up seconds after the 202, and never sends again', async () => {
    world = await openWorld(twoServers(), { speed: 20 });
    const { executor, recorded } = makeExecutor(
      { executorCloud: awkward(world, { hideRecordsForSeconds: 6 }), clock: world.clock },
      { settings: { pollSeconds: 1 } },
    );
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves[0]).toMatchObject({ state: 'completed', attempt: 1, novaMigrationId: 1 });
    expect(world.cloud.migrations).toHaveLength(1);
    expect(summary.counters.resends).toBe(0);
    const sent = recorded.audit.find((a) => a.action === 'live-migrate')!;
    const found = recorded.audit.find((a) => a.action === 'migration-found')!;
    expect(Date.parse(found.at) - Date.parse(sent.at)).toBeGreaterThanOrEqual(5000);
  });

  it('does not call a move done while the server is on its destination but the record still runs', async () => {
    world = await openWorld(twoServers(), { speed: 20 });
    const { executor } = makeExecutor(
      { executorCloud: awkward(world, { finalStatusLagSeconds: 4 }), clock: world.clock },
      { settings: { pollSeconds: 1 } },
    );
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    const m = world.cloud.migrations[0]!;
    expect(summary.moves[0]!.state).toBe('completed');
    // Nova's updated_at has whole seconds: the lag counts from the second the record shows.
    const shown = Math.floor((m.updatedMs ?? 0) / 1000) * 1000;
    expect(Date.parse(summary.moves[0]!.endedAt!)).toBeGreaterThanOrEqual(shown + 4000);
  });

  it('takes an early synchronous "No valid host was found" as a failed attempt, with nothing started', async () => {
    world = await openWorld(twoServers(), { speed: 20 });
    const message =
      'compute: POST /compute/v2.1/servers/x/action failed (400): No valid host was found. There are not enough hosts available.';
    const { executor, recorded } = makeExecutor(
      { executorCloud: awkward(world, { refuse: { serverId: serverId(2), message } }), clock: world.clock },
      { settings: { retry: { attempts: 2, backoffBaseSeconds: 5 } } },
    );
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 1, 2, 'c1', 'c2')],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves.map((m) => m.state)).toEqual(['completed', 'failed']);
    expect(summary.moves[1]).toMatchObject({ attempt: 2, novaMigrationId: null });
    expect(summary.moves[1]!.detail).toMatch(/Nova refused the live migration: .*No valid host was found/);
    expect(world.cloud.migrations.map((m) => m.server.uuid)).toEqual([serverId(1)]);
    expect(recorded.quarantined).toEqual([
      expect.objectContaining({
        serverId: serverId(2),
        novaFault: expect.stringMatching(/No valid host was found/),
      }),
    ]);
  });
});
