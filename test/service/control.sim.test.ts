// The running service's control port against the simulator over HTTP: run-time pauses kept in
// the store (a restarted service still honours them), an operator's abort that stops what is not
// issued yet and aborts the migrations in flight in Nova, and the API `serve` starts next to the
// loop (host figures from the loop's snapshot, pauses, metrics fed by cycles).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiLogger } from '../../src/api/logger.js';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { ServiceConfig } from '../../src/config/types.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { startServiceApi } from '../../src/service/api.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud, type SimTiming } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { serviceHost as host, serverFactory } from './world.js';

const SPEED = 50;

function world(): Snapshot {
  const server = serverFactory();
  return {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'test',
    hosts: [
      host('g1', 'gold'),
      host('g2', 'gold'),
      host('g3', 'gold'),
      host('s1', 'silver'),
      host('s2', 'silver'),
    ],
    servers: [
      ...Array.from({ length: 8 }, () => server('g1', 3.5)),
      server('g2', 1),
      ...Array.from({ length: 8 }, () => server('s1', 3.5)),
    ],
    serverGroups: [],
  };
}

interface Rig {
  sim: SimServerHandle;
  session: CloudSession;
  config: ServiceConfig;
  dir: string;
  store: Store;
  service: AicerineService;
}

const always = ['Mon-Sun 00:00 - 24:00 UTC'];
let rigs: Rig[] = [];
let closers: (() => Promise<void>)[] = [];

async function rig(doc: Record<string, unknown>, timing: Partial<SimTiming> = {}): Promise<Rig> {
  const cloud = new SimCloud(world(), {
    clock: new SimClock({ speed: SPEED }),
    load: staticLoadModel(),
    timing,
  });
  const sim = await startSimServer({ cloud, password: 'secret' });
  const dir = await mkdtemp(join(tmpdir(), 'aic-control-'));
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      cycleInterval: '1m',
      ...doc,
    },
    { baseDir: dir },
  );
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'control test (simulator)'),
    prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
  });
  const r = { sim, session, config, dir, ...(await open(config, dir, session, cloud)) };
  rigs.push(r);
  return r;
}

async function open(config: ServiceConfig, dir: string, session: CloudSession, cloud: SimCloud) {
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  const actuator = await Actuator.open({ config: session.config, credential: { label: 'actuator (test)' } });
  const service = new AicerineService({
    config,
    store,
    reader: session,
    actuator,
    clock: {
      now: () => cloud.clock.nowMs(),
      sleep: (ms) => new Promise((res) => setTimeout(res, Math.max(0, ms / SPEED))),
    },
    logger: silentLogger,
    recorder: { historyDays: 1 },
  });
  return { store, service };
}

afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
  for (const r of rigs) {
    await r.service.stop();
    await r.store.close();
    await r.sim.close();
    await rm(r.dir, { recursive: true, force: true });
  }
  rigs = [];
});

const until = async (what: string, cond: () => boolean | Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 50));
  }
};

