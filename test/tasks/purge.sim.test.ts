// purge-project against the simulator: the inventory (servers, their ports, server groups,
// volumes; what is skipped and why), a dry run equal to the run, dependency order, refusals
// before anything, and volumes as Cinder makes them awkward (pages, detaching after the
// server is gone, snapshots, Nova deleting some itself).
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/model/snapshot.js';
import { keystoneId } from '../../src/sim/ids.js';
import { ADMIN_PROJECT } from '../../src/sim/model.js';
import { purgeProjectHandler } from '../../src/tasks/kinds/purge-project.js';
import { type TaskRig, taskRig, until } from './rig.js';

const P = 'e0000000000000000000000000000001';
const Q = 'e0000000000000000000000000000002';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const GROUP = '00000000-0000-4000-9000-000000000001';

function world(): Snapshot {
  const server = (n: number, projectId: string, sriov = false) => ({
    id: id(n),
    name: `vm-${n}`,
    projectId,
    host: 'c1',
    status: 'ACTIVE',
    taskState: null,
    flavor: { name: 'f', vcpus: 1, ramMB: 1024, diskGB: 10 },
    sharedStorage: true,
    sriov,
  });
  return {
    format: 'aicerine-snapshot/1',
    takenAt: '2026-11-30T20:00:00Z',
    source: 'purge-test',
    hosts: [
      {
        name: 'c1',
        availabilityZone: 'nova',
        aggregates: [],
        service: { state: 'up', status: 'enabled', forcedDown: false },
        inventory: {
          VCPU: { total: 32, reserved: 0, allocationRatio: 4 },
          MEMORY_MB: { total: 65536, reserved: 0, allocationRatio: 1 },
          DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
        },
        usage: {},
      },
    ],
    servers: [server(1, P), server(2, P, true), server(3, Q, true)],
    serverGroups: [
      { id: GROUP, name: 'web', policy: 'anti-affinity', members: [id(1), id(2)], projectId: P },
    ],
  };
}

let r: TaskRig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

type Item = { kind: string; id: string };

