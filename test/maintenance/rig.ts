// The maintenance rig: the whole service (task worker, executor, maintenance service) on the
// simulator over HTTP, a SQLite store, a private sshd standing in for the canaries and a webhook
// receiver. `restart()` replaces the service on the same store and cloud, as a new process would.

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { Campaign } from '../../src/maintenance/types.js';
import type { Host, Server, ServerGroup, Snapshot } from '../../src/model/snapshot.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import type { TaskWorkerSettings } from '../../src/tasks/worker.js';
import { until } from '../tasks/rig.js';
import { type PrivateSshd, startSshd } from '../validation/sshd.js';

export const SPEED = 100;
export const PROJECT = 'e0000000000000000000000000000001';

export function host(name: string, memoryMB = 65536): Host {
  return {
    name,
    availabilityZone: 'nova',
    aggregates: ['rack'],
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: 32, reserved: 0, allocationRatio: 4 },
      MEMORY_MB: { total: memoryMB, reserved: 0, allocationRatio: 1 },
      DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
    },
    usage: {},
  };
}

export const sid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
export function server(n: number, on: string, ramMB = 8192): Server {
  return {
    id: sid(n),
    name: `vm-${n}`,
    projectId: PROJECT,
    host: on,
    status: 'ACTIVE',
    taskState: null,
    flavor: { name: `f${ramMB}`, vcpus: 2, ramMB, diskGB: 20 },
    sharedStorage: true,
  };
}

export function world(hosts: Host[], servers: Server[], groups: ServerGroup[] = []): Snapshot {
  return {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'test',
    hosts,
    servers,
    serverGroups: groups,
  };
}

/** A hand-over POST as received: its JSON body, and its Idempotency-Key header as `key`. */
export interface HookEvent {
  host: string;
  campaign: string;
  event: string;
  id: string;
  key: string | undefined;
}

export interface Helpers {
  sshd: PrivateSshd;
  /** Where the webhook events land. */
  hookUrl: string;
  events: HookEvent[];
  close(): Promise<void>;
}

export interface Webhook {
  /** Where the hand-over events are to be POSTed. */
  url: string;
  events: HookEvent[];
  close(): Promise<void>;
}

/** A receiver of the hand-over webhook: keeps every event, answers 204. */
export async function startWebhook(): Promise<Webhook> {
  const events: Webhook['events'] = [];
  const hook: HttpServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      events.push({ ...JSON.parse(body), key: Array.isArray(key) ? key.join(',') : key });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((res) => hook.listen(0, '127.0.0.1', res));
  const addr = hook.address();
  return {
    url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/ready`,
    events,
    close: () => new Promise<void>((res) => hook.close(() => res())),
  };
}

/** A private sshd for the canaries and a webhook receiver. */
export async function startHelpers(): Promise<Helpers> {
  const sshd = await startSshd();
  const hook = await startWebhook();
  return {
    sshd,
    hookUrl: hook.url,
    events: hook.events,
    async close() {
      await sshd.stop();
      await hook.close();
    },
  };
}

export interface Rig {
  sim: SimServerHandle;
  session: CloudSession;
  store: Store;
  service: AicerineService;
  dir: string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** The service on a simulated `snap`; `sshd` configures validate-compute with it. */
export async function rig(
  snap: Snapshot,
  maintenance: Record<string, unknown>,
  sshd: PrivateSshd | null = null,
  worker: Partial<TaskWorkerSettings> = {},
  /** Merged into the service's `defaults` (mode, windows, cooldowns: the balancer after a campaign). */
  defaults: Record<string, unknown> = {},
): Promise<Rig> {
  const cloud = new SimCloud(snap, { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() });
  const sim = await startSimServer({ cloud, password: 'secret' });
  const dir = await mkdtemp(join(tmpdir(), 'aic-maint-'));
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      defaults: { mode: 'observe', concurrency: { perSourceHost: 2, perAggregate: 6 }, ...defaults },
      maintenance: { pollInterval: '5s', ...maintenance },
      ...(sshd !== null
        ? {
            tasks: {
              validation: {
                image: 'sim-image',
                flavor: 'canary-size',
                network: 'none',
                ssh: {
                  user: sshd.user,
                  port: sshd.port,
                  privateKeyFile: sshd.privateKeyFile,
                  address: '127.0.0.1',
                },
                check: 'echo canary-ok',
                bootTimeout: '60s',
                sshTimeout: '5m',
                checkTimeout: '10m',
                projectName: 'maint-validation',
                aggregateName: 'maint-validation',
                traitName: 'CUSTOM_MAINT_VALIDATION',
              },
            },
          }
        : {}),
    },
    { baseDir: dir },
  );
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'maintenance test (simulator)'),
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
    credential: { kind: 'tasks', label: 'tasks (test)', restricted: false },
  });
  if (sshd !== null)
    await session.nova.client.request({
      method: 'POST',
      path: '/flavors',
      headers: await session.nova.headers(),
      body: { flavor: { name: 'canary-size', vcpus: 1, ram: 512, disk: 1 } },
    });
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  const actuator = await Actuator.open({ config: session.config, credential: { label: 'actuator (test)' } });
  const make = () =>
    new AicerineService({
      config,
      store,
      reader: session,
      actuator,
      tasksSession: session,
      clock: {
        now: () => cloud.clock.nowMs(),
        sleep: (ms) => new Promise((res) => setTimeout(res, Math.max(0, ms / SPEED))),
      },
      logger: silentLogger,
      recorder: { historyDays: 1 },
      tasks: { worker: { pollMs: 30, heartbeatMs: 50, ...worker } },
    });
  const rigged: Rig = {
    sim,
    session,
    store,
    service: make(),
    dir,
    async restart() {
      await rigged.service.tasks.worker.stop();
      await rigged.service.stop();
      rigged.service = make();
      await rigged.service.tasks.worker.start();
    },
    async close() {
      await rigged.service.tasks.worker.stop();
      await rigged.service.stop();
      await store.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return rigged;
}

export async function campaign(r: Rig, id: string): Promise<Campaign> {
  const c = await r.store.maintenance.get(id);
  if (c === null) throw new Error(`no campaign ${id}`);
  return c;
}

/** Polls the campaign until it ends, acting as the operator on every host handed over. */
export async function operate(
  r: Rig,
  id: string,
  onReady: (host: string, c: Campaign) => Promise<void> | void,
  watch: (c: Campaign) => Promise<void> | void = () => {},
  ms = 120_000,
): Promise<Campaign> {
  const handled = new Set<string>();
  let last: Campaign | null = null;
  await until(async () => {
    const c = await campaign(r, id);
    last = c;
    await watch(c);
    for (const h of c.hosts)
      if (h.state === 'ready' && h.handedOverAt !== null && !handled.has(h.host)) {
        handled.add(h.host);
        await onReady(h.host, c);
      }
    return c.state === 'DONE' || c.state === 'ABORTED';
  }, ms);
  return last!;
}
