// Operator tasks through the running service's HTTP API and the `aicerine tasks` CLI, on the
// simulator (the dashboard tests' rig: the service, its task worker and its API): an evacuation
// requested over HTTP runs to DONE; refusals name the request field and create nothing; with the
// lock backend unreachable nothing is written, the waiting task is left as it was and the reason
// shows in GET /v1/tasks; `tasks clean` removes DONE tasks and nothing else; a reader reads only.

import { afterEach, describe, expect, it } from 'vitest';
import { register as registerTasks } from '../../src/cli/commands/tasks.js';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { setServiceStatus } from '../../src/sim/model.js';
import { runCommand } from '../fixtures/cli.js';
import { SwitchableLocks } from '../tasks/rig.js';
import { addCloudReader, PASSWORD, type Rig, startRig, until } from '../web/rig.js';

interface Answer {
  status: number;
  body: Record<string, unknown> & {
    error?: { status: number; code: string; message: string; field?: string; value?: unknown };
  };
}
interface TaskJson {
  id: string;
  state: string;
  kind: string;
  result: unknown;
  error: string | null;
  waitingReason: string | null;
  updatedAt: string;
}

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

async function call(method: 'GET' | 'POST', path: string, body?: unknown, token?: string): Promise<Answer> {
  const res = await fetch(`${r!.url}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      // A body-less action sends the clients' header, as the CLI does.
      ...(body !== undefined ? { 'content-type': 'application/json' } : { 'x-aicerine-client': 'test' }),
      ...(token ? { 'x-auth-token': token } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

const taskOf = async (id: string) => (await call('GET', `/v1/tasks/${id}`)).body as unknown as TaskJson;
const ended = (id: string) =>
  until(`task ${id} to end`, async () => {
    const t = await taskOf(id);
    return t.state === 'DONE' || t.state === 'ERROR' ? t : undefined;
  });
const count = async () => ((await call('GET', '/v1/tasks')).body.items as unknown[]).length;
const cli = (...args: string[]) => runCommand([registerTasks], [...args, '--api', r!.url, '--no-auth']);

describe('operator tasks through the service API', () => {
  it('evacuates a host requested over HTTP, to DONE; the CLI lists, shows and cleans', async () => {
    r = await startRig({ auth: false });
    const first = await call('GET', '/v1/tasks');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ items: [], worker: { state: 'running', blocked: null } });
    const kinds = (await call('GET', '/v1/tasks/kinds')).body.kinds as { kind: string }[];
    expect(kinds.map((k) => k.kind).sort()).toEqual([
      'evacuate-compute',
      'purge-project',
      'validate-compute',
    ]);

    const created = await call('POST', '/v1/tasks', { kind: 'evacuate-compute', args: { host: 's2' } });
    expect(created.status).toBe(201);
    const [task] = created.body.tasks as TaskJson[];
    expect(task).toMatchObject({ kind: 'evacuate-compute', state: 'SCHEDULED' });
    const done = await ended(task!.id);
    expect(done.error).toBeNull();
    expect(done.state).toBe('DONE');
    expect(done.result).toMatchObject({
      host: 's2',
      liveMigrated: [{ to: 's1' }],
      coldMigrated: [],
      cannotMove: [],
    });
    expect(r.sim.cloud.servers.filter((s) => s.host === 's2')).toEqual([]);
    const audit = await r.store.audit.list({ action: 'task.create' });
    expect(audit.items[0]).toMatchObject({ actor: 'operator:local', target: `task:${task!.id}` });

    // The CLI on the same API.
    const listed = await cli('tasks', 'list');
    expect(listed.out).toMatch(new RegExp(`^${task!.id}\\s+evacuate-compute\\s+DONE\\s+s2\\s`, 'm'));
    const shown = (await cli('tasks', 'show', task!.id)).out;
    expect(shown).toContain('"liveMigrated"');
    expect(shown).toMatch(/ {2}progress: {2}\d+(\/\d+)? done\n/);
    const asked = await cli('tasks', 'evacuate', 'g3');
    const id = /^task (\d+): evacuate-compute SCHEDULED on g3$/m.exec(asked.out)?.[1];
    expect(id).toBeDefined();
    await ended(id!);
    await expect(cli('tasks', 'cancel', id!)).rejects.toThrow(/409 task \d+ already ended DONE/);
    expect((await cli('tasks', 'clean')).out).toBe('2 DONE task(s) removed\n');
    expect(await count()).toBe(0);
  }, 120_000);

  it('refuses bad requests naming the field (400, 404, 409) and creates nothing', async () => {
    r = await startRig({ auth: false });
    const refused = async (body: unknown) => {
      const a = await call('POST', '/v1/tasks', body);
      return { status: a.status, ...a.body.error };
    };
    expect(await refused({ kind: 'evacuate-compute', args: { host: 'bad host!' } })).toMatchObject({
      status: 400,
      code: 'invalid-field',
      field: 'body.args.host',
      value: 'bad host!',
    });
    expect(await refused({ kind: 'evacuate-compute', args: { host: 's2', force: true } })).toMatchObject({
      status: 400,
      field: 'body.args.force',
    });
    expect(await refused({ kind: 'reboot-everything', args: {} })).toMatchObject({
      status: 400,
      field: 'body.kind',
      value: 'reboot-everything',
    });
    expect(await refused({ kind: 'validate-compute-cleanup', args: {} })).toMatchObject({
      status: 400,
      field: 'body.kind',
    });
    expect(await refused({ kind: 'evacuate-compute', args: { host: 'nohost' } })).toMatchObject({
      status: 404,
      code: 'not-found',
      field: 'body.args.host',
      value: 'nohost',
      message: 'host: no nova-compute service on host nohost',
    });
    expect(await refused({ kind: 'purge-project', args: { project: 'no-such-project' } })).toMatchObject({
      status: 404,
      field: 'body.args.project',
      message: 'project: no project no-such-project',
    });
    // The service's configuration, not the request, is at fault: no field.
    const unconfigured = await refused({ kind: 'validate-compute', args: { hosts: ['g3'] } });
    expect(unconfigured).toMatchObject({ status: 409, code: 'conflict' });
    expect(unconfigured.message).toMatch(/validate-compute is not configured/);
    expect(unconfigured.field).toBeUndefined();
    expect(await count()).toBe(0);

    // A disabled target: 409 on the target.
    setServiceStatus(r.sim.cloud.hostsByName.get('s1')!, 'disabled', 'maintenance');
    expect(await refused({ kind: 'evacuate-compute', args: { host: 's2', target: 's1' } })).toMatchObject({
      status: 409,
      field: 'body.args.target',
      value: 's1',
      message: 'target: s1 is disabled (maintenance)',
    });
    expect(await count()).toBe(0);

    // A target in another aggregate: the evacuation could never use it (it would disable s2 and
    // move nothing), so the request is refused.
    const foreign = await refused({ kind: 'evacuate-compute', args: { host: 's2', target: 'g1' } });
    expect(foreign).toMatchObject({ status: 409, field: 'body.args.target', value: 'g1' });
    expect(foreign.message).toMatch(/g1 shares no aggregate with s2/);
    expect(await count()).toBe(0);

    // Last resorts: names checked, each unknown one a 404 on its place in the list; a disabled
    // one (s1, disabled above) is only a preference and passes.
    expect(
      await refused({ kind: 'evacuate-compute', args: { host: 's2', lastResort: ['s1', 's2'] } }),
    ).toMatchObject({ status: 400, field: 'body.args.lastResort[1]', value: 's2' });
    expect(
      await refused({ kind: 'evacuate-compute', args: { host: 's2', lastResort: ['s1', 'gone'] } }),
    ).toMatchObject({
      status: 404,
      field: 'body.args.lastResort[1]',
      value: 'gone',
      message: 'lastResort[1]: no nova-compute service on host gone',
    });
    expect(await count()).toBe(0);

    expect((await call('GET', '/v1/tasks/987')).body.error).toMatchObject({
      status: 404,
      field: 'params.id',
    });
    expect((await call('POST', '/v1/tasks/987/cancel', {})).body.error).toMatchObject({ status: 404 });
  }, 120_000);

  it('with the lock backend unreachable: nothing written, the waiting task untouched, the reason in GET /v1/tasks', async () => {
    const locks = new SwitchableLocks(new LocalLockService());
    r = await startRig({ auth: false, locks });
    // g3 is held by a move of the balancer: the task waits, saying so.
    const held = await locks.tryAcquire('host/g3', 'executor:exec-test');
    const [task] = (await call('POST', '/v1/tasks', { kind: 'evacuate-compute', args: { host: 'g3' } })).body
      .tasks as TaskJson[];
    const waiting = await until('the task to wait', async () => {
      const t = await taskOf(task!.id);
      return t.state === 'WAITING' ? t : undefined;
    });
    expect(waiting.waitingReason).toBe('host g3 is held by executor:exec-test');

    locks.down = 'etcd: connection refused';
    const blocked = await until('the worker to say it is blocked', async () => {
      const w = (await call('GET', '/v1/tasks')).body.worker as { blocked: string | null };
      return w.blocked ?? undefined;
    });
    expect(blocked).toMatch(/^the lock backend is unreachable; no task is touched .*connection refused/);
    await held?.release();
    const refused = await call('POST', '/v1/tasks', { kind: 'evacuate-compute', args: { host: 's2' } });
    expect(refused.status).toBe(503);
    expect(refused.body.error?.message).toMatch(/lock backend is unreachable; nothing was written/);
    expect((await call('POST', '/v1/tasks/clean', {})).status).toBe(503);
    expect((await call('POST', `/v1/tasks/${task!.id}/cancel`, {})).status).toBe(503);
    // Several worker passes later (one every 0.1 s of real time), the task is as it was.
    await new Promise((res) => setTimeout(res, 1000));
    expect(await taskOf(task!.id)).toEqual(waiting);
    expect(await count()).toBe(1);

    locks.down = null;
    expect((await ended(task!.id)).state).toBe('DONE');
    expect(((await call('GET', '/v1/tasks')).body.worker as { blocked: string | null }).blocked).toBeNull();
  }, 120_000);

  it('a reader lists and reads tasks; creating, cancelling and cleaning are refused (403)', async () => {
    r = await startRig({ auth: true });
    const login = async (username: string, project: string) =>
      (
        await call('POST', '/v1/auth/tokens', {
          username,
          password: PASSWORD,
          project,
          userDomain: 'Default',
          projectDomain: 'Default',
        })
      ).body.token as string;
    const admin = await login('admin', 'admin');
    // A cloud-wide reader (a project's member or reader reads nothing: docs/api.md).
    addCloudReader(r.sim);
    const reader = await login('noc', 'admin');
    const created = await call(
      'POST',
      '/v1/tasks',
      { kind: 'evacuate-compute', args: { host: 'g3' } },
      admin,
    );
    expect(created.status).toBe(201);
    const [task] = created.body.tasks as TaskJson[];
    expect((await call('GET', '/v1/tasks', undefined, reader)).status).toBe(200);
    expect((await call('GET', `/v1/tasks/${task!.id}`, undefined, reader)).status).toBe(200);
    const body = { kind: 'evacuate-compute', args: { host: 's2' } };
    expect((await call('POST', '/v1/tasks', body, reader)).status).toBe(403);
    expect((await call('POST', `/v1/tasks/${task!.id}/cancel`, {}, reader)).status).toBe(403);
    expect((await call('POST', '/v1/tasks/clean', {}, reader)).status).toBe(403);
    expect(await r.store.audit.list({ action: 'task.create' })).toMatchObject({
      items: [{ actor: 'operator:admin' }],
    });
  }, 120_000);
});
