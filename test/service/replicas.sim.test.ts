// Two whole services as replicas, in one process, against the simulator: one MariaDB store, one
// etcd. Each plans and acts only on the aggregates it owns; when one stops, the other takes its
// aggregates over; no server is migrated twice.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import { EtcdLockService } from '../../src/coordination/etcd-locks.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { testBackends } from '../store/backends.js';
import { serviceHost as host, serverFactory } from './world.js';

const SPEED = 50;
const etcd = inject('etcd');
const mariadb = testBackends().find((b) => b.name === 'mariadb')!;

const AGGREGATES = ['gold', 'silver', 'bronze', 'iron'];

function world(): Snapshot {
  const server = serverFactory();
  const hosts = AGGREGATES.flatMap((a) => [host(`${a}-1`, a), host(`${a}-2`, a), host(`${a}-3`, a)]);
  const servers = AGGREGATES.flatMap((a) => [
    ...Array.from({ length: 8 }, () => server(`${a}-1`, 3.5)),
    server(`${a}-2`, 1),
  ]);
  return {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'test',
    hosts,
    servers,
    serverGroups: [],
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * Resolves once `service` has run `n` cycles, as each one ends (onCycle); fails after `timeoutMs`.
 */
function cyclesReach(
  what: string,
  service: { cycles: readonly unknown[]; onCycle(l: () => void): void },
  n: number,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (service.cycles.length >= n) return resolve();
    const timer = setTimeout(() => {
      done = true;
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    let done = false;
    service.onCycle(() => {
      // Called after the cycle is counted; a failed cycle is not: the count decides, not the calls.
      if (done || service.cycles.length < n) return;
      done = true;
      clearTimeout(timer);
      resolve();
    });
  });
}

// Polled: the sharing out of aggregates (etcd, on the rebalance timer), a pause seen by another
// replica (its control timer reading the store) and executions in the store tell no one.
async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function cluster(opts: { slow?: boolean } = {}) {
  // slow: migrations last long enough (at SPEED) to act on one while it runs.
  const cloud = new SimCloud(world(), {
    clock: new SimClock({ speed: SPEED }),
    load: staticLoadModel(),
    ...(opts.slow ? { timing: { holdSeconds: 1200 } } : {}),
  });
  const sim: SimServerHandle = await startSimServer({ cloud, password: 'secret' });
  cleanups.push(() => sim.close());
  const { options, cleanup } = await mariadb.fresh();
  cleanups.push(cleanup);
  const prefix = `/svc-${randomBytes(3).toString('hex')}/`;
  const always = ['Mon-Sun 00:00 - 24:00 UTC'];
  const replica = async (id: string) => {
    const { config } = await parseServiceConfig(
      {
        openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
        store: { url: 'mysql://root@localhost/unused?socket=/unused' },
        coordination: { kind: 'etcd', replicaId: id, etcd: { endpoints: [etcd!.endpoint], prefix } },
        cycleInterval: '10s',
        defaults: { mode: 'active', windows: always, budgets: { perCycle: 2 } },
        aggregates: Object.fromEntries(AGGREGATES.map((a) => [a, {}])),
      },
      { baseDir: '/tmp' },
    );
    const session = await openSession({
      config: simAdminConfig(sim.authUrl, 'secret', `replica ${id}`),
      prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
      retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
    });
    const store: Store = await openStore(options);
    const locks = new EtcdLockService({ endpoints: [etcd!.endpoint], prefix, callTimeoutMs: 3000 });
    const service = new AicerineService({
      config,
      store,
      reader: session,
      actuator: await Actuator.open({
        config: session.config,
        retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
        credential: { label: `actuator ${id}` },
      }),
      clock: {
        now: () => cloud.clock.nowMs(),
        sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / SPEED))),
      },
      logger: silentLogger,
      recorder: { historyDays: 1 },
      coordination: { locks, replicaId: id, leaseTtlMs: 3000, rebalanceIntervalMs: 300 },
    });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await service.stop();
      await store.close();
    };
    cleanups.push(stop);
    return { service, store, stop };
  };
  return { cloud, replica };
}

