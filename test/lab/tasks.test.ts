// Operator tasks against the real lab (docs/tasks.md): an evacuation of compute5 (the one host
// this suite may disable; destinations compute1..4 through an aggregate of its own), the purge
// of a project made here, and two workers racing for the same tasks (in-process locks, and etcd
// with a client per worker as separate processes have). Everything created has the
// prefix `tasks-`; compute5 is enabled again after each test.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import { EtcdLockService } from '../../src/coordination/etcd-locks.js';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import type { LockService } from '../../src/coordination/locks.js';
import { systemClock } from '../../src/executor/ports.js';
import { AicerineService } from '../../src/service/service.js';
import { openStore, type Store } from '../../src/store/store.js';
import type { TaskHandler } from '../../src/tasks/types.js';
import { adminSession, bootServers, cleanupLab, createAggregate, labEnv, waitFor } from './lab.js';

const PREFIX = 'tasks-';
const HOST = 'compute5';
const DESTINATIONS = ['compute1', 'compute2', 'compute3', 'compute4'];
const unique = (what: string) => `${PREFIX}${what}-${randomBytes(3).toString('hex')}`;

/** A private etcd (test/coordination/etcd-server.ts), null when etcd is not installed. */
const etcd = inject('etcd');
let admin: CloudSession;
let dir: string;
const opened: { store: Store; service: AicerineService }[] = [];
/** Lock clients a test opened itself (closed after the services that use them). */
const lockClients: LockService[] = [];

/**
 * A task kind for the race only: it counts its runs (both workers live in this process) and asks
 * the lab's Nova something, so a run takes a real round trip.
 */
const PROBE = 'lab-race-probe';
const probeRuns = new Map<string, number>();
const probe: TaskHandler<Record<string, never>, null> = {
  kind: PROBE,
  description: 'counts its runs (lab race test)',
  parse: () => ({}),
  preflight: async () => [{ kind: PROBE, args: {}, hosts: [] }],
  async run(ctx) {
    probeRuns.set(ctx.task.id, (probeRuns.get(ctx.task.id) ?? 0) + 1);
    const services = await ctx.reader.nova.listServices('nova-compute');
    return { computes: services.length };
  },
};

async function service(storeFile = 'aicerine.db', locks: LockService = new LocalLockService()) {
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: `sqlite:${storeFile}` },
      defaults: { mode: 'observe', concurrency: { perSourceHost: 2, perAggregate: 4 } },
    },
    { baseDir: dir },
  );
  const store = await openStore({ kind: 'sqlite', path: join(dir, storeFile) });
  const svc = new AicerineService({
    config,
    store,
    reader: admin,
    actuator: await Actuator.open({ config: admin.config, credential: { label: 'actuator (lab test)' } }),
    tasksSession: admin,
    clock: systemClock,
    logger: silentLogger,
    locks,
    tasks: { worker: { pollMs: 500, heartbeatMs: 2000 }, extraHandlers: [probe] },
  });
  opened.push({ store, service: svc });
  return { store, service: svc };
}

async function novaCall(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await admin.nova.client.request({
    method,
    path,
    headers: await admin.nova.headers(),
    accept: [404],
    ...(body === undefined ? {} : { body }),
  });
  return res.body;
}

async function enableHost(): Promise<void> {
  const [svc] = await admin.nova.listServices('nova-compute', HOST);
  if (svc && svc.status !== 'enabled') await admin.nova.setServiceStatus(svc.id, 'enabled');
}

async function waitTask(store: Store, id: string, timeoutMs = 240_000) {
  return waitFor(
    `task ${id} to end`,
    async () => {
      const t = await store.tasks.get(id);
      return t && (t.state === 'DONE' || t.state === 'ERROR') ? t : undefined;
    },
    timeoutMs,
  );
}

beforeAll(async () => {
  labEnv('OS_AUTH_URL');
  admin = await adminSession();
  dir = await mkdtemp(join(tmpdir(), 'aic-lab-tasks-'));
  await cleanupLab(admin, PREFIX);
  await enableHost();
});

afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.service.stop();
    await o.store.close();
  }
  for (const l of lockClients.splice(0)) await l.close();
  await cleanupLab(admin, PREFIX);
  await enableHost();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('operator tasks on the lab', () => {
  it('evacuates compute5: live what runs, cold (with confirmResize) what is stopped', async () => {
    await createAggregate(admin, unique('evac'), [...DESTINATIONS, HOST]);
    const servers = await bootServers(admin, [
      { name: unique('live'), host: HOST, flavor: 'm1.tiny' },
      { name: unique('live'), host: HOST, flavor: 'm1.tiny' },
      { name: unique('cold'), host: HOST, flavor: 'm1.tiny' },
    ]);
    const cold = servers[2]!;
    await novaCall('POST', `/servers/${cold.id}/action`, { 'os-stop': null });
    await waitFor('the cold server to stop', async () =>
      (await admin.nova.getServer(cold.id)).status === 'SHUTOFF' ? true : undefined,
    );
    const { store, service: svc } = await service();
    const [task] = await svc.tasks.service.create('evacuate-compute', { host: HOST }, 'operator:lab');
    await svc.tasks.worker.start();
    const done = await waitTask(store, task!.id);
    expect(done.error).toBeNull();
    expect(done.state).toBe('DONE');
    const result = done.result as {
      liveMigrated: { server: string; to: string }[];
      coldMigrated: { server: string; to: string }[];
      cannotMove: unknown[];
    };
    expect(result.liveMigrated.map((m) => m.server).sort()).toEqual([servers[0]!.id, servers[1]!.id].sort());
    expect(result.coldMigrated.map((m) => m.server)).toEqual([cold.id]);
    expect(result.cannotMove).toEqual([]);
    for (const s of servers) {
      const now = await admin.nova.getServer(s.id);
      expect(DESTINATIONS).toContain(now.host);
      expect(now.status).toBe(s.id === cold.id ? 'SHUTOFF' : 'ACTIVE');
    }
    const [svc5] = await admin.nova.listServices('nova-compute', HOST);
    expect(svc5?.status).toBe('disabled');
    expect(svc5?.disabledReason).toBe(
      `aicerine task ${task!.id}: evacuate-compute requested by operator:lab`,
    );
    // Nova's record of the cold move: a confirmed migration of type "migration".
    const coldRecords = await admin.nova.listMigrations({ serverId: cold.id, migrationType: 'migration' });
    expect(coldRecords.map((m) => m.status)).toEqual(['confirmed']);

    // Asked again: nothing left to move, DONE at once.
    const [again] = await svc.tasks.service.create('evacuate-compute', { host: HOST }, 'operator:lab');
    const second = await waitTask(store, again!.id, 60_000);
    expect(second.state).toBe('DONE');
    expect(second.result).toMatchObject({ liveMigrated: [], coldMigrated: [], cannotMove: [] });
  });

  it('purges a project: a dry run lists exactly what the run then deletes', async () => {
    const identity = admin.service('identity');
    const projectName = unique('purge');
    const project = (
      (
        await identity.request({
          method: 'POST',
          path: '/projects',
          body: { project: { name: projectName, domain_id: 'default' } },
        })
      ).body as { project: { id: string } }
    ).project;
    const password = randomBytes(12).toString('hex');
    const user = (
      (
        await identity.request({
          method: 'POST',
          path: '/users',
          body: {
            user: { name: unique('user'), domain_id: 'default', password, default_project_id: project.id },
          },
        })
      ).body as { user: { id: string; name: string } }
    ).user;
    try {
      const roles = (await identity.get('/roles', { name: 'member' })) as { roles: { id: string }[] };
      await identity.request({
        method: 'PUT',
        path: `/projects/${project.id}/users/${user.id}/roles/${roles.roles[0]!.id}`,
      });
      const member = await openSession({
        config: {
          ...admin.config,
          method: 'password',
          auth: {
            authUrl: admin.config.auth.authUrl,
            username: user.name,
            password,
            userDomainName: 'Default',
            projectId: project.id,
          },
        },
      });
      const keypairName = unique('kp');
      const [server] = await bootServers(member, [{ name: unique('srv'), flavor: 'm1.tiny' }]);
      const groupBody = (
        await member.nova.client.request({
          method: 'POST',
          path: '/os-server-groups',
          headers: await member.nova.headers(),
          body: { server_group: { name: unique('grp'), policy: 'anti-affinity' } },
        })
      ).body as { server_group: { id: string } };
      await member.nova.client.request({
        method: 'POST',
        path: '/os-keypairs',
        headers: await member.nova.headers(),
        body: { keypair: { name: keypairName, type: 'ssh' } },
      });
      const image = (
        await member.service('image').request({
          method: 'POST',
          path: '/v2/images',
          body: { name: unique('img'), disk_format: 'raw', container_format: 'bare' },
        })
      ).body as { id: string };

      const { store, service: svc } = await service('purge.db');
      await svc.tasks.worker.start();
      const [dry] = await svc.tasks.service.create(
        'purge-project',
        { project: projectName, dryRun: true },
        'operator:lab',
      );
      const listed = (await waitTask(store, dry!.id, 60_000)).result as {
        wouldDelete: { kind: string; id: string }[];
      };
      expect(listed.wouldDelete.map((i) => `${i.kind}:${i.id}`).sort()).toEqual(
        [
          `server:${server!.id}`,
          `server-group:${groupBody.server_group.id}`,
          `image:${image.id}`,
          `keypair:${keypairName}`,
        ].sort(),
      );
      const [run] = await svc.tasks.service.create('purge-project', { project: project.id }, 'operator:lab');
      const ran = await waitTask(store, run!.id, 180_000);
      expect(ran.error).toBeNull();
      expect((ran.result as { deleted: unknown[] }).deleted).toEqual(listed.wouldDelete);
      const gone = await admin.nova.client.request({
        method: 'GET',
        path: `/servers/${server!.id}`,
        headers: await admin.nova.headers(),
        accept: [404],
      });
      expect(gone.status).toBe(404);
      expect((await admin.nova.listServerGroups(true)).some((g) => g.id === groupBody.server_group.id)).toBe(
        false,
      );
      const img = await admin
        .service('image')
        .request({ method: 'GET', path: `/v2/images/${image.id}`, accept: [404] });
      expect(img.status).toBe(404);
    } finally {
      // What a failed purge would leave: images and keypairs of this run.
      const images = (await admin.service('image').get('/v2/images', { owner: project.id })) as {
        images: { id: string }[];
      };
      for (const i of images.images)
        await admin.service('image').request({ method: 'DELETE', path: `/v2/images/${i.id}`, accept: [404] });
      await identity.request({ method: 'DELETE', path: `/users/${user.id}`, accept: [404] });
      await identity.request({ method: 'DELETE', path: `/projects/${project.id}`, accept: [404] });
    }
  });

  // The tasks are created first; then both workers make their passes at the same instant, again
  // and again until every task ended, so each pass of one races the other's for the same rows.
  // attempts counts claims (the compare-and-set to RUNNING); the probes, first in line where the
  // passes collide most, count their runs. (Checked: with the claim's lock and compare-and-set
  // taken out of the worker, a probe runs twice and this fails.)
  async function race(locksA: LockService, locksB: LockService): Promise<void> {
    const a = await service('race.db', locksA);
    const b = await service('race.db', locksB);
    const created = [];
    for (let i = 0; i < 8; i++)
      created.push(
        ...(await (i % 2 === 0 ? a : b).service.tasks.service.create(
          i < 4 ? PROBE : 'purge-project',
          i < 4 ? {} : { project: 'demo', dryRun: true },
          'operator:lab',
        )),
      );
    const workers = [a.service.tasks.worker, b.service.tasks.worker];
    await waitFor(
      'every task to end',
      async () => {
        await Promise.all(workers.map((w) => w.tick()));
        return (await a.store.tasks.unfinished()).length === 0 ? true : undefined;
      },
      120_000,
    );
    await Promise.all(workers.map((w) => w.drain()));
    for (const t of created) {
      const done = (await a.store.tasks.get(t.id))!;
      expect(done.error).toBeNull();
      expect(done.state).toBe('DONE');
      expect(done.attempts).toBe(1);
      expect(done.owner).toMatch(/^worker:/);
    }
    for (const t of created.filter((x) => x.kind === PROBE)) expect(probeRuns.get(t.id)).toEqual(1);
  }

  it('two workers racing for the same tasks (in-process locks): each task runs exactly once', async () => {
    const locks = new LocalLockService();
    await race(locks, locks);
  });

  it.skipIf(etcd === null)(
    'two workers racing for the same tasks (etcd, one client each, as two processes): each task runs exactly once',
    async () => {
      const prefix = `/aicerine-lab-tasks-${randomBytes(4).toString('hex')}/`;
      const [la, lb] = [0, 1].map(() => new EtcdLockService({ endpoints: [etcd!.endpoint], prefix }));
      lockClients.push(la!, lb!);
      await race(la!, lb!);
    },
  );
});
