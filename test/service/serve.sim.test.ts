// The whole service against the simulator over HTTP: configuration, SQLite store, incremental
// recorder, control loop, executor, prevention. Time is the simulator's clock, sped up.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { auditCalls } from '../../src/service/call-audit.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { serviceHost as host, serverFactory } from './world.js';

const SPEED = 50;

function world(): Snapshot {
  const server = serverFactory();
  const hosts = [
    host('g1', 'gold'),
    host('g2', 'gold'),
    host('g3', 'gold'),
    host('s1', 'silver'),
    host('s2', 'silver'),
  ];
  const servers = [
    // g1 and s1 run 8 servers at 3.5 busy cores each: 28 of 32 cores, above prevention's 85% hot line.
    ...Array.from({ length: 8 }, () => server('g1', 3.5)),
    server('g2', 1),
    ...Array.from({ length: 8 }, () => server('s1', 3.5)),
  ];
  return {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'test',
    hosts,
    servers,
    serverGroups: [],
  };
}

interface Rig {
  sim: SimServerHandle;
  store: Store;
  service: AicerineService;
  dir: string;
}

async function rig(doc: Record<string, unknown>): Promise<Rig> {
  const cloud = new SimCloud(world(), { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() });
  const sim = await startSimServer({ cloud, password: 'secret' });
  const dir = await mkdtemp(join(tmpdir(), 'aic-serve-'));
  const { config } = await parseServiceConfig(
    {
      credentials: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      cycleInterval: '1m',
      ...doc,
    },
    { baseDir: dir },
  );
  const common = {
    config: simAdminConfig(sim.authUrl, 'secret', 'service test (simulator)'),
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
  };
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  const session = await openSession({
    ...common,
    prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
    credential: { kind: 'reader', label: 'reader (test)' },
  });
  const actuator = await Actuator.open({
    ...common,
    credential: { label: 'actuator (test)', observe: auditCalls(store.audit, silentLogger) },
  });
  const service = new AicerineService({
    config,
    store,
    reader: session,
    actuator,
    clock: {
      now: () => cloud.clock.nowMs(),
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / SPEED))),
    },
    logger: silentLogger,
    recorder: { historyDays: 1 },
  });
  return { sim, store, service, dir };
}

let r: Rig | undefined;
afterEach(async () => {
  if (!r) return;
  await r.service.stop();
  await r.store.close();
  await r.sim.close();
  await rm(r.dir, { recursive: true, force: true });
  r = undefined;
});

const always = ['Mon-Sun 00:00 - 24:00 UTC'];

describe('aicerine serve against the simulator', () => {
  it('observe everywhere: plans are stored with reasons, nothing moves', async () => {
    r = await rig({ defaults: { mode: 'observe', windows: always } });
    const report = await r.service.runCycle();
    expect(report.full).toBe(true);
    expect(report.aggregates.map((a) => [a.aggregate, a.summary])).toEqual([
      ['gold', 'observe mode: plan stored, nothing executed'],
      ['silver', 'observe mode: plan stored, nothing executed'],
    ]);
    expect(r.sim.cloud.migrations.length).toBe(0);
    const plans = await r.store.plans.list({ aggregate: 'gold' });
    expect(plans.items[0]!.moveCount).toBeGreaterThan(0);
    const verdict = await r.store.dataHealth.latest('gold');
    expect(verdict?.verdict).toBe('ok');
  });

  it('active in an open window: migrates through Nova, journals every move, holds moved servers', async () => {
    r = await rig({
      defaults: { mode: 'observe' },
      aggregates: { gold: { mode: 'active', windows: always, budgets: { perCycle: 3 } } },
    });
    const first = await r.service.runCycle();
    const gold = first.aggregates.find((a) => a.aggregate === 'gold')!;
    expect(gold.started).toBe(3);
    expect(first.aggregates.find((a) => a.aggregate === 'silver')!.started).toBe(0);
    await r.service.executor.idle();
    const executions = await r.store.executions.list({ aggregate: 'gold' });
    expect(executions.items).toHaveLength(1);
    const moves = await r.store.listMoves(executions.items[0]!.id);
    expect(moves.map((m) => m.state)).toEqual(['completed', 'completed', 'completed']);
    for (const m of moves) expect(r.sim.cloud.serversByUuid.get(m.serverId)?.host).toBe(m.to);
    // Every moved server is now in its cooldown: the next plan never picks it.
    const second = await r.service.runCycle();
    await r.service.executor.idle();
    const again = await r.store.executions.list({ aggregate: 'gold' });
    const movedTwice = new Set<string>();
    const seen = new Set<string>();
    for (const e of again.items)
      for (const m of await r.store.listMoves(e.id)) {
        if (seen.has(m.serverId)) movedTwice.add(m.serverId);
        seen.add(m.serverId);
      }
    expect(movedTwice.size).toBe(0);
    expect(second.aggregates.find((a) => a.aggregate === 'gold')!.verdict?.verdict).toBe('ok');
    const audit = await r.store.audit.list({ action: 'execution.start' });
    expect(audit.items.length).toBeGreaterThanOrEqual(1);
    const cooldowns = await r.store.cooldowns.listServers({ aggregate: 'gold' });
    expect(cooldowns.items.length).toBe(seen.size);
  });

  it('driven by runCycle() alone (serve --once, replays), an execution ending schedules no cycle', async () => {
    r = await rig({ defaults: { mode: 'active', windows: always, budgets: { perCycle: 2 } } });
    const report = await r.service.runCycle();
    expect(report.aggregates.reduce((n, a) => n + a.started, 0)).toBeGreaterThan(0);
    await r.service.executor.idle();
    // wake() would have run a cycle 1 s after each execution's end, racing the caller's next one.
    await new Promise((res) => setTimeout(res, 1500));
    expect(r.service.cycles).toHaveLength(1);
  });

  it('a runtime pause stops new starts and says so', async () => {
    r = await rig({ defaults: { mode: 'active', windows: always } });
    await r.service.pause('gold');
    const report = await r.service.runCycle();
    expect(report.aggregates.find((a) => a.aggregate === 'gold')!.summary).toBe('paused (this aggregate)');
    expect(report.aggregates.find((a) => a.aggregate === 'silver')!.started).toBeGreaterThan(0);
    await r.service.resume('gold');
  });

  it("prevention lowers a hot host's VCPU ratio in Placement, records and audits it; observe writes nothing", async () => {
    r = await rig({
      defaults: { mode: 'observe', vcpuRatio: { target: 4, floor: 2 } },
      aggregates: { gold: { mode: 'assisted', windows: always } },
    });
    const report = await r.service.runCycle();
    expect(report.prevention).toEqual([
      { aggregate: 'gold', changes: 1, pinned: 0, dryRun: false },
      { aggregate: 'silver', changes: 0, pinned: 0, dryRun: true },
    ]);
    const history = await r.store.ratioChanges.list({ host: 'g1' });
    expect(history.items).toEqual([
      expect.objectContaining({ oldRatio: 4, newRatio: 3.5, by: 'prevention' }),
    ]);
    expect((await r.store.ratioChanges.list({ host: 's1' })).items).toEqual([]);
    const audit = await r.store.audit.list({ action: 'ratio.written' });
    expect(audit.items.map((a) => a.target)).toEqual(['host:g1']);
  });
});
