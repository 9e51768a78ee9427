// Faults everywhere: the simulator answers 5xx or hangs on a fifth of all Nova and Placement
// requests (and Nova's actions meet 409s): no move may go wrong, none may be lost, and every
// fault is counted.
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutorService } from '../../src/executor/index.js';
import { ActuatorError, type ExecutorCloud } from '../../src/executor/ports.js';
import type { Move } from '../../src/model/plan.js';
import { createRng } from '../../src/util/rng.js';
import {
  host,
  makeExecutor,
  migrationsByServer,
  move,
  noStop,
  openWorld,
  server,
  snapshot,
  type World,
} from './sim-world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** Nova's 409 on its actions ("instance is in task state..."), before the call is sent. */
function conflicting(
  inner: ExecutorCloud,
  rate: number,
  seed: number,
): { cloud: ExecutorCloud; hits: () => number } {
  const rng = createRng(seed);
  let hits = 0;
  const maybe = (what: string) => {
    if (rng.next() < rate) {
      hits++;
      throw new ActuatorError('conflict', `${what}: conflict (409): injected`, 409);
    }
  };
  return {
    cloud: {
      ...inner,
      getServer: (id) => inner.getServer(id),
      listServersChangedSince: (t) => inner.listServersChangedSince(t),
      listLiveMigrations: (id) => inner.listLiveMigrations(id),
      listLiveMigrationsChangedSince: (since) => inner.listLiveMigrationsChangedSince(since),
      getComputeService: (h) => inner.getComputeService(h),
      listComputeServices: () => inner.listComputeServices(),
      getHostRoom: (h) => inner.getHostRoom(h),
      getHostInventories: (h) => inner.getHostInventories(h),
      getHostUsages: (h) => inner.getHostUsages(h),
      listHostAllocations: (h) => inner.listHostAllocations(h),
      getServerAllocation: (id) => inner.getServerAllocation(id),
      liveMigrate: async (id, h) => {
        maybe('os-migrateLive');
        return inner.liveMigrate(id, h);
      },
      abortLiveMigration: async (id, m) => {
        maybe('abort');
        return inner.abortLiveMigration(id, m);
      },
    },
    hits: () => hits,
  };
}

describe('faults on every API', () => {
  it('causes no wrong move and loses no record', async () => {
    const hostNames = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
    const servers = [];
    const moves = [];
    for (let n = 1; n <= 30; n++) {
      const from = hostNames[n % 6]!;
      const to = hostNames[(n + 1 + (n % 4)) % 6]!;
      servers.push(server(n, from, 2048));
      moves.push(move(n, 1, n, from, to === from ? hostNames[(n + 2) % 6]! : to));
    }
    world = await openWorld(
      snapshot(
        hostNames.map((h) => host(h)),
        servers,
      ),
      { speed: 30, timeoutMs: 500, faultSeed: 7 },
    );
    const api = '^(GET|POST|PUT|DELETE) /(compute|placement)/';
    world.sim.faults.add({ pattern: api, kind: 'error', rate: 0.12, status: 503 });
    world.sim.faults.add({ pattern: api, kind: 'error', rate: 0.05, status: 500 });
    world.sim.faults.add({ pattern: api, kind: 'timeout', rate: 0.05, delayMs: 1000 });
    const c = conflicting(world.executorCloud, 0.2, 3);
    const { executor, journal } = makeExecutor(
      { executorCloud: c.cloud, clock: world.clock },
      {
        settings: { retry: { attempts: 6, backoffBaseSeconds: 5 }, limits: { perSourceHost: 2, global: 8 } },
      },
    );
    const summary = await executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    const faultHits = world.sim.faults.list().reduce((n, r) => n + r.hits, 0);
    // The faults happened, and the executor saw them.
    expect(faultHits).toBeGreaterThan(20);
    expect(c.hits()).toBeGreaterThan(0);
    expect(summary.counters.readErrors + summary.counters.unknownOutcomes).toBeGreaterThan(0);

    // No record lost: every move is in the journal once, final.
    const stored = await journal.listMoves(summary.executionId);
    expect(stored.map((m) => m.step)).toEqual(moves.map((m) => m.step));
    expect(stored.every((m) => ['completed', 'failed', 'skipped'].includes(m.state))).toBe(true);
    // No wrong move: only planned servers went to their planned hosts, each at most once, and
    // the journal says exactly what the cloud did.
    const byServer = migrationsByServer(world.cloud);
    for (const m of world.cloud.migrations) {
      const planned = moves.find((x) => x.serverId === m.server.uuid);
      expect(planned).toBeDefined();
      expect(m.requestedHost).toBe(planned?.to);
    }
    for (const rec of stored) {
      const done = (byServer.get(rec.serverId) ?? []).filter((m) => m.status === 'completed');
      const sim = world.cloud.serversByUuid.get(rec.serverId)!;
      expect(done.length).toBeLessThanOrEqual(1);
      if (rec.state === 'completed') {
        expect(sim.host).toBe(rec.to);
        expect(done[0]?.id).toBe(rec.novaMigrationId);
      } else {
        expect(sim.host).toBe(rec.from);
        expect(done).toHaveLength(0);
      }
    }
    // With six attempts each, the faults delay moves but do not stop them.
    expect(summary.counts.completed).toBe(moves.length);
    console.log(
      `faults: ${faultHits} injected HTTP faults (${world.sim.faults
        .list()
        .map((r) => `${r.kind}${r.kind === 'error' ? ` ${r.status}` : ''}: ${r.hits}`)
        .join(
          ', ',
        )}), ${c.hits()} injected 409s; executor: ${JSON.stringify(summary.counters)}; moves: ${JSON.stringify(summary.counts)}`,
    );
  }, 120_000);
});

