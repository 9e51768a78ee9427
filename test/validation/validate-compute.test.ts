// validate-compute against the simulator (Nova/Placement/Keystone over HTTP) and a private
// sshd standing in for the canary: the preflight's refusals, both outcomes, the ways a boot or
// a login fails, and a run resumed after a stop (its canary is deleted, never left behind).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import type { ServiceConfig } from '../../src/config/types.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { COMPUTE_STATUS_DISABLED, SimCloud } from '../../src/sim/model.js';
import { ValidationCloud } from '../../src/validation/cloud.js';
import { batchNames } from '../../src/validation/names.js';
import { host, snapshot } from '../sim/fixtures.js';
import { preflight, runTask, taskRecord, validationConfig } from './context.js';
import { type PrivateSshd, startSshd } from './sshd.js';

let sshd: PrivateSshd;
let sim: SimServerHandle;
let s: CloudSession;
let cloud: ValidationCloud;
let batchSeq = 0;

const base = (extra: Record<string, unknown> = {}) => ({
  image: 'sim-image',
  flavor: 'canary-size',
  network: 'none',
  ssh: { user: sshd.user, port: sshd.port, privateKeyFile: sshd.privateKeyFile, address: '127.0.0.1' },
  check: 'echo canary-ok',
  bootTimeout: '20s',
  sshTimeout: '2s',
  checkTimeout: '10s',
  projectName: 'canary-validation',
  aggregateName: 'canary-validation',
  traitName: 'CUSTOM_CANARY_VALIDATION',
  ...extra,
});

function simHost(name: string) {
  return (
    sim.cloud.hostsByName.get(name) ??
    (() => {
      throw new Error(name);
    })()
  );
}

async function setHost(name: string, status: 'enabled' | 'disabled', reason?: string) {
  const svc = await cloud.service(name);
  if (!svc) throw new Error(name);
  await cloud.setServiceStatus(svc.id, status, reason);
}

/** Every task of a batch, one after another as the worker runs them, clean-up last. */
async function runBatch(config: ServiceConfig, raw: unknown) {
  const batch = `b${++batchSeq}`;
  const planned = await preflight(s, config, raw);
  const outcomes = [];
  for (const [i, p] of planned.filter((x) => !x.afterBatch).entries())
    outcomes.push(await runTask(s, config, taskRecord(batch, p, `t${i}`)));
  const cleanupPlan = planned.find((p) => p.afterBatch);
  if (!cleanupPlan) throw new Error('no clean-up planned');
  const cleanup = await runTask(s, config, taskRecord(batch, cleanupPlan, 'cleanup'));
  return { batch, planned, outcomes, cleanup };
}

async function expectNothingLeft(config: ServiceConfig, batch: string) {
  const v = config.validation;
  if (!v) throw new Error('no settings');
  const names = batchNames(v, batch);
  expect(await cloud.findProject(names.project)).toBeNull();
  expect(await cloud.findAggregate(names.aggregate)).toBeNull();
  expect(await cloud.findFlavor(names.flavor)).toBeNull();
  expect(sim.cloud.placement.customTraits.has(names.trait)).toBe(false);
  expect(sim.cloud.servers.filter((x) => x.name.startsWith('canary-'))).toEqual([]);
}

beforeAll(async () => {
  sshd = await startSshd();
  const snap = snapshot(
    [
      host('compute1'),
      host('compute2'),
      host('compute3'),
      host('small', {
        inventory: {
          VCPU: { total: 1, reserved: 0, allocationRatio: 1 },
          MEMORY_MB: { total: 256, reserved: 0, allocationRatio: 1 },
          DISK_GB: { total: 10, reserved: 0, allocationRatio: 1 },
        },
      }),
    ],
    [],
    { flavors: [] } as never,
  );
  const simCloud = new SimCloud(snap, { load: staticLoadModel(), clock: new SimClock({ speed: 4 }) });
  sim = await startSimServer({ cloud: simCloud, password: 'secret' });
  // As serve opens it: the tasks credential's administrative session, audited but not narrowed;
  // the canary's project session is then restricted to the tasks calls.
  s = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'validation test (simulator)'),
    credential: { kind: 'tasks', label: 'tasks (test)', restricted: false },
  });
  cloud = new ValidationCloud(s);
  // The size the canary flavor copies: a public flavor of the cloud.
  await s.nova.client.request({
    method: 'POST',
    path: '/flavors',
    headers: await s.nova.headers(),
    body: { flavor: { name: 'canary-size', vcpus: 1, ram: 512, disk: 1 } },
  });
});

