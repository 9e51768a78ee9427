// The maintenance API (/v1/maintenance) on the service's own routes, over the simulator: a start
// refused with the field that is wrong (and nothing created), a campaign started, listed, shown,
// paused, resumed, a host said done, the campaign aborted; every action in the audit log.

import { afterEach, describe, expect, it } from 'vitest';
import type { ZodApp } from '../../src/api/context.js';
import { buildApi, listenApi } from '../../src/api/server.js';
import { register } from '../../src/cli/commands/maintenance.js';
import { parseServiceConfig } from '../../src/config/load.js';
import { runCommand } from '../fixtures/cli.js';
import { until } from '../tasks/rig.js';
import { host, type Rig, rig, server, world } from './rig.js';

let r: Rig | undefined;
let app: ZodApp | undefined;
afterEach(async () => {
  await app?.close();
  await r?.close();
  r = undefined;
  app = undefined;
});

async function api(): Promise<ZodApp> {
  const names = ['c1', 'c2', 'c3'];
  r = await rig(
    world(
      names.map((n) => host(n)),
      names.flatMap((h, i) => [server(10 * i + 1, h), server(10 * i + 2, h)]),
    ),
    {},
  );
  const { config } = await parseServiceConfig(
    { openstack: { actuator: { cloud: 'unused' } } },
    { baseDir: r.dir },
  );
  app = await buildApi({
    store: r.store,
    config,
    control: r.service.control(),
    auth: { kind: 'none' },
    tasks: r.service.tasks.service,
    maintenance: r.service.tasks.maintenance,
  });
  return app;
}

