// Rolling maintenance through the whole service against the simulator (Nova, Placement, Keystone
// over HTTP) with a private sshd standing in for the canaries: a 12-host aggregate three at a
// time with one host failing its validation; the aggregate's spare capacity holding the campaign
// to fewer hosts than asked; refusals before anything is touched; pause, resume and abort; and a
// campaign that survives its service's restart.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { maintenanceReason } from '../../src/maintenance/types.js';
import { mutateHost } from '../../src/maintenance/writes.js';
import type { ServerGroup } from '../../src/model/snapshot.js';
import { setServiceStatus } from '../../src/sim/model.js';
import { until } from '../tasks/rig.js';
import {
  type Helpers,
  host,
  PROJECT,
  type Rig,
  campaign as read,
  rig,
  operate as run,
  server,
  sid,
  startHelpers,
  world,
} from './rig.js';

let helpers: Helpers;
let r: Rig | undefined;
beforeAll(async () => {
  helpers = await startHelpers();
});
afterAll(async () => {
  await helpers?.close();
});
afterEach(async () => {
  await r?.close();
  r = undefined;
  helpers.events.length = 0;
});
const campaign = (id: string) => read(r!, id);
const operate = (...args: Parameters<typeof run> extends [unknown, ...infer T] ? T : never) =>
  run(r!, ...args);

