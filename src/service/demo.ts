// The running demo: the simulator and the service in one process. The simulated cloud (its clock
// sped up) is read, planned and acted on by the real service (embedded SQLite in a state folder),
// with the API and dashboard on loopback without authentication. Three aggregates, one per mode:
// agg-1 active in an always-open window, agg-2 assisted (a hot host; its plan waits for an
// operator's approval), agg-3 observe. Cycles are paced in real time by the caller.

import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createApiLogger } from '../api/logger.js';
import { Actuator } from '../cloud/actuator.js';
import { createLogger } from '../cloud/log.js';
import { DEFAULT_PROFILE_SETTINGS } from '../cloud/profiles/settings.js';
import { openSession } from '../cloud/session.js';
import { parseServiceConfig } from '../config/load.js';
import { SimClock } from '../sim/clock.js';
import { SIM_DEFAULT_PASSWORD, simAdminConfig } from '../sim/connect-info.js';
import { serviceDemoSnapshot } from '../sim/demo-cloud.js';
import { PROMETHEUS_PREFIX } from '../sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../sim/http/server.js';
import { dailyLoadModel, staticLoadModel } from '../sim/load.js';
import { SimCloud } from '../sim/model.js';
import { openStore, type Store } from '../store/store.js';
import { own } from '../util/maps.js';
import { type ServiceApi, startServiceApi } from './api.js';
import { auditCalls } from './call-audit.js';
import { AicerineService, type ServiceCycleReport } from './service.js';

export const DEMO_API_PORT = 8780;
export const DEMO_MODES = { 'agg-1': 'active', 'agg-2': 'assisted', 'agg-3': 'observe' } as const;

export interface DemoOptions {
  /** API port; undefined: 8780, or any free port when 8780 is taken. */
  port?: number;
  /** Keep the store here (created if missing); undefined: a temporary folder removed at the end. */
  stateDir?: string;
  /** Virtual seconds per real second. */
  speed: number;
  /** Where the no-auth warning and problems go (not stdout, which carries the per-cycle lines). */
  warn: (line: string) => void;
}

export interface DemoAggregateLine {
  aggregate: string;
  mode: string;
  planned: number;
  executed: number;
  before: number | null;
  after: number | null;
  summary: string;
}

export interface Demo {
  /** The dashboard (the API's root). */
  url: string;
  hotHost: string;
  sim: SimServerHandle;
  store: Store;
  service: AicerineService;
  api: ServiceApi;
  stateDir: string;
  /** One cycle now; waits (up to `waitMs` real) for the executions it started, then reports. */
  cycle(waitMs: number): Promise<DemoAggregateLine[]>;
  stop(): Promise<void>;
}

const ALWAYS = ['Mon-Sun 00:00 - 24:00 UTC'];

async function listenDemoApi(
  start: (port: number) => Promise<ServiceApi>,
  port: number | undefined,
  warn: (line: string) => void,
): Promise<ServiceApi> {
  try {
    return await start(port ?? DEMO_API_PORT);
  } catch (e) {
    const inUse = (e as { code?: string }).code === 'EADDRINUSE';
    if (!inUse) throw e;
    if (port !== undefined)
      throw new Error(
        `--port ${port}: already in use on 127.0.0.1; choose another, or --port 0 for any free port`,
      );
    warn(`demo: port ${DEMO_API_PORT} is in use; the API takes a free port instead`);
    return start(0);
  }
}

