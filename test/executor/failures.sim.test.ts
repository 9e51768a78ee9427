// When migrations do not go to plan: timeouts and the window's end abort them (and the server is
// confirmed on its source), failures are retried with backoff and then quarantined, a pause
// stops new moves.
import { afterEach, describe, expect, it } from 'vitest';
import type { ExecutorCloud } from '../../src/executor/ports.js';
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

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const threeHosts = () =>
  snapshot(
    [host('c1'), host('c2'), host('c3')],
    [1, 2, 3, 4].map((n) => server(n, 'c1')),
  );

describe('abort', () => {
  it('aborts a migration that runs past its timeout and confirms the server stayed on its source', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const { executor, recorded } = makeExecutor(world, {
      timeoutFor: () => 30,
      settings: { retry: { attempts: 1 } },
    });
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    const rec = summary.moves[0]!;
    expect(rec.state).toBe('failed');
    expect(rec.detail).toMatch(
      /aborted \(timed out after 30 s\); the server stayed on c1 \(migration 1 cancelled\)/,
    );
    const sim = world.cloud.serversByUuid.get(serverId(1))!;
    expect(sim.host).toBe('c1');
    expect(sim.taskState).toBeNull();
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['cancelled']);
    // Attempts exhausted after a timeout: the server is quarantined with Nova's word for it.
    expect(recorded.quarantined).toHaveLength(1);
    expect(recorded.audit.some((a) => a.action === 'abort' && /accepted/.test(a.detail))).toBe(true);
    expect(summary.counters.abortRequests).toBeGreaterThanOrEqual(1);
  });

  it('retries after a timeout with a fresh attempt, and completes when the cloud lets it', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const { executor, recorded } = makeExecutor(world, { timeoutFor: () => 30 });
    const run = executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    // Once the first attempt is cancelled, migrations converge again. Polled: the simulator
    // cancels it on its virtual clock (abortSeconds after the DELETE) and tells no one.
    const until = Date.now() + 20_000;
    while (!world.cloud.migrations.some((m) => m.status === 'cancelled') && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
    }
    world.cloud.timing.holdSeconds = 0;
    const summary = await run;
    expect(summary.moves[0]).toMatchObject({ state: 'completed', attempt: 2 });
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['cancelled', 'completed']);
    expect(summary.moves[0]!.novaMigrationId).toBe(2);
    expect(recorded.quarantined).toEqual([]);
  });

  it('aborts what runs when the window ends, skips what has not started, and ends the execution aborted', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const { executor, recorded } = makeExecutor(world);
    const deadline = world.clock.now() + 60_000;
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 2, 2, 'c1', 'c3')],
      },
      { deadline, shouldStop: noStop },
    );
    expect(summary.state).toBe('aborted');
    expect(summary.moves[0]).toMatchObject({ state: 'failed' });
    expect(summary.moves[0]!.detail).toMatch(
      /aborted \(the maintenance window ended\); the server stayed on c1/,
    );
    expect(summary.moves[1]).toMatchObject({
      state: 'skipped',
      detail: 'the maintenance window ended before it started',
    });
    expect(world.cloud.serversByUuid.get(serverId(1))!.host).toBe('c1');
    expect(world.clock.now()).toBeGreaterThanOrEqual(deadline);
    // A window's end is nobody's fault: no retry, no quarantine.
    expect(recorded.quarantined).toEqual([]);
    expect(world.cloud.migrations).toHaveLength(1);
  });

  it('does not send a move whose pre-flight reads used up the window it fitted in', async () => {
    world = await openWorld(threeHosts(), { speed: 20 });
    const w = world;
    const inner = w.executorCloud;
    // The first pre-flight read of the server takes 1000 s of virtual time (timeouts and retries
    // under faults): the move fitted when it was picked (1200 s left, 600 s needed), but only
    // about 200 s are left when its pre-flight ends, while the window is still open.
    let reads = 0;
    const slowFirstRead: ExecutorCloud['getServer'] = async (id) => {
      if (reads++ === 0) w.cloud.clock.advance(1000);
      return inner.getServer(id);
    };
    const cloud = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'getServer') return slowFirstRead;
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const { executor, recorded } = makeExecutor({ executorCloud: cloud, clock: w.clock });
    const deadline = w.clock.now() + 1_200_000;
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2', { estimatedSeconds: 600 })],
      },
      { deadline, shouldStop: noStop },
    );
    expect(reads).toBeGreaterThan(0);
    expect(summary.moves[0]!.state).toBe('skipped');
    expect(summary.moves[0]!.detail).toMatch(
      /^does not fit in what is left of the window \(≈600 s needed, \d+ s left\)$/,
    );
    // Nothing was asked of Nova: no intent, no os-migrateLive, no migration.
    expect(summary.moves[0]!.issuedAt).toBeNull();
    expect(recorded.audit.some((a) => a.action === 'live-migrate')).toBe(false);
    expect(w.cloud.migrations).toEqual([]);
    expect(w.cloud.serversByUuid.get(serverId(1))!.host).toBe('c1');
  });

  it('records the completion when an abort loses the race with it', async () => {
    world = await openWorld(threeHosts(), { speed: 20 });
    const w = world;
    // The DELETE takes 10 s to reach Nova (a slow network, a busy API): by then it has completed.
    const slowAbort = {
      ...w.executorCloud,
      getServer: (id: string) => w.executorCloud.getServer(id),
      listServersChangedSince: (t: number) => w.executorCloud.listServersChangedSince(t),
      listLiveMigrations: (id: string) => w.executorCloud.listLiveMigrations(id),
      listLiveMigrationsChangedSince: (since: number) =>
        w.executorCloud.listLiveMigrationsChangedSince(since),
      getComputeService: (h: string) => w.executorCloud.getComputeService(h),
      listComputeServices: () => w.executorCloud.listComputeServices(),
      getHostRoom: (h: string) => w.executorCloud.getHostRoom(h),
      getHostInventories: (h: string) => w.executorCloud.getHostInventories(h),
      getHostUsages: (h: string) => w.executorCloud.getHostUsages(h),
      listHostAllocations: (h: string) => w.executorCloud.listHostAllocations(h),
      getServerAllocation: (id: string) => w.executorCloud.getServerAllocation(id),
      liveMigrate: (id: string, h: string) => w.executorCloud.liveMigrate(id, h),
      abortLiveMigration: async (id: string, m: number) => {
        await w.clock.sleep(10_000);
        return w.executorCloud.abortLiveMigration(id, m);
      },
    };
    const { executor, recorded } = makeExecutor(
      { executorCloud: slowAbort, clock: w.clock },
      { timeoutFor: () => 3, settings: { pollSeconds: 1 } },
    );
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    const m = w.cloud.migrations[0]!;
    expect(m.status).toBe('completed');
    expect(summary.moves[0]!.state).toBe('completed');
    expect(summary.moves[0]!.detail).toMatch(
      /abort requested \(timed out after 3 s\) but the migration completed first/,
    );
    expect(w.cloud.serversByUuid.get(serverId(1))!.host).toBe('c2');
    // Nova refused the late DELETE (nothing to abort any more), and the executor said so.
    expect(
      recorded.audit.some(
        (a) => a.action === 'abort' && /invalid state|Cannot abort|not migrating/.test(a.detail),
      ),
    ).toBe(true);
    expect(recorded.costs).toHaveLength(1);
  });
});

