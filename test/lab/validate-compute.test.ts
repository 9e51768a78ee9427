// validate-compute against the real lab, on compute6 only: the canary is booted onto the
// DISABLED host (forced host, COMPUTE_STATUS_DISABLED lifted for the boot, the batch trait
// required by the private flavor), a local sshd stands in for the guest (the fake driver has no
// network), and the check passes (host enabled) or fails (host stays disabled with the reason).
// compute6 is left enabled, and everything created is prefixed `canary-`.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import type { ServiceConfig } from '../../src/config/types.js';
import { ValidationCloud } from '../../src/validation/cloud.js';
import { batchNames } from '../../src/validation/names.js';
import { preflight, runTask, taskRecord, validationConfig } from '../validation/context.js';
import { type PrivateSshd, startSshd } from '../validation/sshd.js';

const HOST = 'compute6';
let s: CloudSession;
let cloud: ValidationCloud;
let sshd: PrivateSshd;

const settings = (check: string) => ({
  image: 'lab-image',
  flavor: 'm1.tiny',
  network: 'none',
  ssh: { user: sshd.user, port: sshd.port, privateKeyFile: sshd.privateKeyFile, address: '127.0.0.1' },
  check,
  bootTimeout: '90s',
  sshTimeout: '10s',
  checkTimeout: '20s',
  projectName: 'canary-validation',
  aggregateName: 'canary-validation',
  traitName: 'CUSTOM_CANARY_VALIDATION',
});

async function disableHost(reason: string): Promise<void> {
  const svc = await cloud.service(HOST);
  if (!svc) throw new Error(`lab: no ${HOST}`);
  await cloud.setServiceStatus(svc.id, 'disabled', reason);
}

/** Nothing of the batch is left: no project, aggregate, flavor, trait. */
async function expectBatchGone(batch: string, config: ServiceConfig): Promise<void> {
  const v = config.validation;
  if (!v) throw new Error('no validation settings');
  const names = batchNames(v, batch);
  expect(await cloud.findProject(names.project)).toBeNull();
  expect(await cloud.findAggregate(names.aggregate)).toBeNull();
  expect(await cloud.findFlavor(names.flavor)).toBeNull();
  expect(await cloud.providersWithTrait(names.trait)).toEqual([]);
  const traits = await s.placement.client.request({
    method: 'GET',
    path: `/traits/${names.trait}`,
    headers: await s.placement.headers(),
    accept: [404],
  });
  expect(traits.status).toBe(404);
}

/** Runs a whole batch the way the worker would: host tasks, then the clean-up. */
async function runBatch(config: ServiceConfig, raw: unknown) {
  const batch = `canary-${randomBytes(3).toString('hex')}`;
  const planned = await preflight(s, config, raw);
  const hostTasks = planned.filter((p) => !p.afterBatch);
  const outcomes = [];
  for (const [i, p] of hostTasks.entries())
    outcomes.push(await runTask(s, config, taskRecord(batch, p, `t${i}`)));
  const cleanupPlan = planned.find((p) => p.afterBatch);
  if (!cleanupPlan) throw new Error('no clean-up task planned');
  const cleanup = await runTask(s, config, taskRecord(batch, cleanupPlan, 'cleanup'));
  return { batch, planned, outcomes, cleanup };
}

beforeAll(async () => {
  // As serve opens the tasks credential: audited, not narrowed; the canary's project session
  // is the restricted one.
  s = await openSession({
    load: { env: { ...process.env, OS_CLOUD: '' } },
    credential: { kind: 'tasks', label: 'tasks (lab test)', restricted: false },
  });
  cloud = new ValidationCloud(s);
  sshd = await startSshd();
});