export async function startDemo(o: DemoOptions): Promise<Demo> {
  const temporary = o.stateDir === undefined;
  const stateDir = temporary ? await mkdtemp(join(tmpdir(), 'aicerine-demo-')) : resolve(o.stateDir!);
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const { snapshot, hotHost } = serviceDemoSnapshot();
  // The snapshot's loads are those of the start; a working-week shape moves them with the
  // simulated clock from there, and gives the load profiles a history to learn.
  const clock = new SimClock({ speed: o.speed });
  const cloud = new SimCloud(snapshot, {
    clock,
    load: dailyLoadModel(staticLoadModel(), clock.nowSeconds()),
  });
  const sim = await startSimServer({ cloud, password: SIM_DEFAULT_PASSWORD, port: 0 });
  const cleanup: (() => Promise<void>)[] = [() => sim.close()];
  try {
    const { config } = await parseServiceConfig(
      {
        openstack: { reader: { cloud: 'aicerine-demo' }, actuator: { cloud: 'aicerine-demo' } },
        store: { url: 'sqlite:aicerine.sqlite' },
        api: { host: '127.0.0.1', port: o.port ?? DEMO_API_PORT },
        cycleInterval: '5m',
        // Livelier than production defaults, so a few minutes show plans, executions and their effect.
        defaults: {
          mode: 'observe',
          budgets: { perCycle: 50, perWindow: 1000, perDay: 2000 },
          cooldowns: { aggregate: '2m' },
          concurrency: { perSourceHost: 3, perDestinationHost: 2, perAggregate: 8 },
        },
        aggregates: {
          'agg-1': { mode: 'active', windows: ALWAYS },
          'agg-2': { mode: 'assisted', windows: ALWAYS },
          'agg-3': { mode: 'observe' },
        },
      },
      { baseDir: stateDir },
    );
    const logger = createLogger({ level: 'error' });
    const session = await openSession({
      config: simAdminConfig(sim.authUrl, SIM_DEFAULT_PASSWORD, 'aicerine demo'),
      prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
      logger,
    });
    const store = await openStore({ kind: 'sqlite', path: join(stateDir, 'aicerine.sqlite') });
    cleanup.unshift(() => store.close());
    const actuator = await Actuator.open({
      config: session.config,
      logger,
      credential: { label: 'actuator (demo)', observe: auditCalls(store.audit, logger) },
    });
    const speed = o.speed;
    const service = new AicerineService({
      config,
      store,
      reader: session,
      actuator,
      // Operator tasks (the dashboard's Tasks page) act with the demo's admin session.
      tasksSession: session,
      clock: {
        now: () => cloud.clock.nowMs(),
        sleep: (ms) => new Promise((r) => setTimeout(r, speed > 0 ? Math.max(0, ms / speed) : ms)),
      },
      logger,
      recorder: { historyDays: 1 },
      // A week of the simulated cloud's history, read again each simulated day.
      profiles: { ...DEFAULT_PROFILE_SETTINGS, historyDays: 7, minSamples: 1 },
    });
    cleanup.unshift(() => service.stop());
    await service.executor.recover();
    // The demo paces cycles itself instead of service.start(); the task worker starts as in serve.
    await service.tasks.worker.start();
    const api = await listenDemoApi(
      (port) =>
        startServiceApi({
          service,
          store,
          config,
          reader: session,
          noAuth: true,
          host: '127.0.0.1',
          port,
          logger: createApiLogger({ level: 'silent' }),
          now: () => new Date(cloud.clock.nowMs()),
        }),
      o.port,
      o.warn,
    );
    cleanup.unshift(() => api.close());
    o.warn(
      `demo: NO AUTHENTICATION on ${api.url} (loopback only): anyone on this machine may approve plans, abort executions and pause the service`,
    );
    if (temporary) cleanup.push(() => rm(stateDir, { recursive: true, force: true }));

    /** Completed moves per aggregate at the previous line. */
    const completedBefore = new Map<string, number>();
    const completedNow = async (aggregate: string): Promise<number> => {
      let n = 0;
      let cursor: string | null = null;
      do {
        const page = await store.executions.list({ aggregate }, { limit: 1000, cursor });
        for (const e of page.items)
          n += (await store.listMoves(e.id)).filter((m) => m.state === 'completed').length;
        cursor = page.nextCursor;
      } while (cursor !== null);
      return n;
    };
    const cycle = async (waitMs: number): Promise<DemoAggregateLine[]> => {
      const report: ServiceCycleReport = await service.runCycle();
      const deadline = Date.now() + waitMs;
      await Promise.race([service.executor.idle(), new Promise((r) => setTimeout(r, waitMs))]);
      const lines: DemoAggregateLine[] = [];
      for (const a of report.aggregates) {
        const total = await completedNow(a.aggregate);
        const executed = total - (completedBefore.get(a.aggregate) ?? 0);
        completedBefore.set(a.aggregate, total);
        lines.push({
          aggregate: a.aggregate,
          mode: own(config.aggregates, a.aggregate)?.mode ?? config.defaults.mode,
          planned: a.planMoves ?? 0,
          executed,
          before: a.stats?.imbalance ?? null,
          after: a.planId !== null ? await plannedAfter(store, a.planId, a.aggregate) : null,
          summary: a.summary,
        });
      }
      // Keep the pace even when the executions ended early.
      const left = deadline - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
      return lines;
    };

    let stopped = false;
    return {
      url: api.url,
      hotHost,
      sim,
      store,
      service,
      api,
      stateDir,
      cycle,
      async stop() {
        if (stopped) return;
        stopped = true;
        for (const c of cleanup) await c();
      },
    };
  } catch (e) {
    for (const c of cleanup) await c().catch(() => undefined);
    throw e;
  }
}

async function plannedAfter(store: Store, planId: string, aggregate: string): Promise<number | null> {
  const plan = await store.plans.get(planId);
  return plan?.plan.aggregates.find((x) => x.name === aggregate)?.after.imbalance ?? null;
}

/** "agg-1  active    planned  5  executed  3  imbalance 0.1007 -> 0.0942  (what the loop did)" */
export function formatDemoLine(cycle: number, l: DemoAggregateLine): string {
  const imb =
    l.before === null
      ? 'imbalance -'
      : `imbalance ${l.before.toFixed(4)} -> ${(l.after ?? l.before).toFixed(4)}`;
  return `cycle ${String(cycle).padStart(3)}  ${l.aggregate.padEnd(6)} ${l.mode.padEnd(8)}  planned ${String(l.planned).padStart(3)}  executed ${String(l.executed).padStart(3)}  ${imb}  (${l.summary})`;
}