describe('failures', () => {
  it('retries a failing migration with backoff from each failure, then quarantines the server', async () => {
    // The gaps below are read on a clock scaled from the wall, so a stall of the test's process
    // lengthens them: each bound leaves 20 virtual seconds (1 s of wall at speed 20) for that. At
    // speed 40 with 10 s of room a 2-core machine at load 8 overshot by 7.7 s.
    world = await openWorld(threeHosts(), { speed: 20 });
    world.cloud.failServers.add(serverId(2));
    const { executor, recorded } = makeExecutor(world, {
      settings: { retry: { attempts: 3, backoffBaseSeconds: 40, backoffMaxSeconds: 60 } },
    });
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 1, 2, 'c1', 'c3'), move(3, 1, 3, 'c1', 'c2')],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves.map((m) => m.state)).toEqual(['completed', 'failed', 'completed']);
    const failed = summary.moves[1]!;
    expect(failed.attempt).toBe(3);
    expect(failed.detail).toMatch(
      /attempt 3 failed: migration \d+ ended failed; the server stayed on c1; server quarantined/,
    );
    const tries = migrationsByServer(world.cloud).get(serverId(2))!;
    expect(tries.map((m) => m.status)).toEqual(['failed', 'failed', 'failed']);
    // Backoff counted from each failure: 40 s after the first, 60 s (capped, not 80) after the
    // second; always the cap would give 60 s after the first.
    const gap1 = (tries[1]!.createdMs - tries[0]!.updatedMs!) / 1000;
    const gap2 = (tries[2]!.createdMs - tries[1]!.updatedMs!) / 1000;
    expect(gap1).toBeGreaterThanOrEqual(40);
    expect(gap1).toBeLessThan(60);
    expect(gap2).toBeGreaterThanOrEqual(60);
    expect(gap2).toBeLessThan(80);
    expect(recorded.quarantined).toEqual([
      expect.objectContaining({
        serverId: serverId(2),
        aggregate: 'agg',
        step: 2,
        novaFault: expect.stringMatching(/failed/),
        reason: expect.stringMatching(/^3 attempt\(s\) failed/),
      }),
    ]);
    expect(world.cloud.serversByUuid.get(serverId(2))!.host).toBe('c1');
    expect(recorded.audit.filter((a) => a.action === 'retry-scheduled')).toHaveLength(2);
  });

  it('counts a scheduler refusal as a failed attempt and says what Nova said', async () => {
    // The plan's destination filled up since planning, with nothing visible to pre-flight
    // (the anti-affinity filter): Nova's conductor refuses it.
    const snap = threeHosts();
    snap.serverGroups = [
      {
        id: 'g1',
        name: 'g',
        policy: 'anti-affinity',
        members: [serverId(1), serverId(4)],
        projectId: snap.servers[0]!.projectId,
      },
    ];
    snap.servers[3]!.host = 'c2';
    world = await openWorld(snap, { speed: 40 });
    const { executor, recorded } = makeExecutor(world, {
      settings: { retry: { attempts: 2, backoffBaseSeconds: 5 } },
    });
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves[0]).toMatchObject({ state: 'failed', attempt: 2 });
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['error', 'error']);
    expect(recorded.quarantined).toHaveLength(1);
  });
});

describe('pause', () => {
  it('starts nothing new once paused and lets what runs finish (onStop: finish)', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    const { executor } = makeExecutor(world);
    let paused = false;
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 2, 2, 'c1', 'c3'), move(3, 3, 3, 'c1', 'c2')],
      },
      {
        deadline: null,
        shouldStop: () => {
          // Pause as soon as the first migration is running.
          if (world!.cloud.migrations.length > 0) paused = true;
          return paused;
        },
      },
    );
    expect(summary.state).toBe('aborted');
    expect(summary.moves.map((m) => m.state)).toEqual(['completed', 'skipped', 'skipped']);
    expect(summary.moves[1]!.detail).toBe('paused before it started');
    expect(world.cloud.migrations).toHaveLength(1);
  });

  it('aborts what runs when paused with onStop: abort', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const { executor, recorded } = makeExecutor(world, { settings: { onStop: 'abort' } });
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: () => world!.cloud.migrations.some((m) => m.status === 'running') },
    );
    expect(summary.moves[0]!.state).toBe('failed');
    expect(summary.moves[0]!.detail).toMatch(/aborted \(paused, with in-flight migrations set to abort\)/);
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['cancelled']);
    expect(recorded.quarantined).toEqual([]);
  });
});
