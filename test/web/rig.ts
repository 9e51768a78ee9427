// The whole product for the dashboard tests: the simulator (Keystone, Nova, Placement,
// Prometheus over HTTP, its clock sped up), the service running cycles on that clock with an
// SQLite store and its task worker, its API with the built dashboard, and headless Chromium
// (Debian's) to look at it.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createApiLogger } from '../../src/api/logger.js';
import { defaultWebRoot } from '../../src/api/routes/web.js';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import type { LockService } from '../../src/coordination/locks.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { type ServiceApi, startServiceApi } from '../../src/service/api.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { serviceHost as host, serverFactory } from '../service/world.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Why the browser tests cannot run here, or null when they can. */
export const NO_BROWSER = existsSync(CHROMIUM)
  ? null
  : `${CHROMIUM} is missing: the dashboard tests need Debian's chromium (apt-get install chromium; .ci/apt-packages.txt lists it)`;

/** Virtual seconds per real second: a 1-minute cycle every 1.2 s, a migration in well under one. */
export const SPEED = 50;
export const PASSWORD = 'secret';
/** Real time between the end of one cycle (and of what it started) and the next. */
const CYCLE_MS = 700;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const always = ['Mon-Sun 00:00 - 24:00 UTC'];

/** gold (assisted): g1 runs 8 servers at 3.5 busy cores of its 32 (88%, hot); g2 and g3 idle. silver: observed. */
function world(): Snapshot {
  const server = serverFactory();
  return {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'dashboard test',
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
      server('s1', 2),
      server('s2', 2),
    ],
    serverGroups: [],
  };
}

export interface Rig {
  sim: SimServerHandle;
  store: Store;
  service: AicerineService;
  api: ServiceApi;
  url: string;
  close(): Promise<void>;
}

/**
 * The product with the API in Keystone mode (auth: true) or the demo's loopback no-auth mode;
 * `locks` replaces the in-process locks (a backend a test can make unreachable), `taskPollMs`
 * the task worker's poll interval.
 */
export async function startRig(opts: {
  auth: boolean;
  locks?: LockService;
  taskPollMs?: number;
  /** Run as replica `replicaId` (aggregate ownership on the rig's locks), as `serve` with coordination does. */
  replicaId?: string;
}): Promise<Rig> {
  const cloud = new SimCloud(world(), { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() });
  const sim = await startSimServer({ cloud, password: PASSWORD });
  const dir = await mkdtemp(join(tmpdir(), 'aic-web-'));
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      cycleInterval: '1m',
      defaults: { mode: 'observe', windows: always },
      aggregates: {
        gold: { mode: 'assisted', windows: always, approvals: { expireAfter: '7d' } },
        silver: { mode: 'observe' },
      },
    },
    { baseDir: dir },
  );
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, PASSWORD, 'dashboard test (simulator)'),
    prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
  });
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  const actuator = await Actuator.open({ config: session.config, credential: { label: 'actuator (test)' } });
  const service = new AicerineService({
    config,
    store,
    reader: session,
    actuator,
    tasksSession: session,
    ...(opts.locks ? { locks: opts.locks } : {}),
    ...(opts.replicaId !== undefined
      ? {
          coordination: {
            locks: opts.locks ?? new LocalLockService(),
            replicaId: opts.replicaId,
            leaseTtlMs: 5000,
            rebalanceIntervalMs: 500,
          },
        }
      : {}),
    clock: {
      now: () => cloud.clock.nowMs(),
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / SPEED))),
    },
    logger: silentLogger,
    recorder: { historyDays: 1 },
    ...(opts.taskPollMs !== undefined
      ? { tasks: { worker: { pollMs: opts.taskPollMs, heartbeatMs: opts.taskPollMs } } }
      : {}),
  });
  const api = await startServiceApi({
    service,
    store,
    config,
    reader: session,
    noAuth: !opts.auth,
    host: '127.0.0.1',
    port: 0,
    logger: createApiLogger({ level: 'silent' }),
    now: () => new Date(cloud.clock.nowMs()),
  });
  // The task worker runs as in `serve` (service.start starts it; the pacer below replaces the
  // service's own timer, so it is started here).
  await service.tasks.worker.start();
  await service.ownership?.start();
  // Cycles paced in real time, as the demo paces them: the configured interval is wall-clock time
  // (10 s at least), too slow for a test, while everything inside a cycle runs on the sped-up clock.
  let running = true;
  const pacer = (async () => {
    while (running) {
      await service.runCycle();
      await Promise.race([service.executor.idle(), sleep(CYCLE_MS * 5)]);
      await sleep(CYCLE_MS);
    }
  })();
  return {
    sim,
    store,
    service,
    api,
    url: api.url,
    async close() {
      running = false;
      await pacer;
      await service.stop();
      await api.close();
      await store.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A Keystone user `noc` with the cloud-wide `aicerine-reader` role on project admin: a project's
 * member or reader (the simulator's `demo`) reads nothing of the cloud (docs/api.md).
 */
export function addCloudReader(sim: SimServerHandle): { username: string; project: string } {
  const keystone = sim.keystone;
  keystone.users.set('uid-noc', {
    id: 'uid-noc',
    name: 'noc',
    password: PASSWORD,
    roles: new Map([[keystone.projectByName('admin')!.id, ['aicerine-reader']]]),
  });
  return { username: 'noc', project: 'admin' };
}

/** The dashboard as `npm run build` makes it; built here when a single test file runs without it. */
export function ensureWebBuild(): void {
  const root = defaultWebRoot();
  if (root !== null && existsSync(join(root, 'index.html'))) return;
  execFileSync(
    process.execPath,
    ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts'],
    {
      stdio: 'inherit',
    },
  );
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** The page's console errors and failed requests, so a failing test says what the browser saw. */
export function watchPage(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') seen.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  return seen;
}

export interface BrowserSession {
  /** A new page, watched for errors, with the session's default timeout; closed after the test. */
  page(): Promise<Page>;
  /** Closed after the test, after its pages (a rig, a demo). */
  closeAfter(thing: { close(): Promise<void> }): void;
}

/**
 * One Chromium for a describe block, launched before its tests and closed after them. What a test
 * opens through it is closed after that test, and a failing test prints what the browser saw.
 */
export function browserSession(waitMs: number): BrowserSession {
  let browser: Browser | undefined;
  let pages: { page: Page; seen: string[] }[] = [];
  let closers: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    ensureWebBuild();
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async (ctx) => {
    const seen = pages.flatMap((p) => p.seen);
    if (ctx.task.result?.state === 'fail' && seen.length > 0)
      console.error(`the browser saw:\n${seen.join('\n')}`);
    for (const { page } of pages) await page.close();
    for (const thing of closers.reverse()) await thing.close();
    pages = [];
    closers = [];
  });
  return {
    async page() {
      if (browser === undefined) throw new Error('browserSession: no browser (beforeAll did not run)');
      const page = await browser.newPage();
      page.setDefaultTimeout(waitMs);
      pages.push({ page, seen: watchPage(page) });
      return page;
    },
    closeAfter(thing) {
      closers.push(thing);
    },
  };
}

/** Polls `f` until it gives a value (then returns it); fails naming `what` after `ms`. */
export async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
