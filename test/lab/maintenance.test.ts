// Rolling maintenance on the real lab (docs/maintenance.md): a two-host round over compute3 and
// compute4 in an aggregate of this test's own with compute1 and compute2, one host at a time. The
// servers this test boots on compute3 and compute4 are drained live and cold (a stopped one), each
// host is handed over (a command records it), the operator says done, and the host is validated
// (a canary booted onto it while still disabled; a local sshd stands in for the guest, as in
// validate-compute.test.ts) and re-admitted.
// compute5 and compute6 belong to other suites. Everything created has the prefix `maint-`;
// compute3 and compute4 are enabled again after the test whatever happened.

import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/executor/ports.js';
import type { Campaign } from '../../src/maintenance/types.js';
import { AicerineService } from '../../src/service/service.js';
import { openStore, type Store } from '../../src/store/store.js';
import { type PrivateSshd, startSshd } from '../validation/sshd.js';
import { adminSession, bootServers, cleanupLab, createAggregate, labEnv, waitFor } from './lab.js';

const PREFIX = 'maint-';
const HOSTS = ['compute3', 'compute4'];
const OTHERS = ['compute1', 'compute2'];
const unique = (what: string) => `${PREFIX}${what}-${randomBytes(3).toString('hex')}`;

let admin: CloudSession;
let dir: string;
let store: Store | undefined;
let service: AicerineService | undefined;
let sshd: PrivateSshd | undefined;

async function enableHosts(): Promise<void> {
  for (const host of HOSTS) {
    const [svc] = await admin.nova.listServices('nova-compute', host);
    if (svc && svc.status !== 'enabled') await admin.nova.setServiceStatus(svc.id, 'enabled');
  }
}

beforeAll(async () => {
  labEnv('OS_AUTH_URL');
  admin = await adminSession();
  dir = await mkdtemp(join(tmpdir(), 'aic-lab-maint-'));
  await cleanupLab(admin, PREFIX);
  await enableHosts();
  sshd = await startSshd();
});

afterAll(async () => {
  await sshd?.stop();
  await service?.tasks.worker.stop();
  await service?.stop();
  await store?.close();
  await cleanupLab(admin, PREFIX);
  await enableHosts();
  await rm(dir, { recursive: true, force: true });
});

