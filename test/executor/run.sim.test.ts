// The executor against the simulator over HTTP, through the real OpenStack clients: plans that
// complete, concurrency limits seen from the simulator's own records, pre-flight refusals.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { hostLockName } from '../../src/coordination/locks.js';
import { resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';
import {
  host,
  makeExecutor,
  maxOverlap,
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

describe('a plan of moves', () => {
  it('completes: every server ACTIVE on its destination, each migrated once, in wave order', async () => {
    const hosts = ['c1', 'c2', 'c3', 'c4'].map((h) => host(h));
    const servers = [1, 2, 3, 4, 5, 6].map((n) => server(n, n <= 3 ? 'c1' : 'c2'));
    world = await openWorld(snapshot(hosts, servers));
    const { executor, recorded } = makeExecutor(world, {
      settings: { limits: { perSourceHost: 2, perDestinationHost: 2 } },
    });
    const moves = [
      move(1, 1, 1, 'c1', 'c3'),
      move(2, 1, 4, 'c2', 'c4'),
      move(3, 1, 2, 'c1', 'c4'),
      move(4, 2, 3, 'c1', 'c3', { after: [1] }),
      move(5, 2, 5, 'c2', 'c3'),
      move(6, 3, 6, 'c2', 'c1', { after: [3] }),
    ];
    const summary = await executor.start(
      { aggregate: 'agg', planId: 'plan-1', startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.state).toBe('finished');
    expect(summary.counts.completed).toBe(6);
    const byServer = migrationsByServer(world.cloud);
    for (const m of moves) {
      const s = world.cloud.serversByUuid.get(m.serverId);
      expect(s?.host).toBe(m.to);
      expect(s?.status).toBe('ACTIVE');
      expect(byServer.get(m.serverId)?.map((x) => x.status)).toEqual(['completed']);
      const rec = summary.moves.find((r) => r.step === m.step);
      expect(rec?.novaMigrationId).toBe(byServer.get(m.serverId)?.[0]?.id);
      expect(rec?.attempt).toBe(1);
    }
    // Wave order: no migration of wave w starts before every one of wave w-1 has ended.
    const sim = (step: number) => byServer.get(moves[step - 1]!.serverId)![0]!;
    const endOf = (steps: number[]) => Math.max(...steps.map((s) => sim(s).updatedMs ?? Infinity));
    const startOf = (steps: number[]) => Math.min(...steps.map((s) => sim(s).createdMs));
    expect(startOf([4, 5])).toBeGreaterThanOrEqual(endOf([1, 2, 3]));
    expect(startOf([6])).toBeGreaterThanOrEqual(endOf([4, 5]));
    expect(recorded.costs).toHaveLength(6);
    expect(recorded.costs.every((c) => c.seconds > 0 && c.ramMB === 4096)).toBe(true);
    expect(recorded.quarantined).toEqual([]);
  });

  it("with the host locks the service gives it: moves sharing a host run together, a task's host is refused", async () => {
    // Three moves leave c1 in one wave (perSourceHost 3), one of them to c2, which another move
    // leaves at the same time: every host is shared by moves of one execution.
    const hosts = ['c1', 'c2', 'c3', 'c4', 'c9'].map((h) => host(h));
    const servers = [1, 2, 3].map((n) => server(n, 'c1')).concat([server(4, 'c2'), server(5, 'c9')]);
    world = await openWorld(snapshot(hosts, servers));
    const locks = new LocalLockService();
    // An operator task holds c9 (a validation, say): the move from it must not start.
    await locks.tryAcquire(hostLockName('c9'), 'task:7');
    const { executor } = makeExecutor(world, {
      settings: { limits: { perSourceHost: 3, perDestinationHost: 2 } },
      hostLocks: locks,
    });
    const moves = [
      move(1, 1, 1, 'c1', 'c2'),
      move(2, 1, 2, 'c1', 'c3'),
      move(3, 1, 3, 'c1', 'c4'),
      move(4, 1, 4, 'c2', 'c3'),
      move(5, 1, 5, 'c9', 'c4'),
    ];
    const seen = new Set<string>();
    const watching = setInterval(() => {
      void locks.list('host/').then((ls) => {
        for (const l of ls) seen.add(`${l.name} ${l.owner}`);
      });
    }, 5);
    const summary = await executor
      .start(
        { aggregate: 'agg', planId: 'plan-locks', startedBy: 'test', moves },
        { deadline: null, shouldStop: noStop },
      )
      .finally(() => clearInterval(watching));
    expect(summary.moves.map((m) => [m.step, m.state, m.state === 'skipped' ? m.detail : null])).toEqual([
      [1, 'completed', null],
      [2, 'completed', null],
      [3, 'completed', null],
      [4, 'completed', null],
      [5, 'skipped', 'host c9 is held by task:7'],
    ]);
    // The three from c1 overlapped in Nova, under one lock per host, taken as the execution.
    const c1 = world.cloud.migrations.filter((m) => m.source === 'c1');
    expect(maxOverlap(c1, (m) => m.source).get('c1')).toBe(3);
    const owner = `executor:${summary.executionId}`;
    expect([...seen].filter((x) => x.startsWith('host/c1 '))).toEqual([`host/c1 ${owner}`]);
    // Given back when the last move using each host ended; the task's lock untouched.
    expect((await locks.list('host/')).map((l) => `${l.name} ${l.owner}`)).toEqual(['host/c9 task:7']);
  });

  it('holds every concurrency limit, counted from the simulator side', async () => {
    const hosts = ['s1', 's2', 's3', 'd1', 'd2', 'd3'].map((h) => host(h));
    const servers: ReturnType<typeof server>[] = [];
    const moves = [];
    let n = 0;
    for (const src of ['s1', 's2', 's3']) {
      for (let i = 0; i < 6; i++) {
        n++;
        servers.push(server(n, src, 2048));
        moves.push(move(n, 1, n, src, ['d1', 'd2', 'd3'][i % 3]!));
      }
    }
    world = await openWorld(snapshot(hosts, servers), { speed: 30 });
    // s2 may send two at once (its nova.conf says so); the simulator must agree to run them.
    world.cloud.hostsByName.get('s2')!.maxConcurrentLiveMigrations = 2;
    const settings = resolveExecutorSettings({
      limits: { perSourceHost: 1, perSourceHostOverrides: { s2: 2 }, perDestinationHost: 2, global: 3 },
    });
    const { executor } = makeExecutor(world, {
      settings: { limits: settings.limits },
      slots: new MigrationSlots(settings.limits),
    });
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.counts.completed).toBe(18);
    const all = world.cloud.migrations;
    const bySource = maxOverlap(all, (m) => m.source);
    const byDest = maxOverlap(all, (m) => m.dest ?? '?');
    const global = maxOverlap(all, () => 'all');
    expect(bySource.get('s1')).toBe(1);
    expect(bySource.get('s3')).toBe(1);
    expect(bySource.get('s2')).toBe(2);
    expect(Math.max(...byDest.values())).toBeLessThanOrEqual(2);
    expect(global.get('all')).toBe(3);
    // Never queued behind Nova's own limit: the executor did not send more than a host runs.
    expect(all.every((m) => m.status === 'completed')).toBe(true);
  });
});

describe('pre-flight', () => {
  it('skips, with the reason, moves the cloud no longer allows, and runs the others', async () => {
    const small = host('tiny', {
      inventory: {
        VCPU: { total: 64, reserved: 0, allocationRatio: 4 },
        MEMORY_MB: { total: 6000, reserved: 512, allocationRatio: 1 },
        DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
      },
    });
    const hosts = [
      host('c1'),
      host('c2'),
      host('off', {
        service: { state: 'up', status: 'disabled', forcedDown: false, disabledReason: 'maint' },
      }),
      host('dead'),
      host('forced', { service: { state: 'up', status: 'enabled', forcedDown: true } }),
      small,
    ];
    const servers = [
      server(1, 'c1'),
      server(2, 'c1', 4096, { status: 'SHUTOFF' }),
      server(3, 'c1', 4096, { taskState: 'resize_prep' }),
      server(4, 'c2'),
      server(5, 'c1'),
      server(6, 'c1'),
      server(7, 'c1'),
      server(8, 'c1', 8192),
      server(9, 'c1'),
    ];
    world = await openWorld(snapshot(hosts, servers));
    world.cloud.hostsByName.get('dead')!.down = true;
    const { executor, recorded } = makeExecutor(world, { settings: { limits: { perSourceHost: 4 } } });
    const moves = [
      move(1, 1, 1, 'c1', 'c2'),
      move(2, 1, 2, 'c1', 'c2'),
      move(3, 1, 3, 'c1', 'c2'),
      move(4, 1, 4, 'c1', 'c2'), // the plan thought it was on c1
      move(5, 1, 5, 'c1', 'off'),
      move(6, 1, 6, 'c1', 'dead'),
      move(7, 1, 7, 'c1', 'forced'),
      move(8, 1, 8, 'c1', 'tiny'),
      { ...move(9, 1, 9, 'c1', 'c2'), serverId: 'ffffffff-0000-4000-8000-000000000000' },
    ];
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    const detail = (step: number) => summary.moves.find((m) => m.step === step);
    expect(detail(1)?.state).toBe('completed');
    expect(detail(2)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/SHUTOFF, not ACTIVE/),
    });
    expect(detail(3)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/task state resize_prep/),
    });
    expect(detail(4)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/already on its destination c2/),
    });
    expect(detail(5)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/off is disabled \(maint\)/),
    });
    expect(detail(6)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/dead: nova-compute is down/),
    });
    expect(detail(7)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/forced: nova-compute is forced down/),
    });
    expect(detail(8)).toMatchObject({
      state: 'skipped',
      detail: expect.stringMatching(/no room on tiny for MEMORY_MB: used 0 \+ needed 8192 > capacity 5488/),
    });
    expect(detail(9)).toMatchObject({ state: 'skipped', detail: expect.stringMatching(/no longer exists/) });
    // Nothing was sent for a skipped move.
    expect(world.cloud.migrations.map((m) => m.server.uuid)).toEqual([serverId(1)]);
    expect(recorded.audit.filter((a) => a.action === 'preflight-refused')).toHaveLength(8);
    expect(summary.moves.filter((m) => m.state === 'skipped').every((m) => m.issuedAt === null)).toBe(true);
  });

  it('counts what its own started migrations will claim on a destination before Placement shows it', async () => {
    const mid = host('mid', {
      inventory: {
        VCPU: { total: 64, reserved: 0, allocationRatio: 4 },
        MEMORY_MB: { total: 8000, reserved: 512, allocationRatio: 1 },
        DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
      },
    });
    world = await openWorld(snapshot([host('a'), host('b'), mid], [server(1, 'a'), server(2, 'b')]), {
      timing: { scheduleSeconds: 5 },
    });
    const { executor } = makeExecutor(world, { settings: { limits: { perDestinationHost: 2 } } });
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'a', 'mid'), move(2, 1, 2, 'b', 'mid')],
      },
      { deadline: null, shouldStop: noStop },
    );
    // Each fits alone (4096 in 7488), not both: the second waits while the first's claim is in
    // flight, then finds no room and is skipped; Nova never sees it.
    expect(summary.counts.completed).toBe(1);
    expect(summary.counts.skipped).toBe(1);
    expect(summary.moves.find((m) => m.state === 'skipped')?.detail).toMatch(
      /no room on mid for MEMORY_MB: used (4096|8192)/,
    );
    expect(world.cloud.migrations).toHaveLength(1);
  });
});