describe('purge-project against the simulator', () => {
  it('refuses an unknown project and its own, before creating anything', async () => {
    r = await taskRig(world(), [purgeProjectHandler({ pollMs: 20 })]);
    await expect(r.service.create('purge-project', { project: 'nope' }, 'alice')).rejects.toMatchObject({
      status: 404,
    });
    await expect(r.service.create('purge-project', { project: 'admin' }, 'alice')).rejects.toMatchObject({
      status: 409,
    });
    await expect(
      r.service.create('purge-project', { project: P, dryRun: 'yes' }, 'alice'),
    ).rejects.toMatchObject({
      status: 400,
      issues: [{ path: 'args.dryRun' }],
    });
    expect((await r.store.tasks.list()).items).toEqual([]);
  });

  it('a dry run lists exactly what the run deletes, in dependency order; other projects stay', async () => {
    r = await taskRig(world(), [purgeProjectHandler({ pollMs: 20 })]);
    // demo also has a role on P, and on its own project: its keypairs are not P's to delete.
    const identity = r.session.service('identity');
    const roles = (await identity.get('/roles', { name: 'member' })) as { roles: { id: string }[] };
    const demo = keystoneId('user', 'demo');
    await identity.request({
      method: 'PUT',
      path: `/projects/${P}/users/${demo}/roles/${roles.roles[0]!.id}`,
    });

    const w = r.worker('w1');
    await w.start();
    const [dry] = await r.service.create('purge-project', { project: P, dryRun: true }, 'alice');
    expect((await r!.ended(dry!.id)).state).toBe('DONE');
    const listed = (await r.store.tasks.get(dry!.id))?.result as {
      wouldDelete: Item[];
      skipped: { what: string; why: string }[];
    };
    expect(listed.wouldDelete.map((i) => i.kind)).toEqual(['server', 'server', 'port', 'server-group']);
    expect(listed.wouldDelete.filter((i) => i.kind === 'server').map((i) => i.id)).toEqual([id(1), id(2)]);
    expect(listed.wouldDelete.find((i) => i.kind === 'server-group')?.id).toBe(GROUP);
    expect(listed.skipped).toEqual(
      expect.arrayContaining([
        { what: `keypairs of user ${demo}`, why: 'the user has roles in other projects too' },
      ]),
    );
    expect(r.sim.cloud.requireServer(id(1)).status).toBe('ACTIVE');

    const [run] = await r.service.create('purge-project', { project: P }, 'alice');
    await r!.ended(run!.id, 30_000);
    const ran = await r.store.tasks.get(run!.id);
    expect(ran?.error).toBeNull();
    expect(ran?.result).toMatchObject({ deleted: listed.wouldDelete });
    const servers = await r.session.nova.listServers();
    expect(servers.map((s) => s.id)).toEqual([id(3)]);
    expect((await r.session.nova.listServerGroups(true)).map((g) => g.id)).toEqual([]);
    const ports = (await r.session.service('network').get('/v2.0/ports')) as {
      ports: { project_id: string }[];
    };
    expect(ports.ports.map((p) => p.project_id)).toEqual([Q]);
    const audit = await r.store.audit.list({ action: 'task.purge-delete' });
    expect(audit.items).toHaveLength(4);
  });

  it('resumes from its checkpoint after its worker died: nothing deleted twice, what vanished counts as deleted', async () => {
    r = await taskRig(world(), [purgeProjectHandler({ pollMs: 20 })]);
    const [dry] = await r.service.create('purge-project', { project: P, dryRun: true }, 'alice');
    const w0 = r.worker('w0');
    await w0.start();
    expect((await r!.ended(dry!.id)).state).toBe('DONE');
    await w0.stop();
    const { wouldDelete: inventory, skipped } = (await r.store.tasks.get(dry!.id))!.result as {
      wouldDelete: Item[];
      skipped: { what: string; why: string }[];
    };
    const [task] = await r.service.create('purge-project', { project: P }, 'alice');
    // A worker died after deleting server 1 and checkpointing it; meanwhile someone else removed
    // the server group. (w0 is stopped: only the worker below can adopt the task.)
    await r.session.service('compute').request({
      method: 'DELETE',
      path: `/servers/${id(1)}`,
      headers: await r.session.nova.headers(),
    });
    await r.session.service('compute').request({
      method: 'DELETE',
      path: `/os-server-groups/${GROUP}`,
      headers: await r.session.nova.headers(),
    });
    const at = new Date(r.clock.now()).toISOString();
    const current = (await r.store.tasks.get(task!.id))!;
    expect(current.state).toBe('SCHEDULED');
    await r.store.tasks.update(
      task!.id,
      current.version,
      {
        state: 'RUNNING',
        owner: 'dead',
        attempts: 1,
        heartbeatAt: at,
        checkpoint: { projectId: P, inventory, skipped, deleted: [`server:${id(1)}`] },
      },
      at,
    );
    r.clock.offsetMs = 61_000;
    const w = r.worker('w1', { staleAfterMs: 60_000 });
    await w.start();
    await r!.ended(task!.id, 30_000);
    const done = await r.store.tasks.get(task!.id);
    expect(done?.error).toBeNull();
    expect(done).toMatchObject({ state: 'DONE', owner: 'w1', attempts: 2, result: { deleted: inventory } });
    // This run deleted what the dead one had not: server 1 is not among them.
    const audit = await r.store.audit.list({ action: 'task.purge-delete' });
    const targets = audit.items.map((a) => a.target);
    expect(targets.sort()).toEqual(
      inventory
        .filter((i) => !(i.kind === 'server' && i.id === id(1)))
        .map((i) => `${i.kind}:${i.id}`)
        .sort(),
    );
    expect((await r.session.nova.listServers()).map((s) => s.id)).toEqual([id(3)]);
  });

  it('volumes: every page, the one attached to a purged server once Nova detached it, cascade over snapshots; the others stay', async () => {
    r = await taskRig(world(), [purgeProjectHandler({ pollMs: 20 })]);
    const cinder = r.sim.cloud.cinder;
    // Pages of two, as osapi_max_limit = 2 would give: P's volumes span three.
    cinder.maxLimit = 2;
    // A detach long enough (0.2 s here) that the purge surely meets it after the servers are gone.
    r.sim.cloud.timing.volumeDetachSeconds = 10;
    const vol = (
      name: string,
      projectId: string,
      more: { attachedTo?: string; deleteOnTermination?: boolean } = {},
    ) => cinder.createVolume({ name, projectId, sizeGB: 5, ...more }).id;
    const attached = vol('p-attached', P, { attachedTo: id(1) });
    const snapped = vol('p-snapped', P);
    const snapshot = cinder.createSnapshot({ volumeId: snapped, name: 'nightly' }).id;
    // Nova deletes this one itself after detaching it: the purge meets it deleting, then gone.
    const root = vol('p-root', P, { attachedTo: id(2), deleteOnTermination: true });
    const plain = vol('p-plain', P);
    // Attached to another project's server: deleting it is not this purge's to decide.
    const lent = vol('p-lent', P, { attachedTo: id(3) });
    const others = [vol('q-data', Q, { attachedTo: id(3) }), vol('admin-data', ADMIN_PROJECT)];

    const w = r.worker('w1');
    await w.start();
    const [dry] = await r.service.create('purge-project', { project: P, dryRun: true }, 'alice');
    expect((await r!.ended(dry!.id)).state).toBe('DONE');
    const listed = (await r.store.tasks.get(dry!.id))?.result as {
      wouldDelete: Item[];
      skipped: { what: string; why: string }[];
    };
    const volumes = listed.wouldDelete.filter((i) => i.kind === 'volume').map((i) => i.id);
    expect(volumes).toEqual([attached, snapped, root, plain].sort());
    expect(listed.skipped).toContainEqual({
      what: `volume ${lent}`,
      why: `attached to server ${id(3)}, which this purge does not delete`,
    });
    expect(listed.wouldDelete.map((i) => i.kind)).toEqual([
      'server',
      'server',
      'port',
      'volume',
      'volume',
      'volume',
      'volume',
      'server-group',
    ]);
    expect(cinder.volumesById.get(attached)?.status).toBe('in-use');

    const [run] = await r.service.create('purge-project', { project: P }, 'alice');
    await r!.ended(run!.id, 30_000);
    const ran = await r.store.tasks.get(run!.id);
    expect(ran?.error).toBeNull();
    expect(ran?.result).toMatchObject({ deleted: listed.wouldDelete });
    // The simulator runs its due events when asked anything.
    await until(() => {
      r!.sim.cloud.sync();
      return [attached, snapped, root, plain].every((v) => !cinder.volumesById.has(v));
    });
    expect(cinder.snapshotsById.has(snapshot)).toBe(false);
    expect(cinder.volumes.map((v) => v.id).sort()).toEqual([lent, ...others].sort());
    const audit = await r.store.audit.list({ action: 'task.purge-delete' });
    expect(
      audit.items
        .map((a) => a.target)
        .filter((t) => t.startsWith('volume:'))
        .sort(),
    ).toEqual(volumes.map((v) => `volume:${v}`));
  });
});