describe('rolling maintenance on the lab', () => {
  it('takes compute3, then compute4, out, hands each over, and validates and re-admits it when the operator says done', async () => {
    const aggregate = unique('agg');
    await createAggregate(admin, aggregate, [...OTHERS, ...HOSTS]);
    const servers = await bootServers(admin, [
      { name: unique('live'), host: 'compute3', flavor: 'm1.tiny' },
      { name: unique('cold'), host: 'compute3', flavor: 'm1.tiny' },
      { name: unique('live'), host: 'compute4', flavor: 'm1.tiny' },
    ]);
    const cold = servers[1]!;
    await admin.nova.client.request({
      method: 'POST',
      path: `/servers/${cold.id}/action`,
      headers: await admin.nova.headers(),
      body: { 'os-stop': null },
    });
    await waitFor('the cold server to stop', async () =>
      (await admin.nova.getServer(cold.id)).status === 'SHUTOFF' ? true : undefined,
    );

    const handedOver = join(dir, 'handed-over');
    const { config } = await parseServiceConfig(
      {
        openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
        store: { url: 'sqlite:maint.db' },
        defaults: { mode: 'observe', concurrency: { perSourceHost: 2, perAggregate: 4 } },
        maintenance: {
          pollInterval: '1s',
          command: ['/bin/sh', '-c', `echo "$AICERINE_CAMPAIGN $AICERINE_HOST" >> ${handedOver}`],
        },
        tasks: {
          validation: {
            image: 'lab-image',
            flavor: 'm1.tiny',
            network: 'none',
            ssh: {
              user: sshd!.user,
              port: sshd!.port,
              privateKeyFile: sshd!.privateKeyFile,
              address: '127.0.0.1',
            },
            check: 'echo canary-ok',
            bootTimeout: '90s',
            sshTimeout: '10s',
            checkTimeout: '20s',
            projectName: 'maint-validation',
            aggregateName: 'maint-validation',
            traitName: 'CUSTOM_MAINT_VALIDATION',
          },
        },
      },
      { baseDir: dir },
    );
    store = await openStore({ kind: 'sqlite', path: join(dir, 'maint.db') });
    service = new AicerineService({
      config,
      store,
      reader: admin,
      actuator: await Actuator.open({ config: admin.config, credential: { label: 'actuator (lab test)' } }),
      tasksSession: admin,
      clock: systemClock,
      logger: silentLogger,
      tasks: { worker: { pollMs: 500, heartbeatMs: 2000 } },
    });
    const m = service.tasks.maintenance;
    const started = await m.start({ aggregate, hosts: HOSTS, parallel: 1, validate: true }, 'operator:lab');
    await service.tasks.worker.start();

    let maxOut = 0;
    const seenReady = new Set<string>();
    const final = await waitFor(
      'the campaign to end',
      async (): Promise<Campaign | undefined> => {
        const c = (await store!.maintenance.get(started.id))!;
        maxOut = Math.max(
          maxOut,
          c.hosts.filter((h) => ['draining', 'ready', 'returned'].includes(h.state)).length,
        );
        for (const h of c.hosts)
          if (h.state === 'ready' && h.handedOverAt !== null && !seenReady.has(h.host)) {
            seenReady.add(h.host);
            // Handed over: disabled with the campaign's reason, and empty.
            const [svc] = await admin.nova.listServices('nova-compute', h.host);
            expect(svc?.status).toBe('disabled');
            expect(svc?.disabledReason).toBe(
              `aicerine maintenance ${started.id} of ${aggregate} (requested by operator:lab)`,
            );
            expect(await admin.nova.listServers({ host: h.host })).toEqual([]);
            await m.done(h.host, 'operator:lab');
          }
        return c.state === 'DONE' || c.state === 'ABORTED' ? c : undefined;
      },
      600_000,
    );

    expect(final.state).toBe('DONE');
    expect(maxOut).toBe(1);
    expect(final.hosts.map((h) => [h.host, h.state])).toEqual([
      ['compute3', 'done'],
      ['compute4', 'done'],
    ]);
    for (const h of final.hosts) {
      expect(h.note).toMatch(/^passed validation \(task \d+\) and re-admitted/);
      expect(h.validateTask).not.toBeNull();
    }
    expect(final.hosts[0]!.moved).toEqual({ live: 1, cold: 1 });
    expect(final.hosts[1]!.moved).toEqual({ live: 1, cold: 0 });
    // compute4 was taken out only once compute3 was back.
    expect(Date.parse(final.hosts[1]!.startedAt!)).toBeGreaterThanOrEqual(
      Date.parse(final.hosts[0]!.endedAt!),
    );
    for (const host of HOSTS) {
      const [svc] = await admin.nova.listServices('nova-compute', host);
      expect(svc?.status).toBe('enabled');
    }
    for (const s of servers) {
      const now = await admin.nova.getServer(s.id);
      expect([...OTHERS, ...HOSTS]).toContain(now.host);
      expect(now.status).toBe(s.id === cold.id ? 'SHUTOFF' : 'ACTIVE');
    }
    expect((await readFile(handedOver, 'utf8')).trim().split('\n')).toEqual(
      HOSTS.map((h) => `${started.id} ${h}`),
    );
    expect(final.hosts.every((h) => h.handover.command?.startsWith('exit 0'))).toBe(true);
    // The validations' batch clean-ups end too (nothing of them is left in the lab).
    await waitFor(
      'every task to end',
      async () => ((await store!.tasks.unfinished()).length === 0 ? true : undefined),
      180_000,
    );
    const cleanups = (await store.tasks.list({ kind: 'validate-compute-cleanup' })).items;
    expect(cleanups.map((t) => t.state)).toEqual(['DONE', 'DONE']);
  });
});