afterAll(async () => {
  await sshd?.stop();
  if (!s) return;
  // Leave compute6 enabled, and nothing prefixed canary- behind.
  const svc = await cloud.service(HOST);
  if (svc && svc.status !== 'enabled') await cloud.setServiceStatus(svc.id, 'enabled');
  for (const x of (await s.nova.listServers()).filter((y) => y.name.startsWith('canary-')))
    await cloud.deleteServer(x.id);
  for (const a of (await s.nova.listAggregates()).filter((y) => y.name.startsWith('canary-')))
    await cloud.deleteAggregate(a);
});

describe('validate-compute against the lab', () => {
  it('refuses a malformed, an unknown host before anything is created', async () => {
    const config = await validationConfig(settings('true'));
    await expect(preflight(s, config, { hosts: ['compute6', 'bad host!'] })).rejects.toMatchObject({
      name: 'InputError',
      issues: [{ path: 'hosts[1]' }],
    });
    await expect(preflight(s, config, { hosts: ['compute6', 'canary-nohost'] })).rejects.toMatchObject({
      status: 404,
      issues: [{ path: 'hosts[1]', value: 'canary-nohost' }],
    });
  });

  it('passes a disabled host whose check succeeds, enables it (keepEnabled) and cleans the batch up', async () => {
    const config = await validationConfig(settings('echo canary-ok; uname -s'));
    await disableHost('canary-test: repaired, to validate');
    const { batch, planned, outcomes, cleanup } = await runBatch(config, {
      hosts: [HOST],
      keepEnabled: true,
    });
    expect(planned.map((p) => p.kind)).toEqual(['validate-compute', 'validate-compute-cleanup']);
    const [o] = outcomes;
    expect(o?.error).toBeNull();
    expect(o?.result).toMatchObject({
      host: HOST,
      passed: true,
      reason: 'check passed',
      serviceStatus: 'enabled',
      canary: { deleted: true },
      check: { exitCode: 0, stdout: 'canary-ok\nLinux\n' },
    });
    const svc = await cloud.service(HOST);
    expect(svc).toMatchObject({ status: 'enabled', disabledReason: null });
    const canaryId = (o?.result as { canary: { id: string } } | undefined)?.canary.id ?? '';
    expect(canaryId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await cloud.getServer(canaryId)).toBeNull();
    // The host left the batch's trait and COMPUTE_STATUS_DISABLED is gone with the enable.
    const rp = await cloud.providerOfHost(HOST);
    const traits = await s.placement.getTraits(rp);
    expect(traits.filter((t) => t.startsWith('CUSTOM_CANARY'))).toEqual([]);
    expect(cleanup.ok).toBe(true);
    await expectBatchGone(batch, config);
  });

  it('fails a host whose check fails: it stays disabled with the reason, even with keepEnabled', async () => {
    const config = await validationConfig(settings('echo "canary check: /dev/vdb missing" >&2; exit 4'));
    await disableHost('canary-test: repaired, to validate');
    const { batch, outcomes, cleanup } = await runBatch(config, { hosts: [HOST], keepEnabled: true });
    const [o] = outcomes;
    expect(o?.ok).toBe(false);
    expect(o?.error).toBe(
      `${HOST} failed its validation: check exited with status 4: canary check: /dev/vdb missing`,
    );
    expect(o?.result).toMatchObject({ passed: false, serviceStatus: 'disabled', canary: { deleted: true } });
    const svc = await cloud.service(HOST);
    expect(svc?.status).toBe('disabled');
    expect(svc?.disabledReason).toBe(
      'aicerine-validate: failed: check exited with status 4: canary check: /dev/vdb missing',
    );
    const canaryId = (o?.result as { canary: { id: string } } | undefined)?.canary.id ?? '';
    expect(await cloud.getServer(canaryId)).toBeNull();
    // Disabled again: the provider carries COMPUTE_STATUS_DISABLED, as nova-compute set it.
    expect(await s.placement.getTraits(await cloud.providerOfHost(HOST))).toContain(
      'COMPUTE_STATUS_DISABLED',
    );
    expect(cleanup.ok).toBe(true);
    await expectBatchGone(batch, config);
  });
});
