// Aborts that end and stick: an abort Nova never confirms ends the move after
// abortGiveUpSeconds (failed, "abort not confirmed", server quarantined), but only on what Nova
// showed after that time, never while it could not be read; and with
// onAbort: quarantine the servers an aborted execution did not move wait for an operator.
import { afterEach, describe, expect, it } from 'vitest';
import { resolveExecutorSettings } from '../../src/executor/settings.js';
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

const threeHosts = () =>
  snapshot(
    [host('c1'), host('c2'), host('c3')],
    [1, 2, 3, 4].map((n) => server(n, 'c1')),
  );

describe('an abort Nova never confirms', () => {
  it('ends the move failed after abortGiveUpSeconds and quarantines its server', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    // Each DELETE is accepted, and the migration goes on running: a stuck compute service.
    world.cloud.timing.abortSeconds = 36_000;
    const { executor, recorded } = makeExecutor(world, {
      timeoutFor: () => 30,
      settings: { abortGiveUpSeconds: 60 },
    });
    const startedAt = world.clock.now();
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    const rec = summary.moves[0]!;
    expect(rec.state).toBe('failed');
    expect(rec.detail).toMatch(
      /abort not confirmed by Nova after \d+ s \(migration 1 last seen running; timed out after 30 s\); the server may end on c1 or c2; server quarantined$/,
    );
    // A timeout's abort would retry; one that never ends does not: nothing more is sent.
    expect(rec.attempt).toBe(1);
    expect(world.cloud.migrations).toHaveLength(1);
    expect(recorded.quarantined).toHaveLength(1);
    expect(recorded.quarantined[0]).toMatchObject({ serverId: serverId(1), aggregate: 'agg' });
    expect(recorded.quarantined[0]!.reason).toMatch(/^abort not confirmed by Nova/);
    // Gave up after the timeout (30 s) plus the give-up time (60 s), not before.
    expect(world.clock.now() - startedAt).toBeGreaterThanOrEqual(90_000);
    expect(summary.counters.abortRequests).toBeGreaterThanOrEqual(2);
  });

  it('is not given up while Nova cannot be read: a migration that completed meanwhile ends completed', async () => {
    world = await openWorld(threeHosts(), { speed: 100 });
    world.cloud.timing.holdSeconds = 120;
    const w = world;
    // Nova's reads fail from 20 s into the migration to 300 s (its API down, a breaker open, a
    // starved process): the move times out at 30 s and its abort cannot read anything for far
    // longer than the 60 s give-up time, while the migration completes at about 120 s. Only the
    // reads fail, and only by virtual time, so how loaded the machine is changes nothing.
    const dark = () => {
      const m = w.cloud.migrations[0];
      const t = w.cloud.clock.nowMs();
      return m !== undefined && t >= m.createdMs + 20_000 && t < m.createdMs + 300_000;
    };
    const real = world.executorCloud;
    const unreachable = () => Promise.reject(new Error('compute is unreachable (test)'));
    const cloud: typeof real = Object.assign(Object.create(real) as typeof real, {
      getServer: (id: string) => (dark() ? unreachable() : real.getServer(id)),
      listServersChangedSince: (since: number) =>
        dark() ? unreachable() : real.listServersChangedSince(since),
      listLiveMigrations: (id: string) => (dark() ? unreachable() : real.listLiveMigrations(id)),
      listLiveMigrationsChangedSince: (since: number) =>
        dark() ? unreachable() : real.listLiveMigrationsChangedSince(since),
    });
    const { executor, recorded } = makeExecutor(
      { executorCloud: cloud, clock: world.clock },
      { timeoutFor: () => 30, settings: { abortGiveUpSeconds: 60 } },
    );
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: noStop },
    );
    const rec = summary.moves[0]!;
    // Before: failed, "abort not confirmed by Nova after 60 s (no migration record read yet ...)",
    // quarantined, while Nova had moved the server to c2.
    expect(rec.state).toBe('completed');
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['completed']);
    expect(world.cloud.serversByUuid.get(serverId(1))?.host).toBe('c2');
    expect(rec.detail).toMatch(/abort requested \(timed out after 30 s\) but the migration completed first$/);
    expect(recorded.quarantined).toEqual([]);
    expect(summary.counters.readErrors).toBeGreaterThan(0);
    // No DELETE could be sent: every read in the abort's first 60 s failed.
    expect(world.clock.now() - world.cloud.migrations[0]!.createdMs).toBeGreaterThanOrEqual(300_000);
  });

  it('still ends an operator-aborted execution aborted, with one quarantine entry per server', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    world.cloud.timing.abortSeconds = 36_000;
    const w = world;
    let asked: string | null = null;
    const { executor, recorded } = makeExecutor(world, {
      settings: { abortGiveUpSeconds: 60, onAbort: 'quarantine', limits: { perSourceHost: 1 } },
    });
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 1, 2, 'c1', 'c3')],
      },
      {
        deadline: null,
        shouldStop: noStop,
        // Asked once the first migration runs, and standing from then on, as the service's is.
        abortRequested: () =>
          (asked ??= w.cloud.migrations.some((m) => m.status === 'running')
            ? 'operator:alice aborted it'
            : null),
      },
    );
    expect(summary.state).toBe('aborted');
    expect(summary.moves[0]!.detail).toMatch(/abort not confirmed by Nova .*; server quarantined$/);
    expect(summary.moves[1]).toMatchObject({ state: 'skipped' });
    // The stuck one keeps its own reason; the one never started is quarantined for the abort.
    expect(recorded.quarantined.map((q) => q.serverId)).toEqual([serverId(1), serverId(2)]);
    expect(recorded.quarantined[0]!.reason).toMatch(/^abort not confirmed by Nova after/);
    expect(recorded.quarantined[1]!.reason).toMatch(/^its move c1 -> c3 was in execution /);
    expect(recorded.quarantined[1]!.reason).toMatch(
      /aborted \(operator:alice aborted it\) \(cooldowns.onAbort: quarantine\)$/,
    );
  });
});