describe('ExecutorService (the control loop port)', () => {
  it('runs a plan in the background, one execution per aggregate, and shows what is in flight', async () => {
    world = await openWorld(snapshot([host('c1'), host('c2')], [server(1, 'c1'), server(2, 'c1')]), {
      speed: 20,
    });
    // The first os-migrateLive sent: its move is in flight from then (the executor holds the step
    // as a running task before it sends).
    let sent: () => void = () => {};
    const firstSent = new Promise<void>((r) => {
      sent = r;
    });
    const cloud = world.executorCloud;
    const { executor } = makeExecutor({
      clock: world.clock,
      executorCloud: new Proxy(cloud, {
        get(target, prop) {
          if (prop === 'liveMigrate')
            return (id: string, to: string) => {
              sent();
              return target.liveMigrate(id, to);
            };
          const v: unknown = Reflect.get(target, prop);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      }),
    });
    const ended: string[] = [];
    const service = new ExecutorService(executor, {
      isPaused: () => false,
      onEnded: (s, aggregate) => ended.push(`${aggregate}:${s.state}:${s.counts.completed}`),
    });
    const planMove = (step: number, n: number): Move => ({
      step,
      wave: step,
      server: move(step, step, n, 'c1', 'c2').serverId,
      from: 'c1',
      to: 'c2',
      phase: 'spread',
      reason: 'test',
      estimatedSeconds: 10,
    });
    await service.start({
      aggregate: 'agg',
      planId: 'plan-7',
      moves: [planMove(1, 1), planMove(2, 2)],
      emergency: false,
      deadline: null,
      startedBy: 'loop:active',
    });
    expect(service.isRunning('agg')).toBe(true);
    await expect(
      service.start({
        aggregate: 'agg',
        planId: 'p',
        moves: [],
        emergency: false,
        deadline: null,
        startedBy: 'x',
      }),
    ).rejects.toThrow(/already running/);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      firstSent,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no live migration sent in 10 s')), 10_000);
      }),
    ]);
    clearTimeout(timer);
    expect([...service.inFlight().hosts].sort()).toEqual(['c1', 'c2']);
    await service.idle();
    expect(service.isRunning('agg')).toBe(false);
    expect(ended).toEqual(['agg:finished:2']);
  });
});
