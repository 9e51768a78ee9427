// validate-compute through the whole service (task service, worker, store, host locks) against
// the simulator and a private sshd: a request of two disabled hosts becomes two host tasks and
// a clean-up that runs after them; the hosts end enabled, the batch leaves nothing behind.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/cloud/log.js';
import { openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { host, snapshot } from '../sim/fixtures.js';
import { until } from '../tasks/rig.js';
import { type PrivateSshd, startSshd } from './sshd.js';

const SPEED = 20;
let sshd: PrivateSshd;
let sim: SimServerHandle;
let store: Store;
let service: AicerineService;
let dir: string;

beforeAll(async () => {
  sshd = await startSshd();
  const disabled = {
    state: 'up' as const,
    status: 'disabled' as const,
    forcedDown: false,
    disabledReason: 'repaired',
  };
  const cloud = new SimCloud(
    snapshot([host('c1', { service: disabled }), host('c2', { service: disabled }), host('c3')], []),
    { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() },
  );
  sim = await startSimServer({ cloud, password: 'secret' });
  dir = await mkdtemp(join(tmpdir(), 'canary-service-'));
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'validation service test'),
  });
  await session.nova.client.request({
    method: 'POST',
    path: '/flavors',
    headers: await session.nova.headers(),
    body: { flavor: { name: 'canary-size', vcpus: 1, ram: 512, disk: 1 } },
  });
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
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
          check: 'echo ok',
          projectName: 'canary-validation',
        },
      },
    },
    { baseDir: dir },
  );
  store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  service = new AicerineService({
    config,
    store,
    reader: session,
    actuator: session,
    clock: {
      now: () => cloud.clock.nowMs(),
      sleep: (ms) => new Promise((res) => setTimeout(res, Math.max(0, ms / SPEED))),
    },
    logger: silentLogger,
    recorder: { historyDays: 1 },
    tasks: { worker: { pollMs: 50, heartbeatMs: 50 } },
  });
});

afterAll(async () => {
  await service?.stop();
  await store?.close();
  await sim?.close();
  await sshd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('validate-compute through the service', () => {
  it('runs one task per host, then the clean-up; the hosts end enabled and nothing is left', async () => {
    const tasks = service.tasks.service;
    await expect(tasks.create('validate-compute', { hosts: ['c1', 'nope'] }, 'alice')).rejects.toMatchObject({
      status: 404,
    });
    const created = await tasks.create(
      'validate-compute',
      { hosts: ['c1', 'c2'], keepEnabled: true },
      'alice',
    );
    expect(created.map((t) => [t.kind, t.hosts, t.afterBatch])).toEqual([
      ['validate-compute', ['c1'], false],
      ['validate-compute', ['c2'], false],
      ['validate-compute-cleanup', [], true],
    ]);
    await service.tasks.worker.start();
    const ended = async () =>
      Promise.all(created.map(async (t) => (await store.tasks.get(t.id))?.state ?? 'missing'));
    await until(async () => (await ended()).every((s) => s === 'DONE' || s === 'ERROR'), 60_000);
    const records = await Promise.all(created.map((t) => store.tasks.get(t.id)));
    expect(records.map((t) => [t?.state, t?.error])).toEqual([
      ['DONE', null],
      ['DONE', null],
      ['DONE', null],
    ]);
    expect(records[0]?.result).toMatchObject({ host: 'c1', passed: true, serviceStatus: 'enabled' });
    // The clean-up started only after both host tasks had ended.
    const hostEnds = records.slice(0, 2).map((t) => Date.parse(t?.endedAt ?? ''));
    expect(Date.parse(records[2]?.startedAt ?? '')).toBeGreaterThanOrEqual(Math.max(...hostEnds));
    expect(sim.cloud.hostsByName.get('c1')).toMatchObject({ status: 'enabled', disabledReason: null });
    expect(sim.cloud.hostsByName.get('c2')).toMatchObject({ status: 'enabled' });
    expect(sim.keystone.projectByName(`canary-validation-${created[0]?.batch}`)).toBeUndefined();
    expect(sim.cloud.aggregates.filter((a) => a.name.startsWith('aicerine-validation'))).toEqual([]);
    expect([...sim.cloud.placement.customTraits]).toEqual([]);
    expect(sim.cloud.servers.filter((x) => x.name.startsWith('canary-'))).toEqual([]);
    expect(await service.locks.list('host/')).toEqual([]);
  });
});