describe('onAbort', () => {
  it('quarantine: the servers of moves an aborted execution did not complete are quarantined', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const { executor, recorded } = makeExecutor(world, {
      settings: { onStop: 'abort', onAbort: 'quarantine' },
    });
    const w = world;
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 1, 2, 'c1', 'c3')],
      },
      { deadline: null, shouldStop: () => w.cloud.migrations.some((m) => m.status === 'running') },
    );
    expect(summary.state).toBe('aborted');
    expect(summary.moves.map((m) => m.state)).toEqual(['failed', 'skipped']);
    expect(world.cloud.migrations.map((m) => m.status)).toEqual(['cancelled']);
    expect(recorded.quarantined.map((q) => q.serverId)).toEqual([serverId(1), serverId(2)]);
    for (const q of recorded.quarantined) expect(q.reason).toMatch(/\(cooldowns.onAbort: quarantine\)$/);
    expect(recorded.audit.filter((a) => a.action === 'quarantined')).toHaveLength(2);
  });

  it('cooldown (the default): nothing is quarantined, the loop holds the servers for afterAbort', async () => {
    world = await openWorld(threeHosts(), { speed: 40 });
    world.cloud.timing.holdSeconds = 3600;
    const { executor, recorded, deps } = makeExecutor(world, { settings: { onStop: 'abort' } });
    expect(deps.settings.onAbort).toBe('cooldown');
    const w = world;
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves: [move(1, 1, 1, 'c1', 'c2')] },
      { deadline: null, shouldStop: () => w.cloud.migrations.some((m) => m.status === 'running') },
    );
    expect(summary.state).toBe('aborted');
    expect(recorded.quarantined).toEqual([]);
  });

  it('refuses an unknown value or a zero give-up time, naming the key', () => {
    expect(() => resolveExecutorSettings({ onAbort: 'forget' as 'cooldown' })).toThrow(
      'executor.onAbort: expected "cooldown" or "quarantine", got "forget"',
    );
    expect(() => resolveExecutorSettings({ abortGiveUpSeconds: 0 })).toThrow(
      'executor.abortGiveUpSeconds: expected a number > 0, got 0',
    );
  });
});