describe('the running service as the API controls it', () => {
  it('a run-time pause is kept in the store: a restarted service still honours it until resumed', async () => {
    const r = await rig({ defaults: { mode: 'active', windows: always } });
    const control = r.service.control();
    await control.pause({ aggregate: 'gold' }, 'operator:alice', 'change 1234');
    expect(r.service.isPaused('gold')).toBe(true);
    expect(r.service.isPaused('silver')).toBe(false);
    // The process ends; another one opens the same store.
    await r.service.stop();
    await r.store.close();
    const again = await open(r.config, r.dir, r.session, r.sim.cloud);
    Object.assign(r, again);
    const report = await r.service.runCycle();
    expect(report.aggregates.find((a) => a.aggregate === 'gold')!.summary).toBe('paused (this aggregate)');
    expect(report.aggregates.find((a) => a.aggregate === 'gold')!.started).toBe(0);
    expect((await r.service.control().pauses()).aggregates.gold).toEqual({
      by: 'operator:alice',
      at: expect.any(String),
      reason: 'change 1234',
    });
    await r.service.executor.idle();
    expect(await r.service.control().resume({ aggregate: 'gold' }, 'operator:bob')).toBe(true);
    expect(await r.service.control().resume({ aggregate: 'gold' }, 'operator:bob')).toBe(false);
    const next = await r.service.runCycle();
    expect(next.aggregates.find((a) => a.aggregate === 'gold')!.started).toBeGreaterThan(0);
    await r.service.executor.idle();
  });

  it('an abort skips moves not issued and aborts the migrations in flight in Nova, then the execution ends aborted', async () => {
    // Migrations stay running for an hour of virtual time: only an abort ends them.
    const r = await rig(
      {
        defaults: { mode: 'observe' },
        aggregates: {
          gold: {
            mode: 'active',
            windows: always,
            budgets: { perCycle: 3 },
            concurrency: { perSourceHost: 1, perDestinationHost: 2, perAggregate: 4 },
          },
        },
      },
      { holdSeconds: 3600 },
    );
    const report = await r.service.runCycle();
    expect(report.aggregates.find((a) => a.aggregate === 'gold')!.started).toBe(3);
    const execution = (await r.store.executions.list({ aggregate: 'gold' })).items[0]!;
    await until('a migration running in the simulator', () =>
      r.sim.cloud.migrations.some((m) => m.status === 'running'),
    );
    const result = await r.service.abortExecution(execution.id, 'operator:carol');
    expect(result).toEqual({ outcome: 'aborting', executionId: execution.id });
    await r.service.executor.idle();
    expect((await r.store.getExecution(execution.id))?.state).toBe('aborted');
    const moves = await r.store.listMoves(execution.id);
    // One source host (g1) allows one migration at a time: one was in flight, two never issued.
    expect(moves.map((m) => m.state).sort()).toEqual(['failed', 'skipped', 'skipped']);
    const aborted = moves.find((m) => m.state === 'failed')!;
    expect(aborted.detail).toMatch(/aborted by operator:carol/);
    expect(r.sim.cloud.serversByUuid.get(aborted.serverId)?.host).toBe(aborted.from);
    expect(r.sim.cloud.migrations.map((m) => m.status)).toEqual(['cancelled']);
    const audit = await r.store.audit.list({ action: 'executor.abort' });
    expect(audit.items.some((a) => /DELETE migration \d+/.test(JSON.stringify(a.detail)))).toBe(true);
    // Nothing left to abort.
    expect(await r.service.abortExecution(execution.id, 'operator:carol')).toEqual({
      outcome: 'not-running',
      executionId: execution.id,
      state: 'aborted',
    });
    expect(await r.service.abortExecution('no-such-execution', 'operator:carol')).toEqual({
      outcome: 'not-found',
      executionId: 'no-such-execution',
    });
  }, 60_000);

  it('an abort sticks: the next cycles have data health ok and never move those servers again', async () => {
    const r = await rig(
      {
        defaults: { mode: 'observe' },
        aggregates: {
          gold: {
            mode: 'active',
            windows: always,
            budgets: { perCycle: 3 },
            cooldowns: { aggregate: '0s' },
            concurrency: { perSourceHost: 1, perDestinationHost: 2, perAggregate: 4 },
          },
        },
      },
      { holdSeconds: 3600 },
    );
    await r.service.runCycle();
    const execution = (await r.store.executions.list({ aggregate: 'gold' })).items[0]!;
    await until('a migration running in the simulator', () =>
      r.sim.cloud.migrations.some((m) => m.status === 'running'),
    );
    await r.service.abortExecution(execution.id, 'operator:carol');
    await r.service.executor.idle();
    r.sim.cloud.timing.holdSeconds = 0;
    const held = new Set((await r.store.listMoves(execution.id)).map((m) => m.serverId));
    for (let i = 0; i < 2; i++) {
      const report = await r.service.runCycle();
      const gold = report.aggregates.find((a) => a.aggregate === 'gold')!;
      expect(gold.verdict?.verdict, gold.verdict?.reasons.join('; ')).toBe('ok');
      for (const id of held)
        expect(gold.held?.find((h) => h.serverId === id)?.why).toMatch(/cooldowns\.afterAbort/);
      await r.service.executor.idle();
    }
    const later = (await r.store.executions.list({ aggregate: 'gold' })).items.filter(
      (e) => e.id !== execution.id,
    );
    for (const e of later)
      for (const m of await r.store.listMoves(e.id)) expect(held.has(m.serverId)).toBe(false);
    // Nova has one record of the aborted server's move: cancelled.
    const aborted = (await r.store.listMoves(execution.id)).find((m) => m.state === 'failed')!;
    expect(
      r.sim.cloud.migrations.filter((m) => m.server.uuid === aborted.serverId).map((m) => m.status),
    ).toEqual(['cancelled']);
  }, 60_000);

  it("cooldowns.onAbort quarantine: an aborted execution's servers stay held, past afterAbort, until an operator releases them", async () => {
    const r = await rig(
      {
        defaults: { mode: 'observe' },
        aggregates: {
          gold: {
            mode: 'active',
            windows: always,
            budgets: { perCycle: 3 },
            // No cooldown at all: only the quarantine can hold them.
            cooldowns: { aggregate: '0s', afterAbort: '0s', onAbort: 'quarantine' },
            concurrency: { perSourceHost: 1, perDestinationHost: 2, perAggregate: 4 },
          },
        },
      },
      { holdSeconds: 3600 },
    );
    await r.service.runCycle();
    const execution = (await r.store.executions.list({ aggregate: 'gold' })).items[0]!;
    await until('a migration running in the simulator', () =>
      r.sim.cloud.migrations.some((m) => m.status === 'running'),
    );
    await r.service.abortExecution(execution.id, 'operator:carol');
    await r.service.executor.idle();
    expect((await r.store.getExecution(execution.id))?.state).toBe('aborted');
    r.sim.cloud.timing.holdSeconds = 0;
    const moves = await r.store.listMoves(execution.id);
    const held = new Set(moves.map((m) => m.serverId));
    const quarantined = (await r.store.quarantine.list({ aggregate: 'gold' })).items;
    expect(new Set(quarantined.map((q) => q.serverId))).toEqual(held);
    const report = await r.service.runCycle();
    const gold = report.aggregates.find((a) => a.aggregate === 'gold')!;
    for (const id of held)
      expect(gold.held?.find((h) => h.serverId === id)?.why).toMatch(
        /^quarantined since .*: its move \S+ -> \S+ was in execution .*aborted by operator:carol.*\(cooldowns\.onAbort: quarantine\)$/,
      );
    await r.service.executor.idle();
    for (const e of (await r.store.executions.list({ aggregate: 'gold' })).items)
      if (e.id !== execution.id)
        for (const m of await r.store.listMoves(e.id)) expect(held.has(m.serverId)).toBe(false);
    // Released by an operator: the next cycle may plan them again.
    for (const id of held)
      expect(await r.store.quarantine.release(id, 'operator:carol', new Date().toISOString())).not.toBeNull();
    const after = (await r.service.runCycle()).aggregates.find((a) => a.aggregate === 'gold')!;
    for (const id of held) expect(after.held?.some((h) => h.serverId === id) ?? false).toBe(false);
    await r.service.executor.idle();
  }, 60_000);

  it('serve starts the API next to the loop: host figures, history, pauses through the control port, metrics fed by cycles', async () => {
    const r = await rig({
      defaults: { mode: 'observe' },
      aggregates: { gold: { mode: 'assisted', windows: always }, silver: { mode: 'observe' } },
    });
    const api = await startServiceApi({
      service: r.service,
      store: r.store,
      config: r.config,
      reader: r.session,
      noAuth: true,
      host: '127.0.0.1',
      port: 0,
      logger: createApiLogger({ level: 'silent' }),
    });
    closers.push(() => api.close());
    const get = async (path: string) => {
      const res = await fetch(`${api.url}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect((await get('/v1/aggregates/gold/hosts')).status).toBe(503);
    await r.service.runCycle();
    await r.service.runCycle();
    const hosts = await get('/v1/aggregates/gold/hosts');
    expect(hosts.status).toBe(200);
    const items = hosts.body.items as {
      name: string;
      utilization: Record<string, number>;
      servers: number;
    }[];
    expect(items.map((h) => h.name)).toEqual(['g1', 'g2', 'g3']);
    expect(items[0]).toMatchObject({ servers: 8, enabled: true, vcpuAllocationRatio: 4 });
    expect(items[0]!.utilization.cpu).toBeGreaterThan(0.8);
    const history = await get('/v1/aggregates/gold/history');
    expect((history.body.items as unknown[]).length).toBe(2);
    const plan = (await r.store.plans.list({ aggregate: 'gold' })).items[0]!;
    const chart = await get(`/v1/plans/${plan.id}/hosts`);
    const rows = chart.body.hosts as { name: string; before: { cpu: number }; after: { cpu: number } }[];
    expect(rows.find((h) => h.name === 'g1')!.after.cpu).toBeLessThan(
      rows.find((h) => h.name === 'g1')!.before.cpu,
    );
    const paused = await fetch(`${api.url}/v1/aggregates/gold/pause`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'demo' }),
    });
    expect(paused.status).toBe(200);
    expect(r.service.isPaused('gold')).toBe(true);
    expect((await r.store.pauses.list()).map((p) => p.aggregate)).toEqual(['gold']);
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(/aicerine_cycles_total\{outcome="ok"\} 2/);
    expect(metrics).toMatch(/aicerine_imbalance\{aggregate="gold",dimension="cpu"\} 0\.\d+/);
    expect(metrics).toMatch(/aicerine_plan_moves\{aggregate="gold"\} [1-9]/);
    expect(metrics).toMatch(/aicerine_data_health_verdicts_total\{aggregate="gold",verdict="ok"\} 2/);
  }, 60_000);
});