afterAll(async () => {
  await sshd?.stop();
  await sim?.close();
});

beforeEach(async () => {
  for (const h of ['compute1', 'compute2', 'compute3', 'small'])
    await setHost(h, 'disabled', 'repaired, to validate');
});

afterEach(() => {
  sim.cloud.hostsByName.get('compute3')!.down = false;
});

describe('validate-compute preflight', () => {
  it('refuses malformed arguments with every wrong field', async () => {
    const config = await validationConfig(base());
    await expect(
      preflight(s, config, { hosts: ['compute1', 'bad host', 'compute1', 7], keepEnabled: 'yes', x: 1 }),
    ).rejects.toMatchObject({
      name: 'InputError',
      issues: [
        { path: 'x' },
        { path: 'hosts[1]', value: 'bad host' },
        { path: 'hosts[2]', message: 'listed twice' },
        { path: 'hosts[3]', value: 7 },
        { path: 'keepEnabled', value: 'yes' },
      ],
    });
    await expect(preflight(s, config, { hosts: [] })).rejects.toMatchObject({ issues: [{ path: 'hosts' }] });
  });

  it('refuses unknown hosts with 404, down or busy hosts with 409, and creates nothing', async () => {
    const config = await validationConfig(base());
    await expect(preflight(s, config, { hosts: ['compute1', 'nohost'] })).rejects.toMatchObject({
      status: 404,
      issues: [{ path: 'hosts[1]', value: 'nohost' }],
    });
    simHost('compute3').down = true;
    await expect(preflight(s, config, { hosts: ['compute1', 'compute3'] })).rejects.toMatchObject({
      status: 409,
      issues: [{ path: 'hosts[1]', message: 'nova-compute is down' }],
    });
    const busy = taskRecord('other', { kind: 'evacuate-compute', args: {}, hosts: ['compute2'] }, '41');
    await expect(preflight(s, config, { hosts: ['compute2'] }, [busy])).rejects.toMatchObject({
      status: 409,
      issues: [{ path: 'hosts[0]', message: 'held by evacuate-compute task 41' }],
    });
    expect(sim.keystone.projectByName('canary-validation-b1')).toBeUndefined();
    expect(sim.cloud.aggregates.filter((a) => a.name.startsWith('canary-'))).toEqual([]);
  });

  it('refuses when validation is not configured, or its image or flavor does not exist', async () => {
    const none = (await validationConfig(base())) as ServiceConfig;
    await expect(preflight(s, { ...none, validation: null }, { hosts: ['compute1'] })).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('tasks.validation'),
    });
    const wrong = await validationConfig(base({ image: 'nope', flavor: 'nope' }));
    await expect(preflight(s, wrong, { hosts: ['compute1'] })).rejects.toMatchObject({
      status: 409,
      issues: [{ path: 'tasks.validation.flavor' }, { path: 'tasks.validation.image' }],
    });
  });

  it('plans one task per host and a clean-up after the batch', async () => {
    const planned = await preflight(s, await validationConfig(base()), {
      hosts: ['compute1', 'compute2'],
      keepEnabled: true,
    });
    expect(planned).toEqual([
      { kind: 'validate-compute', args: { hosts: ['compute1'], keepEnabled: true }, hosts: ['compute1'] },
      { kind: 'validate-compute', args: { hosts: ['compute2'], keepEnabled: true }, hosts: ['compute2'] },
      { kind: 'validate-compute-cleanup', args: {}, hosts: [], afterBatch: true },
    ]);
  });
});