describe.skipIf(etcd === null || !mariadb.available)('services as replicas (MariaDB + etcd)', () => {
  it('each replica plans and acts only on its own aggregates; a stopped replica’s aggregates move to the other', async () => {
    const { cloud, replica } = await cluster();
    const r1 = await replica('r1');
    const r2 = await replica('r2');
    // Paused until both share the aggregates: otherwise r1, alone at first, may balance them all
    // before r2 joins (cycles follow each other quickly when executions end), leaving r2 nothing.
    await r1.store.pauses.set({
      aggregate: null,
      by: 'test',
      at: new Date().toISOString(),
      reason: 'until shared',
    });
    await r1.service.start();
    await r2.service.start();
    await waitFor(
      'the aggregates shared out',
      () => r1.service.ownership!.owned().length === 2 && r2.service.ownership!.owned().length === 2,
      15_000,
    );
    expect(await r1.service.resume()).toBe(true);
    const own1 = r1.service.ownership!.owned();
    const own2 = r2.service.ownership!.owned();
    expect([...own1, ...own2].sort()).toEqual([...AGGREGATES].sort());
    // Cycles run on their own (every 10 s, and on each take-over). Once the sharing is settled,
    // each replica plans and acts on its own aggregates only (before r2 joined, r1 owned them all):
    // the cycles that start from now on show it (the one in flight may have read the old sharing).
    const settledAt = [r1.service.cycles.length, r2.service.cycles.length];
    await Promise.all([
      cyclesReach('two more cycles on r1', r1.service, settledAt[0]! + 2, 40_000),
      cyclesReach('two more cycles on r2', r2.service, settledAt[1]! + 2, 40_000),
    ]);
    for (const c of r1.service.cycles.slice(settledAt[0]! + 1))
      expect(c.aggregates.map((a) => a.aggregate).sort()).toEqual(own1);
    for (const c of r2.service.cycles.slice(settledAt[1]! + 1))
      expect(c.aggregates.map((a) => a.aggregate).sort()).toEqual(own2);
    expect([r1, r2].every((r) => r.service.cycles.some((c) => c.aggregates.some((a) => a.started > 0)))).toBe(
      true,
    );
    // r1 stops: its aggregates (and the executions it was running there) are handed over to r2.
    await r1.stop();
    await waitFor(
      'r2 owning everything',
      () => r2.service.ownership!.owned().length === AGGREGATES.length,
      15_000,
    );
    const handedAt = r2.service.cycles.length;
    await cyclesReach('two more cycles on r2', r2.service, handedAt + 2, 40_000);
    for (const c of r2.service.cycles.slice(handedAt + 1))
      expect(c.aggregates.map((a) => a.aggregate).sort()).toEqual([...AGGREGATES].sort());
    await r2.service.executor.idle();
    // Every execution recorded on the shared store; no server migrated twice by the simulator's records.
    const perServer = new Map<string, number>();
    for (const m of cloud.migrations) perServer.set(m.server.uuid, (perServer.get(m.server.uuid) ?? 0) + 1);
    expect(cloud.migrations.length).toBeGreaterThan(0);
    expect([...perServer.values()].every((c) => c === 1)).toBe(true);
    const owners = await r2.store.ownership.list();
    expect(owners.map((o) => o.aggregate).sort()).toEqual([...AGGREGATES].sort());
    for (const o of owners) if (own1.includes(o.aggregate)) expect(o.owner).toBe('r2');
  }, 180_000);

  it('a pause or an abort asked of one replica is carried out by the replica that runs the execution', async () => {
    const { cloud, replica } = await cluster({ slow: true });
    const r1 = await replica('r1');
    await r1.service.start();
    await waitFor(
      'r1 owning everything',
      () => r1.service.ownership!.owned().length === AGGREGATES.length,
      15_000,
    );
    const running = async () => (await r1.store.executions.list({ state: 'running' })).items;
    await waitFor('an execution running on r1', async () => (await running()).length > 0, 40_000);
    const [execution] = await running();
    const r2 = await replica('r2');
    await r2.service.start();
    // r2 does not run it; its abort goes to r1 through the store.
    expect(r2.service.executor.runs(execution!.id)).toBe(false);
    const other = AGGREGATES.find((a) => a !== execution!.aggregate)!;
    await r2.service.control().pause({ aggregate: other }, 'operator:alice', 'patching');
    await waitFor('r1 seeing the pause made on r2', () => r1.service.isPaused(other), 5_000);
    expect(await r2.service.abortExecution(execution!.id, 'operator:alice')).toEqual({
      outcome: 'aborting',
      executionId: execution!.id,
    });
    await waitFor(
      'the execution aborted by r1',
      async () =>
        (await r1.store.executions.list({ state: 'aborted' })).items.some((e) => e.id === execution!.id),
      30_000,
    );
    // Its migration in flight was aborted in Nova, not left to finish.
    expect(cloud.migrations.some((m) => m.status === 'cancelled')).toBe(true);
    expect(await r1.store.abortRequests.list()).toEqual([]);
    expect(await r2.service.abortExecution(execution!.id, 'operator:alice')).toMatchObject({
      outcome: 'not-running',
    });
  }, 120_000);
});
