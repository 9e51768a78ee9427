// evacuate-compute through the whole service against the simulator: disable, live through the
// executor, cold with confirmResize for what may stop, the rest listed; asked again, nothing to do.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { Host, Server, ServerGroup, Snapshot } from '../../src/model/snapshot.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { RESUME_REASON } from '../../src/tasks/worker.js';
import { until } from './rig.js';

const SPEED = 100;

function host(name: string): Host {
  return {
    name,
    availabilityZone: 'nova',
    aggregates: ['agg'],
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: 32, reserved: 0, allocationRatio: 4 },
      MEMORY_MB: { total: 65536, reserved: 0, allocationRatio: 1 },
      DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
    },
    usage: {},
  };
}

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
function server(n: number, extra: Partial<Server> = {}): Server {
  return {
    id: id(n),
    name: `vm-${n}`,
    projectId: 'e0000000000000000000000000000001',
    host: 'c5',
    status: 'ACTIVE',
    taskState: null,
    flavor: { name: 'f4', vcpus: 2, ramMB: 4096, diskGB: 20 },
    sharedStorage: true,
    ...extra,
  };
}
const pinned = {
  name: 'pinned',
  vcpus: 2,
  ramMB: 4096,
  diskGB: 20,
  extraSpecs: { 'hw:cpu_policy': 'dedicated' },
};

function world(): Snapshot {
  return {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'test',
    hosts: ['c1', 'c2', 'c3', 'c5'].map(host),
    servers: [
      server(1),
      server(2),
      server(3, { status: 'SHUTOFF' }),
      server(4, { flavor: pinned, metadata: { 'aicerine:may-stop': 'true' } }),
      server(5, { flavor: pinned }),
      server(6, { host: 'c1' }),
    ],
    serverGroups: [],
  };
}

interface Rig {
  sim: SimServerHandle;
  store: Store;
  service: AicerineService;
  dir: string;
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

async function rig(
  configDoc: Record<string, unknown> = {},
  snap: Snapshot = world(),
  onReader?: (session: CloudSession) => void,
): Promise<Rig> {
  const cloud = new SimCloud(snap, { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() });
  const sim = await startSimServer({ cloud, password: 'secret' });
  const dir = await mkdtemp(join(tmpdir(), 'aic-evac-'));
  return { sim, dir, ...(await serviceOn(sim, dir, configDoc, onReader)) };
}

/** The service as one process runs it, on the simulator and the store in `dir`. */
async function serviceOn(
  sim: SimServerHandle,
  dir: string,
  configDoc: Record<string, unknown> = {},
  /** Sees the service's reading session before the service is built on it. */
  onReader?: (session: CloudSession) => void,
): Promise<Pick<Rig, 'store' | 'service'>> {
  const cloud = sim.cloud;
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      defaults: { mode: 'observe', concurrency: { perSourceHost: 2 } },
      ...configDoc,
    },
    { baseDir: dir },
  );
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'evacuate test (simulator)'),
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
  });
  onReader?.(session);
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  const service = new AicerineService({
    config,
    store,
    reader: session,
    actuator: await Actuator.open({ config: session.config, credential: { label: 'actuator (test)' } }),
    tasksSession: session,
    clock: {
      now: () => cloud.clock.nowMs(),
      sleep: (ms) => new Promise((res) => setTimeout(res, Math.max(0, ms / SPEED))),
    },
    logger: silentLogger,
    recorder: { historyDays: 1 },
    tasks: { worker: { pollMs: 50, heartbeatMs: 50 } },
  });
  return { store, service };
}