describe('the maintenance API', () => {
  it('answers 503 without the service in its process', async () => {
    const { config } = await parseServiceConfig({}, { baseDir: '/' });
    r = await rig(world([host('c1')], []), {});
    app = await buildApi({ store: r.store, config, control: r.service.control(), auth: { kind: 'none' } });
    const res = await app.inject({ method: 'GET', url: '/v1/maintenance' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { code: 'maintenance-unavailable' } });
  });

  it('refuses bad starts with the field, then starts, pauses, resumes, takes a host back and aborts', async () => {
    const a = await api();
    const post = (url: string, payload?: Record<string, unknown>) =>
      a.inject({
        method: 'POST',
        url,
        ...(payload === undefined ? { headers: { 'x-aicerine-client': 'test' } } : { payload }),
      });

    let res = await post('/v1/maintenance', { aggregate: 'rack', parallel: 0 });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { field: 'body.parallel' } });
    res = await post('/v1/maintenance', { aggregate: 'rack', hosts: ['c1', 'c9'] });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { field: 'body.hosts[1]', value: 'c9' } });
    res = await post('/v1/maintenance', { aggregate: 'nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { field: 'body.aggregate', value: 'nope' } });
    expect((await a.inject({ method: 'GET', url: '/v1/maintenance' })).json()).toEqual({
      items: [],
      nextCursor: null,
    });

    res = await post('/v1/maintenance', { aggregate: 'rack', hosts: ['c2', 'c1'], parallel: 1 });
    expect(res.statusCode).toBe(201);
    const c = res.json();
    expect(c).toMatchObject({
      aggregate: 'rack',
      state: 'RUNNING',
      requestedBy: 'operator:local',
      settings: { parallel: 1, validate: false, returnWhen: 'done' },
      hosts: [
        { host: 'c2', state: 'pending' },
        { host: 'c1', state: 'pending' },
      ],
    });
    res = await post('/v1/maintenance', { aggregate: 'rack', hosts: ['c3'] });
    expect(res.statusCode).toBe(409);

    expect(c.driver).toMatchObject({ state: 'SCHEDULED' });
    await r!.service.tasks.worker.start();
    const show = async () => (await a.inject({ method: 'GET', url: `/v1/maintenance/${c.id}` })).json();
    await until(async () => (await show()).hosts[0].state === 'ready', 60_000);
    expect((await show()).hosts[0].note).toBe(
      'ready for maintenance: waiting for `aicerine maintenance done c2`',
    );
    expect((await post(`/v1/maintenance/${c.id}/pause`)).json()).toMatchObject({
      state: 'PAUSED',
      driver: { state: 'RUNNING' },
    });
    expect((await post(`/v1/maintenance/${c.id}/pause`)).statusCode).toBe(409);
    expect((await post('/v1/maintenance/hosts/c1/done')).statusCode).toBe(409);
    expect((await post('/v1/maintenance/hosts/c3/done')).statusCode).toBe(404);
    res = await post('/v1/maintenance/hosts/c2/done');
    expect(res.statusCode).toBe(200);
    expect(res.json().hosts[0]).toMatchObject({ state: 'returned', returnedBy: 'operator:local' });
    expect((await post(`/v1/maintenance/${c.id}/resume`)).json()).toMatchObject({ state: 'RUNNING' });
    await until(async () => (await show()).hosts[0].state === 'done', 30_000);
    await until(async () => (await show()).hosts[1].state !== 'pending', 30_000);
    expect((await post(`/v1/maintenance/${c.id}/abort`)).json()).toMatchObject({ abortRequested: true });
    await until(async () => (await show()).state === 'ABORTED', 30_000);
    expect((await show()).hosts.map((h: { state: string }) => h.state)).toEqual(['done', 'aborted']);
    expect((await post(`/v1/maintenance/${c.id}/abort`)).statusCode).toBe(409);
    expect((await a.inject({ method: 'GET', url: '/v1/maintenance/999' })).statusCode).toBe(404);

    const listed = (await a.inject({ method: 'GET', url: '/v1/maintenance?state=ABORTED' })).json();
    expect(listed.items.map((x: { id: string }) => x.id)).toEqual([c.id]);
    const audit = (await r!.store.audit.list({ actor: 'operator:local' }, { limit: 50 })).items;
    expect(audit.map((x) => x.action).reverse()).toEqual([
      'maintenance.start',
      'maintenance.pause',
      'maintenance.done',
      'maintenance.resume',
      'maintenance.abort',
    ]);
  });

  it('the CLI: start, status, pause, done, resume, abort, with the campaign found without its id', async () => {
    const a = await api();
    const url = await listenApi(a, { host: '127.0.0.1', port: 0, noAuth: true });
    const cli = (...args: string[]) =>
      runCommand([register], ['maintenance', ...args, '--api', url, '--no-auth']);

    await expect(cli('pause')).rejects.toThrow(/^no unfinished maintenance campaign; name one by its id/);
    await expect(cli('start', '--aggregate', 'rack', '--parallel', '0')).rejects.toThrow(/--parallel/);
    await expect(cli('start', '--aggregate', 'rack', '--validate')).rejects.toThrow(
      /validate: validate-compute is not configured/,
    );
    await expect(cli('start', '--aggregate', 'rack', '--return-when', 'reboot')).rejects.toThrow(
      /--return-when: expected done or service-restart, got "reboot"/,
    );
    let out = await cli(
      'start',
      '--aggregate',
      'rack',
      '--hosts',
      'c3,c1',
      '--parallel',
      '2',
      '--return-when',
      'done',
    );
    expect(out.out).toMatch(/^campaign (\d+) started on rack: 2 host\(s\), 2 at a time/);
    const id = /^campaign (\d+)/.exec(out.out)![1]!;
    const c = await r!.store.maintenance.get(id);
    expect(c?.settings).toMatchObject({ parallel: 2, validate: false, returnWhen: 'done' });
    await r!.service.tasks.worker.start();
    await until(
      async () => (await r!.store.maintenance.get(id))!.hosts.every((h) => h.state === 'ready'),
      60_000,
    );

    out = await cli('status');
    expect(out.out).toContain(`campaign ${id}: aggregate rack, RUNNING`);
    expect(out.out).toMatch(/\nc3 +ready +\d+ live, 0 cold/);
    expect(out.out).toContain('waiting for `aicerine maintenance done c1`');
    expect((await cli('pause')).out).toBe(`campaign ${id}: PAUSED\n`);
    expect((await cli('done', 'c3')).out).toBe(
      `c3 is back (campaign ${id}, paused): it is re-admitted when the campaign resumes (\`aicerine maintenance resume\`)\n`,
    );
    expect((await cli('resume', id)).out).toBe(`campaign ${id}: RUNNING\n`);
    await until(async () => (await r!.store.maintenance.get(id))!.hosts[0]!.state === 'done', 30_000);
    expect((await cli('abort', '--aggregate', 'rack')).out).toMatch(/aborting/);
    await until(async () => (await r!.store.maintenance.get(id))!.state === 'ABORTED', 30_000);
    const listed = await cli('list');
    expect(listed.out).toMatch(new RegExp(`\\n${id} +rack +ABORTED +1 done, 1 aborted`));
    const json = JSON.parse((await cli('status', id, '--json')).out);
    // With none unfinished, `status` without an id shows the newest campaign and how it ended.
    expect((await cli('status')).out).toContain(`campaign ${id}: aggregate rack, ABORTED`);
    expect(json.hosts.map((h: { state: string }) => h.state)).toEqual(['done', 'aborted']);
  });
});