describe('validate-compute on the simulator', () => {
  it('passes two disabled hosts, enables them (keepEnabled), deletes the canaries and cleans the batch up', async () => {
    const config = await validationConfig(base());
    const { batch, outcomes, cleanup } = await runBatch(config, {
      hosts: ['compute1', 'compute2'],
      keepEnabled: true,
    });
    for (const [i, o] of outcomes.entries()) {
      expect(o.error).toBeNull();
      expect(o.result).toMatchObject({
        host: `compute${i + 1}`,
        passed: true,
        serviceStatus: 'enabled',
        canary: { deleted: true },
        check: { exitCode: 0, stdout: 'canary-ok\n' },
      });
      expect(o.audit.map((a) => a.action)).toEqual(['validate.passed']);
      expect(o.progress).toContain(`booting the canary onto compute${i + 1}`);
    }
    expect(simHost('compute1')).toMatchObject({ status: 'enabled', disabledReason: null });
    expect(simHost('compute1').rp.traits.has(COMPUTE_STATUS_DISABLED)).toBe(false);
    // The canaries ran on the hosts they validated, in the batch project.
    const deleted = sim.cloud.deletedServers.filter((x) => x.name.startsWith(`canary-validation-${batch}-`));
    expect(deleted.map((x) => x.host).sort()).toEqual(['compute1', 'compute2']);
    expect(cleanup.ok).toBe(true);
    expect(cleanup.result).toMatchObject({
      project: `canary-validation-${batch}`,
      aggregate: `canary-validation-${batch}`,
    });
    await expectNothingLeft(config, batch);
  });

  it("boots a new canary when nova-compute's provider refresh put the disabled trait back before the scheduler asked Placement", async () => {
    // Seen in the lab: the periodic refresh lands between the lift and the boot's scheduling,
    // so Placement offers no candidate and the canary goes to ERROR for that alone.
    sim.cloud.providerRefreshBeforeBoots.set('compute2', 1);
    const config = await validationConfig(base());
    const { batch, outcomes } = await runBatch(config, { hosts: ['compute2'], keepEnabled: true });
    expect(outcomes[0]!.error).toBeNull();
    expect(outcomes[0]!.result).toMatchObject({ host: 'compute2', passed: true, serviceStatus: 'enabled' });
    // Two canaries: the one Nova left in ERROR (deleted before the second boot) and the one that ran.
    const canaries = sim.cloud.deletedServers.filter((x) => x.name.startsWith(`canary-validation-${batch}-`));
    expect(canaries.map((x) => x.host)).toEqual(['', 'compute2']);
    await expectNothingLeft(config, batch);
  });

  it('fails a host after three boots that each met the provider refresh, and leaves its trait on', async () => {
    const config = await validationConfig(base());
    sim.cloud.providerRefreshBeforeBoots.set('compute3', 3);
    try {
      const { outcomes, batch } = await runBatch(config, { hosts: ['compute3'], keepEnabled: true });
      expect(outcomes[0]!.error).toBe(
        'compute3 failed its validation: the canary went to ERROR (attempt 3 of 3): No valid host was found.',
      );
      expect(simHost('compute3').status).toBe('disabled');
      expect(simHost('compute3').rp.traits.has(COMPUTE_STATUS_DISABLED)).toBe(true);
      await expectNothingLeft(config, batch);
    } finally {
      sim.cloud.providerRefreshBeforeBoots.clear();
    }
  });

  it('leaves a passed host disabled as the operator left it without keepEnabled; re-enables one that was enabled', async () => {
    await setHost('compute2', 'enabled');
    const config = await validationConfig(base());
    const { outcomes, batch } = await runBatch(config, { hosts: ['compute1', 'compute2'] });
    expect(outcomes.map((o) => o.ok)).toEqual([true, true]);
    expect(simHost('compute1')).toMatchObject({
      status: 'disabled',
      disabledReason: 'repaired, to validate',
    });
    expect(simHost('compute1').rp.traits.has(COMPUTE_STATUS_DISABLED)).toBe(true);
    expect(simHost('compute2')).toMatchObject({ status: 'enabled' });
    await expectNothingLeft(config, batch);
  });

  it('keeps a host whose check fails disabled with the reason, even with keepEnabled', async () => {
    const config = await validationConfig(base({ check: 'echo "no /dev/vdb" >&2; exit 2' }));
    const { outcomes, batch, cleanup } = await runBatch(config, { hosts: ['compute1'], keepEnabled: true });
    const [o] = outcomes;
    expect(o?.error).toBe('compute1 failed its validation: check exited with status 2: no /dev/vdb');
    expect(o?.result).toMatchObject({ passed: false, serviceStatus: 'disabled', canary: { deleted: true } });
    expect(o?.audit.map((a) => a.action)).toEqual(['validate.failed']);
    expect(simHost('compute1')).toMatchObject({
      status: 'disabled',
      disabledReason: 'aicerine-validate: failed: check exited with status 2: no /dev/vdb',
    });
    expect(simHost('compute1').rp.traits.has(COMPUTE_STATUS_DISABLED)).toBe(true);
    expect(cleanup.ok).toBe(true);
    await expectNothingLeft(config, batch);
  });

  it("fails a host Nova cannot boot the canary on, with Nova's fault, and disables one that was enabled", async () => {
    await setHost('small', 'enabled');
    const config = await validationConfig(base());
    const { outcomes, batch } = await runBatch(config, { hosts: ['small'], keepEnabled: true });
    expect(outcomes[0]?.error).toBe(
      'small failed its validation: the canary went to ERROR: No valid host was found.',
    );
    expect(simHost('small')).toMatchObject({
      status: 'disabled',
      disabledReason: 'aicerine-validate: failed: the canary went to ERROR: No valid host was found.',
    });
    await expectNothingLeft(config, batch);
  });

  it('fails a host whose canary does not accept the login', async () => {
    const config = await validationConfig(
      base({ ssh: { user: sshd.user, port: 1, privateKeyFile: sshd.privateKeyFile, address: '127.0.0.1' } }),
    );
    const { outcomes, batch } = await runBatch(config, { hosts: ['compute1'], keepEnabled: true });
    expect(outcomes[0]?.error).toMatch(
      /^compute1 failed its validation: ssh failed \(connect\): root@127\.0\.0\.1:1: /,
    );
    expect(simHost('compute1').disabledReason).toMatch(/^aicerine-validate: failed: ssh failed \(connect\)/);
    await expectNothingLeft(config, batch);
  });

  it('fails a host whose canary has no address when no ssh.address is set', async () => {
    const config = await validationConfig(
      base({ ssh: { user: sshd.user, port: sshd.port, privateKeyFile: sshd.privateKeyFile } }),
    );
    const { outcomes } = await runBatch(config, { hosts: ['compute1'], keepEnabled: true });
    expect(outcomes[0]?.error).toContain('the canary has no address to SSH to');
    expect(simHost('compute1').status).toBe('disabled');
  });

  it('resumes a run stopped after the boot: the old canary is deleted first, then the host passes', async () => {
    const config = await validationConfig(base());
    const planned = await preflight(s, config, { hosts: ['compute1'], keepEnabled: true });
    const stop = new AbortController();
    const task = taskRecord('resume', planned[0]!, 'r1');
    // Stop the first run as soon as the canary exists (the worker stops).
    const watcher = setInterval(() => {
      if (sim.cloud.servers.some((x) => x.name === 'canary-validation-resume-compute1'))
        stop.abort(new Error('worker stops'));
    }, 20);
    const first = await runTask(s, config, task, { signal: stop.signal });
    clearInterval(watcher);
    expect(first.ok).toBe(false);
    const firstCanary = (first.checkpoint as { serverId: string | null }).serverId;
    expect(firstCanary).toMatch(/-/);
    const second = await runTask(s, config, task, { checkpoint: first.checkpoint });
    expect(second.error).toBeNull();
    expect(second.result).toMatchObject({ passed: true, serviceStatus: 'enabled' });
    expect(sim.cloud.serversByUuid.has(firstCanary as string)).toBe(false);
    expect(sim.cloud.servers.filter((x) => x.name.startsWith('canary-'))).toEqual([]);
    const cleanup = await runTask(s, config, taskRecord('resume', planned[1]!, 'r2'));
    expect(cleanup.ok).toBe(true);
    await expectNothingLeft(config, 'resume');
  });
});