describe('evacuate-compute against the simulator', () => {
  it('refuses unknown and down hosts before creating anything', async () => {
    r = await rig();
    const tasks = r.service.tasks.service;
    expect(tasks.registry.requestable().map((h) => h.kind)).toEqual([
      'evacuate-compute',
      'purge-project',
      'validate-compute',
    ]);
    expect(tasks.registry.kinds()).toContain('validate-compute-cleanup');
    await expect(tasks.create('evacuate-compute', { host: 'nope' }, 'alice')).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      tasks.create('evacuate-compute', { host: 'c5', target: 'c5' }, 'alice'),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(tasks.create('evacuate-compute', { host: 'c5', extra: 1 }, 'alice')).rejects.toMatchObject({
      status: 400,
      issues: [{ path: 'args.extra' }],
    });
    r.sim.cloud.requireHost('c3').status = 'disabled';
    await expect(
      tasks.create('evacuate-compute', { host: 'c5', target: 'c3' }, 'alice'),
    ).rejects.toMatchObject({
      status: 409,
    });
    expect((await r.store.tasks.list()).items).toEqual([]);
  });

  it('moves live what can, cold what may stop, lists the rest; asked again, does nothing', async () => {
    r = await rig();
    const tasks = r.service.tasks.service;
    const [t] = await tasks.create('evacuate-compute', { host: 'c5' }, 'alice');
    await expect(tasks.create('evacuate-compute', { host: 'c5' }, 'bob')).rejects.toMatchObject({
      status: 409,
    });
    await r.service.tasks.worker.start();
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const done = await r.store.tasks.get(t!.id);
    expect(done?.error).toBeNull();
    expect(done?.state).toBe('DONE');
    const result = done?.result as {
      liveMigrated: { server: string; to: string }[];
      coldMigrated: { server: string; to: string }[];
      cannotMove: { server: string; why: string }[];
      disabledReason: string;
    };
    expect(result.liveMigrated.map((m) => m.server).sort()).toEqual([id(1), id(2)]);
    expect(result.coldMigrated.map((m) => m.server).sort()).toEqual([id(3), id(4)]);
    expect(result.cannotMove).toEqual([
      { server: id(5), name: 'vm-5', why: expect.stringContaining('may not be stopped') },
    ]);
    const cloud = r.sim.cloud;
    expect(cloud.requireHost('c5').status).toBe('disabled');
    expect(cloud.requireHost('c5').disabledReason).toBe(
      `aicerine task ${t!.id}: evacuate-compute requested by alice`,
    );
    for (const n of [1, 2, 3, 4]) expect(cloud.requireServer(id(n)).host).not.toBe('c5');
    expect(cloud.requireServer(id(3)).status).toBe('SHUTOFF');
    expect(cloud.requireServer(id(4)).status).toBe('ACTIVE');
    expect(cloud.migrations.filter((m) => m.type === 'migration').map((m) => m.status)).toEqual([
      'confirmed',
      'confirmed',
    ]);
    // The live migrations went through the executor: journaled, started by the task.
    const executions = await r.store.executions.list();
    expect(executions.items.map((e) => e.startedBy)).toEqual([`task:${t!.id}`]);
    expect(await r.service.locks.list('host/')).toEqual([]);
    const audit = await r.store.audit.list({ actor: `task:${t!.id}` });
    expect(audit.items.map((a) => a.action)).toContain('task.cold-migrate');

    // Idempotent: asked again, it finds only what cannot move.
    const [again] = await tasks.create('evacuate-compute', { host: 'c5' }, 'alice');
    await until(async () => (await r!.store.tasks.get(again!.id))!.state === 'DONE', 30_000);
    const second = (await r.store.tasks.get(again!.id))?.result as typeof result;
    expect(second.liveMigrated).toEqual([]);
    expect(second.coldMigrated).toEqual([]);
    expect(second.cannotMove.map((c) => c.server)).toEqual([id(5)]);
  });

  it('resumes after a restart from its checkpoint: the live execution is not started again, nothing moves twice', async () => {
    r = await rig();
    // The live migrations run 2 virtual minutes (1.2 s here, under the executor's 300 s timeout):
    // long enough to stop in the middle.
    r.sim.cloud.timing.holdSeconds = 120;
    const [t] = await r.service.tasks.service.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    await until(async () => r!.sim.cloud.migrations.some((m) => m.status === 'running'), 30_000);
    // SIGTERM: the worker leaves the task WAITING with its checkpoint, the executor finishes its
    // execution (the balancer's stop rules), the store closes.
    await r.service.stop();
    const stopped = await r.store.tasks.get(t!.id);
    expect(stopped).toMatchObject({ state: 'WAITING', waitingReason: RESUME_REASON });
    const cp = stopped?.checkpoint as { phase: string; executions: string[] };
    expect(cp.phase).toBe('live');
    expect(cp.executions).toHaveLength(1);
    await r.store.close();

    // The next process on the same store resumes it.
    r.sim.cloud.timing.holdSeconds = 0;
    Object.assign(r, await serviceOn(r.sim, r.dir));
    await r.service.start();
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const done = await r.store.tasks.get(t!.id);
    expect(done?.error).toBeNull();
    expect(done).toMatchObject({ state: 'DONE', attempts: 2 });
    const result = done?.result as { liveMigrated: { server: string }[]; coldMigrated: { server: string }[] };
    expect(result.liveMigrated.map((m) => m.server).sort()).toEqual([id(1), id(2)]);
    expect(result.coldMigrated.map((m) => m.server).sort()).toEqual([id(3), id(4)]);
    const executions = await r.store.executions.list();
    expect(executions.items.map((e) => e.id)).toEqual(cp.executions);
    for (const n of [1, 2, 3, 4]) {
      expect(r.sim.cloud.requireServer(id(n)).host).not.toBe('c5');
      expect(r.sim.cloud.migrations.filter((m) => m.server.uuid === id(n))).toHaveLength(1);
    }
  });

  it('moves a server elsewhere when its destination was disabled while Nova scheduled its migration', async () => {
    r = await rig();
    const cloud = r.sim.cloud;
    // Nova's conductor checks the destination 30 virtual seconds after the call (0.3 s here):
    // time for the destination to be disabled in between, as a maintenance campaign taking its
    // next host out does while another host drains.
    cloud.timing.scheduleSeconds = 30;
    const [t] = await r.service.tasks.service.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    let taken: string | null = null;
    await until(() => {
      const m = cloud.migrations.find((x) => x.type === 'live-migration' && x.status === 'accepted');
      if (m?.requestedHost) {
        taken = m.requestedHost;
        cloud.requireHost(taken).status = 'disabled';
        cloud.timing.scheduleSeconds = 1;
      }
      return taken !== null;
    }, 30_000);
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const done = await r.store.tasks.get(t!.id);
    expect(done?.state).toBe('DONE');
    const result = done?.result as {
      liveMigrated: { server: string; to: string }[];
      cannotMove: { server: string }[];
    };
    // Refused by Nova for its destination, not for itself: moved in the next round, elsewhere.
    expect(cloud.migrations.some((m) => m.requestedHost === taken && m.status === 'error')).toBe(true);
    expect(result.liveMigrated.map((m) => m.server).sort()).toEqual([id(1), id(2)]);
    expect(result.liveMigrated.every((m) => m.to !== taken)).toBe(true);
    expect(result.cannotMove.map((c) => c.server)).toEqual([id(5)]);
    for (const n of [1, 2]) expect(cloud.requireServer(id(n)).host).not.toBe('c5');
  });

  it('gives a server one more round when the retry of its failed migration was refused by the pre-flight', async () => {
    r = await rig({
      defaults: {
        mode: 'observe',
        concurrency: { perSourceHost: 2 },
        retry: { attempts: 3, backoffBase: '10s', backoffMax: '1m' },
      },
    });
    const cloud = r.sim.cloud;
    // vm-1's first migration fails in Nova; before the executor's retry its destination fills
    // up (another tenant's boot, say), so the retry's pre-flight refuses it and nothing is sent.
    cloud.failServers.add(id(1));
    const [t] = await r.service.tasks.service.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    let full: string | null = null;
    await until(() => {
      const m = cloud.migrations.find((x) => x.server.uuid === id(1) && x.status === 'failed');
      if (m?.dest) {
        full = m.dest;
        cloud.failServers.delete(id(1));
        const rp = cloud.requireHost(full).rp;
        const mem = rp.inventories.get('MEMORY_MB')!;
        rp.inventories.set('MEMORY_MB', { ...mem, total: 1024 });
        rp.generation++;
      }
      return full !== null;
    }, 30_000);
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const done = await r.store.tasks.get(t!.id);
    expect(done?.state).toBe('DONE');
    const result = done?.result as {
      liveMigrated: { server: string; to: string }[];
      cannotMove: { server: string }[];
    };
    // Moved in a later round, elsewhere; the refused retry never reached Nova.
    const mine = cloud.migrations.filter((m) => m.server.uuid === id(1) && m.type === 'live-migration');
    expect(mine.map((m) => [m.status, m.dest === full])).toEqual([
      ['failed', true],
      ['completed', false],
    ]);
    expect(result.liveMigrated.map((m) => m.server).sort()).toEqual([id(1), id(2)]);
    expect(result.cannotMove.map((c) => c.server)).toEqual([id(5)]);
    const audit = (await r.store.audit.list({ action: 'executor.preflight-refused' }, { limit: 20 })).items;
    expect(audit.some((a) => a.target === `server:${id(1)}`)).toBe(true);
  });

  it('cancelled mid-way, still says what it moved', async () => {
    r = await rig();
    const cloud = r.sim.cloud;
    const [t] = await r.service.tasks.service.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    await until(
      () => cloud.migrations.some((m) => m.type === 'live-migration' && m.status === 'completed'),
      30_000,
    );
    await r.service.tasks.service.cancel(t!.id, 'bob');
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const ended = await r.store.tasks.get(t!.id);
    expect(ended?.state).toBe('ERROR');
    expect(ended?.error).toBe('cancelled');
    const result = ended?.result as { host: string; liveMigrated: { server: string; to: string }[] };
    expect(result.host).toBe('c5');
    expect(result.liveMigrated.length).toBeGreaterThan(0);
    for (const m of result.liveMigrated)
      expect(
        cloud.migrations.some(
          (x) => x.server.uuid === m.server && x.dest === m.to && x.status === 'completed',
        ),
      ).toBe(true);
  });

  it('places the largest server first, where its tightest resource has most room: a drain the memory-only choice failed', async () => {
    // d1: most free memory, 18 of 32 VCPUs free; d2: 12 VCPUs and 40 GiB free. Six small servers
    // (2 VCPUs) placed first on the most free memory would leave d1 6 VCPUs, and the large one
    // (16 VCPUs) nowhere to go.
    const dest = (name: string, vcpuFree: number, memFreeMB: number): Host => ({
      ...host(name),
      inventory: {
        VCPU: { total: 32, reserved: 32 - vcpuFree, allocationRatio: 1 },
        MEMORY_MB: { total: memFreeMB, reserved: 0, allocationRatio: 1 },
        DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
      },
    });
    const snap: Snapshot = {
      format: 'aicerine-snapshot/1',
      takenAt: new Date().toISOString(),
      source: 'test',
      hosts: [host('c5'), dest('d1', 18, 131072), dest('d2', 12, 40960)],
      servers: [
        ...[1, 2, 3, 4, 5, 6].map((n) => server(n)),
        server(7, { flavor: { name: 'big', vcpus: 16, ramMB: 16384, diskGB: 20 } }),
      ],
      serverGroups: [],
    };
    r = await rig({}, snap);
    const [t] = await r.service.tasks.service.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const done = await r.store.tasks.get(t!.id);
    const result = done?.result as { liveMigrated: { server: string; to: string }[]; cannotMove: unknown[] };
    expect(result.cannotMove).toEqual([]);
    expect(result.liveMigrated.find((m) => m.server === id(7))?.to).toBe('d1');
    expect(r.sim.cloud.requireServer(id(7)).host).toBe('d1');
  });

  it('chooses again when another execution of the aggregate ran while it chose: two anti-affinity members never sent to one host', async () => {
    // vm-1 on c5 and vm-2 on c1 may not share a host. c2 has the most room, so each evacuation
    // alone sends its member there. The evacuation of c1 reads the cloud, then its read of
    // vm-2's allocation is held until the evacuation of c5 has moved vm-1 to c2 and ended: what
    // c1's evacuation read (vm-1 on c5) no longer holds. Seen in a maintenance campaign's wave
    // under load: Nova refused vm-2 on c2 three times and c1 stayed not drained.
    const group: ServerGroup = {
      id: 'a0000000-0000-4000-8000-000000000001',
      name: 'db',
      policy: 'anti-affinity',
      members: [id(1), id(2)],
      projectId: 'e0000000000000000000000000000001',
    };
    const snap: Snapshot = {
      format: 'aicerine-snapshot/1',
      takenAt: new Date().toISOString(),
      source: 'test',
      // c5 disabled from the start: neither evacuation has it as a destination.
      hosts: [
        { ...host('c5'), service: { state: 'up', status: 'disabled', forcedDown: false } },
        host('c1'),
        host('c2'),
        host('c3'),
      ],
      servers: [
        server(1),
        server(2, { host: 'c1' }),
        server(3, { host: 'c3', flavor: { name: 'f32', vcpus: 8, ramMB: 32768, diskGB: 20 } }),
      ],
      serverGroups: [group],
    };
    let reached: () => void = () => {};
    const atGate = new Promise<void>((res) => {
      reached = res;
    });
    let release: () => void = () => {};
    const gate = new Promise<void>((res) => {
      release = res;
    });
    let held = false;
    r = await rig({}, snap, (session) => {
      const read = session.placement.getConsumerAllocations.bind(session.placement);
      session.placement.getConsumerAllocations = async (consumer) => {
        if (consumer === id(2) && !held) {
          held = true;
          reached();
          await gate;
        }
        return read(consumer);
      };
    });
    const cloud = r.sim.cloud;
    const tasks = r.service.tasks.service;
    await r.service.tasks.worker.start();
    const [second] = await tasks.create('evacuate-compute', { host: 'c1' }, 'bob');
    await atGate;
    const [first] = await tasks.create('evacuate-compute', { host: 'c5' }, 'alice');
    await until(async () => (await r!.store.tasks.get(first!.id))?.state === 'DONE', 60_000);
    expect(cloud.requireServer(id(1)).host).toBe('c2');
    release();
    await until(
      async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(second!.id))!.state),
      60_000,
    );
    const done = await r.store.tasks.get(second!.id);
    expect(done?.state).toBe('DONE');
    const result = done?.result as { liveMigrated: { server: string; to: string }[]; cannotMove: unknown[] };
    expect(result.cannotMove).toEqual([]);
    expect(result.liveMigrated).toEqual([{ server: id(2), name: 'vm-2', to: 'c3' }]);
    expect(cloud.requireServer(id(2)).host).toBe('c3');
    // Nova was never asked to break the group.
    expect(cloud.migrations.filter((m) => m.status === 'error')).toEqual([]);
  });

  it("waits for another evacuation's live migrations in the aggregate, and says whose", async () => {
    r = await rig();
    const cloud = r.sim.cloud;
    // Slow schedules keep the first evacuation's execution running while the second looks.
    cloud.timing.scheduleSeconds = 60;
    const tasks = r.service.tasks.service;
    const [first] = await tasks.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    await until(() => cloud.migrations.some((m) => m.type === 'live-migration'), 30_000);
    const [second] = await tasks.create('evacuate-compute', { host: 'c1' }, 'bob');
    let waited: string | null = null;
    await until(async () => {
      const t = await r!.store.tasks.get(second!.id);
      if (t?.waitingReason?.includes('live migrations of task')) waited = t.waitingReason;
      return waited !== null;
    }, 30_000);
    expect(waited).toBe(
      `the live migrations of task ${first!.id} run in aggregate agg: one execution runs per aggregate at a time, and the evacuation waits for it`,
    );
    cloud.timing.scheduleSeconds = 1;
    for (const t of [first!, second!])
      await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t.id))!.state), 60_000);
    expect((await r.store.tasks.get(second!.id))?.state).toBe('DONE');
  });

  it('with tasks.evacuate.emergency false, waits for the closed window of the aggregate, then moves', async () => {
    // A one-hour window six hours from now (on the simulator's clock).
    const hour = (new Date(Date.now()).getUTCHours() + 6) % 24;
    const pad = (h: number) => String(h).padStart(2, '0');
    const window = `Mon-Sun ${pad(hour)}:00 - ${pad(hour + 1)}:00 UTC`;
    r = await rig({ tasks: { evacuate: { emergency: false } }, aggregates: { agg: { windows: [window] } } });
    const [t] = await r.service.tasks.service.create('evacuate-compute', { host: 'c5' }, 'alice');
    await r.service.tasks.worker.start();
    await until(async () => (await r!.store.tasks.get(t!.id))?.state === 'WAITING', 30_000);
    const waiting = (await r.store.tasks.get(t!.id))!;
    expect(waiting.waitingReason).toMatch(
      /^the maintenance window of agg is closed until \S+ \(tasks\.evacuate\.emergency is false\)$/,
    );
    expect(r.sim.cloud.migrations).toEqual([]);
    expect(r.sim.cloud.requireServer(id(1)).host).toBe('c5');

    // The window opens: the evacuation goes on, inside it.
    const opensAt = Date.parse(/until (\S+) /.exec(waiting.waitingReason ?? '')![1]!);
    r.sim.cloud.clock.advance((opensAt - r.sim.cloud.clock.nowMs()) / 1000 + 60);
    await until(async () => ['DONE', 'ERROR'].includes((await r!.store.tasks.get(t!.id))!.state), 60_000);
    const done = await r.store.tasks.get(t!.id);
    expect(done?.error).toBeNull();
    expect((done!.result as { liveMigrated: unknown[] }).liveMigrated).toHaveLength(2);
  });
});