describe('rolling maintenance on the simulator', () => {
  it('takes a 12-host aggregate through maintenance three at a time; a host failing validation stays disabled', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `m${String(i + 1).padStart(2, '0')}`);
    const servers = names.flatMap((h, i) => [server(2 * i + 1, h), server(2 * i + 2, h, 16384)]);
    // An anti-affinity group over three hosts: the drains must keep its members apart.
    const group: ServerGroup = {
      id: 'a0000000-0000-4000-8000-000000000001',
      name: 'db',
      policy: 'anti-affinity',
      members: [sid(1), sid(3), sid(5)],
      projectId: PROJECT,
    };
    r = await rig(
      world(
        names.map((n) => host(n)),
        servers,
        [group],
      ),
      {
        returnWhen: 'service-restart',
        webhook: helpers.hookUrl,
      },
      helpers.sshd,
    );
    await r.service.tasks.worker.start();
    const started = await r.service.tasks.maintenance.start(
      { aggregate: 'rack', parallel: 3, validate: true },
      'operator:alice',
    );
    expect(started.hosts.map((h) => h.host)).toEqual(names);
    expect(started.settings).toMatchObject({ parallel: 3, validate: true, returnWhen: 'service-restart' });
    expect(started.taskId).not.toBeNull();

    const cloud = r.sim.cloud;
    let maxOut = 0;
    let maxDisabled = 0;
    const restarting = new Set<string>();
    const final = await operate(
      started.id,
      async (h) => {
        if (h === 'm07') {
          // It comes back from its maintenance with most of its memory missing: the canary
          // finds no room, so the validation fails.
          const rp = cloud.requireHost(h).rp;
          const mem = rp.inventories.get('MEMORY_MB')!;
          rp.inventories.set('MEMORY_MB', { ...mem, total: 256 });
          rp.generation++;
        }
        if (Number(h.slice(1)) % 2 === 0) {
          // The operator's word for even hosts; odd hosts are rebooted (nova-compute down, up).
          await r!.service.tasks.maintenance.done(h, 'operator:bob');
        } else {
          cloud.requireHost(h).down = true;
          restarting.add(h);
        }
      },
      async (c) => {
        maxOut = Math.max(
          maxOut,
          c.hosts.filter((h) => ['draining', 'ready', 'returned', 'validating'].includes(h.state)).length,
        );
        // The cloud first, then the campaign: a host the cloud showed disabled was out then, or
        // has ended in a state that leaves it disabled by design (failed validation, not
        // drained, drain failed: the campaign no longer holds it and goes on) by the campaign's
        // read. (Read the other way round, a host ending so and the next one taken out in between
        // would be counted both.) Whether any host may end so here is asserted below, with why.
        const disabled = names.filter((n) => cloud.requireHost(n).status === 'disabled');
        const leftDisabled = new Set(
          (await campaign(started.id)).hosts
            .filter((h) => ['failed-validation', 'not-drained', 'drain-failed'].includes(h.state))
            .map((h) => h.host),
        );
        maxDisabled = Math.max(maxDisabled, disabled.filter((n) => !leftDisabled.has(n)).length);
        for (const h of c.hosts)
          if (restarting.has(h.host) && h.sawDownAt !== null) {
            cloud.requireHost(h.host).down = false;
            restarting.delete(h.host);
          }
      },
      240_000,
    );

    expect(final.state).toBe('DONE');
    expect(maxOut).toBe(3);
    expect(maxDisabled).toBeLessThanOrEqual(3);
    const byHost = new Map(final.hosts.map((h) => [h.host, h]));
    expect(byHost.get('m07')).toMatchObject({ state: 'failed-validation' });
    expect(byHost.get('m07')!.note).toContain('No valid host was found');
    expect(cloud.requireHost('m07').status).toBe('disabled');
    expect(cloud.requireHost('m07').disabledReason).toMatch(/^aicerine-validate: failed: /);
    for (const n of names.filter((x) => x !== 'm07')) {
      const h = byHost.get(n)!;
      expect(h.state, `${n}: ${h.note}`).toBe('done');
      expect(cloud.requireHost(n).status).toBe('enabled');
      // Timings in order: out, empty, handed over, back, re-admitted.
      const times = [h.startedAt, h.drainedAt, h.handedOverAt, h.returnedAt, h.endedAt].map((t) =>
        Date.parse(t!),
      );
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect(h.returnedBy).toBe(Number(n.slice(1)) % 2 === 0 ? 'operator:bob' : 'nova-compute restarted');
      expect(h.moved.live).toBeGreaterThan(0);
      expect(h.evacuateTask).not.toBeNull();
      expect(h.validateTask).not.toBeNull();
    }
    // Every server is still there and running, the group's members on three different hosts.
    for (const s of servers) expect(cloud.requireServer(s.id).status).toBe('ACTIVE');
    expect(new Set(group.members.map((m) => cloud.requireServer(m).host)).size).toBe(3);
    // The hand-over: one webhook event per host.
    expect(helpers.events.map((e) => e.host).sort()).toEqual(names);
    expect(
      helpers.events.every(
        (e) =>
          e.event === 'aicerine.maintenance.ready' &&
          e.campaign === started.id &&
          e.id === `maintenance-${started.id}-${e.host}` &&
          e.key === e.id,
      ),
    ).toBe(true);
    // The driver task ended with the campaign; the child tasks were asked by the campaign.
    const driver = await r.store.tasks.get(final.taskId!);
    expect(driver?.state).toBe('DONE');
    const children = (await r.store.tasks.list({ kind: 'evacuate-compute' }, { limit: 100 })).items;
    expect(children.map((t) => t.requestedBy)).toEqual(Array(12).fill(`maintenance:${started.id}`));
    const audit = (await r.store.audit.list({ actor: `task:${final.taskId}` }, { limit: 200 })).items;
    expect(audit.filter((a) => a.action === 'task.maintenance.ready')).toHaveLength(12);
    // 30 s at load average 20 on 2 cores: the default 30 s timeout is no bound there.
  }, 120_000);

  it('takes out fewer hosts than asked when the rest cannot take more, and survives a restart', async () => {
    // Four hosts of 64 GiB with 40 GiB of servers each: the other three take one host's servers,
    // two of them cannot take two hosts'.
    const names = ['c1', 'c2', 'c3', 'c4'];
    const servers = names.flatMap((h, i) => [1, 2, 3, 4, 5].map((k) => server(10 * i + k, h)));
    r = await rig(
      world(
        names.map((n) => host(n)),
        servers,
      ),
      {},
    );
    await r.service.tasks.worker.start();
    const started = await r.service.tasks.maintenance.start(
      { aggregate: 'rack', parallel: 3 },
      'operator:alice',
    );
    let maxOut = 0;
    const notes = new Set<string>();
    let restarted = false;
    const final = await operate(
      started.id,
      async (h) => {
        if (!restarted) {
          // The service stops and starts again while the first host waits for its operator.
          restarted = true;
          await r!.restart();
        }
        await r!.service.tasks.maintenance.done(h, 'operator:bob');
      },
      (c) => {
        maxOut = Math.max(
          maxOut,
          c.hosts.filter((h) => ['draining', 'ready', 'returned'].includes(h.state)).length,
        );
        if (c.note) notes.add(c.note);
      },
    );
    expect(restarted).toBe(true);
    expect(final.state).toBe('DONE');
    expect(final.hosts.map((h) => h.state)).toEqual(['done', 'done', 'done', 'done']);
    expect(maxOut).toBe(1);
    expect(
      [...notes].some((n) => /^c2 waits: the rest of rack cannot take its servers while c1 is out/.test(n)),
    ).toBe(true);
    for (const n of names) expect(r.sim.cloud.requireHost(n).status).toBe('enabled');
    // The first driver task stopped with its worker and was resumed by the new one.
    const driver = await r.store.tasks.get(final.taskId!);
    expect(driver?.state).toBe('DONE');
    expect(driver?.attempts).toBe(2);
  });

  it('takes hosts out between drains, a wave disabled at once, and sends servers to hosts already maintained', async () => {
    // Six hosts of 64 GiB, three servers of 8 GiB each, two at a time: room everywhere, so the
    // destinations are a choice, not a necessity.
    const names = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
    const servers = names.flatMap((h, i) => [1, 2, 3].map((k) => server(10 * i + k, h)));
    r = await rig(
      world(
        names.map((n) => host(n)),
        servers,
      ),
      {},
    );
    await r.service.tasks.worker.start();
    const started = await r.service.tasks.maintenance.start(
      { aggregate: 'rack', parallel: 2 },
      'operator:alice',
    );
    const cloud = r.sim.cloud;
    // Whenever a host is disabled, no other host of the campaign may be migrating servers away
    // while the newly disabled one was a pending host a moment before.
    let sawDrainWait = false;
    const final = await operate(
      started.id,
      async (h) => {
        await r!.service.tasks.maintenance.done(h, 'operator:bob');
      },
      (c) => {
        if (c.note?.includes('waits for the drain of')) sawDrainWait = true;
      },
    );
    expect(final.state).toBe('DONE');
    expect(final.hosts.map((h) => h.state)).toEqual(names.map(() => 'done'));
    // No migration was refused: no destination was disabled under a running drain.
    const live = cloud.migrations.filter((m) => m.type === 'live-migration');
    expect(
      live.filter((m) => m.status !== 'completed').map((m) => `${m.source}->${m.requestedHost} ${m.status}`),
    ).toEqual([]);
    // Each evacuation took the hosts still pending when it was asked as last resorts; after the
    // first wave some host is already maintained, and no server went to a pending host.
    const evacuations = (await r.store.tasks.list({ kind: 'evacuate-compute' }, { limit: 100 })).items;
    expect(evacuations).toHaveLength(6);
    const first = evacuations.filter((t) => ['w1', 'w2'].includes(t.hosts[0]!));
    for (const t of first) expect(t.args).toMatchObject({ lastResort: ['w3', 'w4', 'w5', 'w6'] });
    let later = 0;
    for (const t of evacuations.filter((x) => !first.includes(x))) {
      const lastResort = (t.args.lastResort as string[] | undefined) ?? [];
      for (const m of live.filter((x) => x.source === t.hosts[0])) {
        expect(lastResort, `${m.server.uuid} ${m.source} -> ${m.dest}`).not.toContain(m.dest);
        later++;
      }
    }
    expect(later).toBeGreaterThan(0);
    // Hence fewer moves than a drain to any host: each of the 18 servers moved at most twice.
    const perServer = new Map<string, number>();
    for (const m of live) perServer.set(m.server.uuid, (perServer.get(m.server.uuid) ?? 0) + 1);
    expect(Math.max(...perServer.values())).toBeLessThanOrEqual(2);
    // With two hosts out at once and operators answering at once, a host waited for a drain.
    expect(sawDrainWait).toBe(true);
  });

  it('writes the audit entry a killed run owed for a host it disabled', async () => {
    const names = ['c1', 'c2', 'c3'];
    r = await rig(
      world(
        names.map((n) => host(n)),
        names.map((h, i) => server(i + 1, h)),
      ),
      {},
    );
    const m = r.service.tasks.maintenance;
    const started = await m.start({ aggregate: 'rack', parallel: 1 }, 'operator:alice');
    // What a run killed between Nova's answer and its audit write leaves: c1 marked draining,
    // disabled in Nova with the campaign's reason, no evacuation asked, no entry.
    const at = new Date(r.sim.cloud.clock.nowMs()).toISOString();
    await mutateHost(
      r.store.maintenance,
      started.id,
      'c1',
      () => at,
      () => ({
        state: 'draining',
        startedAt: at,
        note: 'disabling',
      }),
    );
    setServiceStatus(r.sim.cloud.requireHost('c1'), 'disabled', maintenanceReason(started));
    await r.service.tasks.worker.start();
    const final = await operate(started.id, async (h) => {
      await r!.service.tasks.maintenance.done(h, 'operator:bob');
    });
    expect(final.hosts.map((h) => h.state)).toEqual(['done', 'done', 'done']);
    const audit = (await r.store.audit.list({ actor: `task:${final.taskId}` }, { limit: 200 })).items;
    const disabled = audit.filter((a) => a.action === 'task.maintenance.disabled');
    // One entry per host, c1's written by the run that found it disabled.
    expect(disabled.map((a) => a.target).sort()).toEqual(['host:c1', 'host:c2', 'host:c3']);
    const c1 = disabled.find((a) => a.target === 'host:c1')!;
    expect(JSON.stringify(c1.detail)).toContain('written by a later run');
    expect(JSON.stringify(disabled.find((a) => a.target === 'host:c2')!.detail)).not.toContain('later run');
  });

  it('refuses a campaign before touching anything: unknown names, a host whose servers do not fit, a busy aggregate', async () => {
    const servers = [server(1, 'c1', 61440), server(2, 'c2', 32768), server(3, 'c3', 32768), server(4, 'c4')];
    r = await rig(
      world(
        ['c1', 'c2', 'c3', 'c4'].map((n) => host(n)).concat([{ ...host('x1'), aggregates: ['other'] }]),
        servers,
      ),
      {},
    );
    const m = r.service.tasks.maintenance;
    await expect(m.start({ aggregate: 'nope' }, 'alice')).rejects.toMatchObject({
      status: 404,
      issues: [{ path: 'aggregate', value: 'nope' }],
    });
    await expect(m.start({ aggregate: 'rack', hosts: ['c2', 'x1'] }, 'alice')).rejects.toMatchObject({
      status: 404,
      issues: [{ path: 'hosts[1]', message: 'not in aggregate rack', value: 'x1' }],
    });
    await expect(m.start({ aggregate: 'rack', hosts: ['c2', 'c2'] }, 'alice')).rejects.toMatchObject({
      status: 400,
      issues: [{ path: 'hosts[1]', message: 'listed twice' }],
    });
    await expect(
      m.start({ aggregate: 'rack', hosts: ['c2'], validate: true }, 'alice'),
    ).rejects.toMatchObject({
      status: 409,
      issues: [{ path: 'validate' }],
    });
    r.sim.cloud.requireHost('c4').down = true;
    await expect(m.start({ aggregate: 'rack', hosts: ['c4'] }, 'alice')).rejects.toMatchObject({
      status: 409,
      issues: [{ path: 'hosts[0]', message: expect.stringContaining('nova-compute is down') }],
    });
    r.sim.cloud.requireHost('c4').down = false;
    // c1's 60 GiB server fits nowhere else (c2 and c3 have 32 GiB free, c4 56 GiB).
    const err = await m.start({ aggregate: 'rack' }, 'alice').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 409 });
    const issues = (err as { issues: { path: string; message: string; value: unknown }[] }).issues;
    expect(issues.map((i) => i.value)).toContain('c1');
    expect(issues.find((i) => i.value === 'c1')?.message).toMatch(
      /^the rest of rack cannot take its servers: c1 cannot be drained: no host can take vm-1/,
    );
    expect((await r.store.maintenance.list()).items).toEqual([]);
    expect((await r.store.tasks.list()).items).toEqual([]);
    for (const n of ['c1', 'c2', 'c3', 'c4']) expect(r.sim.cloud.requireHost(n).status).toBe('enabled');
    // One campaign per aggregate at a time.
    const first = await m.start({ aggregate: 'rack', hosts: ['c4'] }, 'alice');
    await expect(m.start({ aggregate: 'rack', hosts: ['c2'] }, 'alice')).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining(`already has an unfinished campaign (${first.id}`),
    });
  });

  it('pauses (nothing new starts, a returned host is not re-admitted), resumes, and aborts leaving hosts as they are', async () => {
    const names = ['c1', 'c2', 'c3'];
    const servers = names.flatMap((h, i) => [server(10 * i + 1, h), server(10 * i + 2, h)]);
    r = await rig(
      world(
        names.map((n) => host(n)),
        servers,
      ),
      {},
    );
    const m = r.service.tasks.maintenance;
    await r.service.tasks.worker.start();
    const c = await m.start({ aggregate: 'rack', parallel: 1 }, 'operator:alice');
    const state = async (h: string) => (await campaign(c.id)).hosts.find((x) => x.host === h)!;
    await until(async () => (await state('c1')).handedOverAt !== null, 60_000);
    expect((await state('c1')).state).toBe('ready');
    await expect(m.done('c2', 'bob')).rejects.toMatchObject({ status: 409 });
    const paused = await m.pause(c.id, 'operator:alice');
    expect(paused.state).toBe('PAUSED');
    expect(paused.note).toMatch(/^paused by operator:alice/);
    await m.done('c1', 'operator:bob');
    await expect(m.done('c1', 'operator:bob')).rejects.toMatchObject({ status: 409 });
    // Several driver passes later: back, but not re-admitted; nothing else taken out.
    await until(
      async () => (await state('c1')).note === 'back; re-admission waits for the campaign to resume',
      30_000,
    );
    await new Promise((res) => setTimeout(res, 500));
    expect((await state('c1')).state).toBe('returned');
    expect((await state('c2')).state).toBe('pending');
    expect(r.sim.cloud.requireHost('c1').status).toBe('disabled');
    expect(r.sim.cloud.requireHost('c2').status).toBe('enabled');
    await expect(m.pause(c.id, 'alice')).rejects.toMatchObject({ status: 409 });

    const resumed = await m.resume(c.id, 'operator:alice');
    expect(resumed.state).toBe('RUNNING');
    await expect(m.resume(c.id, 'alice')).rejects.toMatchObject({ status: 409 });
    await until(async () => (await state('c1')).state === 'done', 30_000);
    expect(r.sim.cloud.requireHost('c1').status).toBe('enabled');
    await until(async () => (await state('c2')).state === 'ready', 60_000);

    // Its driver task cancelled by hand: the campaign stands still until resumed with a new one.
    const first = (await campaign(c.id)).taskId!;
    await r.service.tasks.service.cancel(first, 'operator:alice');
    await until(async () => (await r!.store.tasks.get(first))!.state === 'ERROR', 30_000);
    const revived = await m.resume(c.id, 'operator:alice');
    expect(revived.taskId).not.toBe(first);
    await expect(m.resume(c.id, 'alice')).rejects.toMatchObject({ status: 409 });

    await m.abort(c.id, 'operator:alice');
    await until(async () => (await campaign(c.id)).state === 'ABORTED', 30_000);
    const ended = await campaign(c.id);
    expect(ended.hosts.map((h) => h.state)).toEqual(['done', 'aborted', 'pending']);
    expect(ended.hosts[1]!.note).toMatch(/^aborted while ready: left as it was/);
    expect(r.sim.cloud.requireHost('c2').status).toBe('disabled');
    expect(r.sim.cloud.requireHost('c2').disabledReason).toBe(
      `aicerine maintenance ${c.id} of rack (requested by operator:alice)`,
    );
    expect(r.sim.cloud.requireHost('c3').status).toBe('enabled');
    await expect(m.abort(c.id, 'alice')).rejects.toMatchObject({ status: 409 });
    await expect(m.done('c2', 'bob')).rejects.toMatchObject({ status: 404 });
  });

  it('moves on at once on what happens in its process: start, drains, done, resume and abort wake it', async () => {
    const names = ['w1', 'w2', 'w3'];
    const servers = names.flatMap((h, i) => [server(10 * i + 1, h), server(10 * i + 2, h)]);
    // The worker polls every minute and the driver every ten simulated hours (six minutes here):
    // within the test, only being woken moves the campaign.
    r = await rig(
      world(
        names.map((n) => host(n)),
        servers,
      ),
      { pollInterval: '10h' },
      null,
      { pollMs: 60_000 },
    );
    const m = r.service.tasks.maintenance;
    await r.service.tasks.worker.start();
    const c = await m.start({ aggregate: 'rack', parallel: 1 }, 'operator:alice');
    const state = async (h: string) => (await campaign(c.id)).hosts.find((x) => x.host === h)!;
    // The driver is claimed once created, the evacuation once asked, and the evacuation's end
    // wakes the driver, which hands the host over.
    await until(async () => (await state('w1')).handedOverAt !== null, 20_000);
    await m.pause(c.id, 'operator:alice');
    await m.done('w1', 'operator:bob');
    await until(
      async () => (await state('w1')).note === 'back; re-admission waits for the campaign to resume',
      20_000,
    );
    await m.resume(c.id, 'operator:alice');
    await until(async () => (await state('w1')).state === 'done', 20_000);
    expect(r.sim.cloud.requireHost('w1').status).toBe('enabled');
    await until(async () => (await state('w2')).handedOverAt !== null, 20_000);
    await m.abort(c.id, 'operator:alice');
    await until(async () => (await campaign(c.id)).state === 'ABORTED', 20_000);
    expect((await campaign(c.id)).hosts.map((h) => h.state)).toEqual(['done', 'aborted', 'pending']);
    expect((await r.store.tasks.get(c.taskId!))?.state).toBe('DONE');
  });

  it('lets the balancer refill a re-admitted host within the aggregate window', async () => {
    const loaded = (n: number, on: string) => ({ ...server(n, on), load: { cpu: 1.5, memoryMB: 6000 } });
    const names = ['b1', 'b2', 'b3', 'b4'];
    r = await rig(
      world(
        names.map((n) => host(n)),
        names.flatMap((h, i) => [1, 2, 3, 4].map((k) => loaded(4 * i + k, h))),
      ),
      {},
      null,
      {},
      { mode: 'active', windows: ['Mon-Sun 00:00 - 24:00 UTC'], cooldowns: { aggregate: '1m' } },
    );
    await r.service.tasks.worker.start();
    const started = await r.service.tasks.maintenance.start(
      { aggregate: 'rack', hosts: ['b1'] },
      'operator:alice',
    );
    const final = await operate(started.id, (h) =>
      r!.service.tasks.maintenance.done(h, 'operator:bob').then(() => {}),
    );
    expect(final.state).toBe('DONE');
    const onB1 = () => r!.sim.cloud.servers.filter((x) => x.host === 'b1').length;
    expect(onB1()).toBe(0);
    expect(r.sim.cloud.requireHost('b1').status).toBe('enabled');
    // The balancer's cycles (active, window open) move servers back onto the empty host.
    await until(async () => {
      await r!.service.runCycle();
      await r!.service.executor.idle();
      return onB1() > 0;
    }, 60_000);
    // Moved by the balancer's own executions, not by a task.
    const executions = (await r.store.executions.list({ aggregate: 'rack' })).items;
    expect(executions.some((e) => !e.startedBy.startsWith('task:'))).toBe(true);
  });

  it('keeps a host with a server that cannot move disabled and not handed over, and goes on', async () => {
    const tied = {
      ...server(1, 'c1'),
      flavor: {
        name: 'pinned',
        vcpus: 2,
        ramMB: 8192,
        diskGB: 20,
        extraSpecs: { 'hw:cpu_policy': 'dedicated' },
      },
    };
    r = await rig(
      world(
        ['c1', 'c2', 'c3'].map((n) => host(n)),
        [tied, server(2, 'c1'), server(3, 'c2')],
      ),
      {
        webhook: helpers.hookUrl,
      },
    );
    await r.service.tasks.worker.start();
    const started = await r.service.tasks.maintenance.start(
      { aggregate: 'rack', hosts: ['c1', 'c2'] },
      'operator:alice',
    );
    const final = await operate(started.id, (h) =>
      r!.service.tasks.maintenance.done(h, 'operator:bob').then(() => {}),
    );
    expect(final.state).toBe('DONE');
    const [c1, c2] = final.hosts;
    expect(c1).toMatchObject({
      host: 'c1',
      state: 'not-drained',
      handedOverAt: null,
      moved: { live: 1, cold: 0 },
    });
    expect(c1!.cannotMove).toEqual([
      { server: sid(1), name: 'vm-1', why: expect.stringContaining('may not be stopped') },
    ]);
    expect(c1!.note).toMatch(/^1 server\(s\) cannot move \(vm-1: cannot live-migrate/);
    expect(c2).toMatchObject({ host: 'c2', state: 'done' });
    expect(r.sim.cloud.requireHost('c1').status).toBe('disabled');
    expect(r.sim.cloud.requireServer(sid(1)).host).toBe('c1');
    expect(helpers.events.map((e) => e.host)).toEqual(['c2']);
  });

  it('runs two campaigns on a worker that runs one task at a time: drivers take no slot', async () => {
    const row = (n: string) => ({ ...host(n), aggregates: ['row'] });
    r = await rig(
      world([host('a1'), host('a2'), row('b1'), row('b2')], [server(1, 'a1'), server(2, 'b1')]),
      {},
      null,
      { maxRunning: 1 },
    );
    await r.service.tasks.worker.start();
    const m = r.service.tasks.maintenance;
    const one = await m.start({ aggregate: 'rack', hosts: ['a1'] }, 'operator:alice');
    const two = await m.start({ aggregate: 'row', hosts: ['b1'] }, 'operator:alice');
    const back = async (c: string) => {
      const done = await operate(c, (h) => m.done(h, 'operator:bob').then(() => {}));
      return done.hosts.map((h) => h.state);
    };
    expect(await Promise.all([back(one.id), back(two.id)])).toEqual([['done'], ['done']]);
  });
});
