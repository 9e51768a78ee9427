// The service's split of credentials against the lab: the executor and the ratio writer run with
// a reader and an actuator application credential, each restricted by the access rules
// `aicerine credentials` generates. One full cycle (record, plan, live migration, prevention
// write) is recorded at the HTTP level; every request the actuator made must match one of its
// rules and succeed, Keystone must refuse the actuator a read and the reader a migration, and no
// secret or token may appear in what was logged or audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import type { CloudConfig } from '../../src/cloud/auth/config.js';
import { checkCredentials } from '../../src/cloud/credential-check.js';
import {
  type AccessRule,
  accessRuleMatches,
  accessRules,
  type CredentialKind,
  prefixesFromCatalog,
} from '../../src/cloud/credentials.js';
import { isCloudError } from '../../src/cloud/errors.js';
import type { CallRecord } from '../../src/cloud/http/service-client.js';
import { createLogger } from '../../src/cloud/log.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { Executor } from '../../src/executor/index.js';
import { MemoryJournal } from '../../src/executor/memory-journal.js';
import { OpenStackExecutorCloud } from '../../src/executor/openstack-cloud.js';
import { systemClock } from '../../src/executor/ports.js';
import { resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';
import { InMemoryRatioChangeSink } from '../../src/prevention/sink.js';
import { RatioWriter } from '../../src/prevention/writer.js';
import { auditCalls } from '../../src/service/call-audit.js';
import type { NewAuditEntry } from '../../src/store/audit.js';
import { adminSession, bootServers, cleanupLab } from './lab.js';

// This file's own prefix: servers and application credentials it creates start with it.
const P = `creds-${Date.now().toString(36)}`;
const HOSTS = ['compute1', 'compute2', 'compute3', 'compute4'];
let admin: CloudSession;
let userId: string;
const created: string[] = [];
const secrets: string[] = [];
let rules: Record<CredentialKind, AccessRule[]>;
let vmId: string;
/** The paths of the endpoints: their version documents are read without a token. */
let roots: string[];

async function credentialConfig(kind: CredentialKind): Promise<CloudConfig> {
  const res = await admin.service('identity').request({
    method: 'POST',
    path: `/users/${userId}/application_credentials`,
    body: { application_credential: { name: `${P}-${kind}-${created.length}`, access_rules: rules[kind] } },
  });
  const ac = (res.body as { application_credential: { id: string; secret: string } }).application_credential;
  created.push(ac.id);
  secrets.push(ac.secret);
  return {
    name: `${P}-${kind}`,
    method: 'application-credential',
    auth: {
      authUrl: admin.config.auth.authUrl,
      applicationCredentialId: ac.id,
      applicationCredentialSecret: ac.secret,
    },
    interface: admin.config.interface,
    ...(admin.config.regionName ? { regionName: admin.config.regionName } : {}),
    insecure: false,
    origin: 'lab test',
  };
}

beforeAll(async () => {
  admin = await adminSession();
  const tok = await admin.token();
  if (!tok.userId) throw new Error('lab: admin token has no user id');
  userId = tok.userId;
  const prefixes = await prefixesFromCatalog((t) => admin.service(t).endpoint());
  roots = [prefixes.compute, prefixes.placement].map((p) => p || '/');
  rules = {
    reader: accessRules('reader', prefixes),
    actuator: accessRules('actuator', prefixes),
    tasks: accessRules('tasks', prefixes),
  };
  const [vm] = await bootServers(admin, [{ name: `${P}-vm`, host: 'compute1', flavor: 'm1.tiny' }]);
  if (!vm) throw new Error('lab: test server not booted');
  vmId = vm.id;
});

afterAll(async () => {
  if (!admin) return;
  for (const id of created) {
    await admin
      .service('identity')
      .request({ method: 'DELETE', path: `/users/${userId}/application_credentials/${id}`, accept: [404] });
  }
  await cleanupLab(admin, P);
});

describe('the service with restricted reader and actuator application credentials', () => {
  it('runs a full cycle: every actuator request matches one of its rules and succeeds; nothing leaks', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    const calls: CallRecord[] = [];
    const audit: NewAuditEntry[] = [];
    const audited = auditCalls(
      {
        record: async (e) => {
          audit.push(e);
          return {
            ...e,
            id: String(audit.length),
            credential: e.credential ?? null,
            detail: e.detail ?? null,
          };
        },
      },
      logger,
    );
    const reader = await openSession({
      config: await credentialConfig('reader'),
      logger,
      credential: { kind: 'reader', label: 'reader (lab)' },
    });
    const actuator = await Actuator.open({
      config: await credentialConfig('actuator'),
      logger,
      credential: {
        label: 'actuator (lab)',
        observe: async (c) => {
          calls.push(c);
          await audited(c);
        },
      },
    });

    // Record: the reader reads everything.
    const { snapshot } = await recordSnapshot(reader, { neutron: 'auto' });
    const vm = snapshot.servers.find((s) => s.id === vmId);
    expect(vm?.host).toBe('compute1');
    // Plan: one move of our server to the least loaded of our hosts.
    const to =
      HOSTS.filter((h) => h !== vm?.host)
        .map((h) => ({ h, n: snapshot.servers.filter((s) => s.host === h).length }))
        .sort((a, b) => a.n - b.n)[0]?.h ?? 'compute2';
    // Migrate: pre-flight and follow with the reader, the migration itself with the actuator.
    const settings = resolveExecutorSettings({ pollSeconds: 1, settleSeconds: 1 });
    const ex = new Executor({
      journal: new MemoryJournal(),
      cloud: new OpenStackExecutorCloud(reader, actuator),
      clock: systemClock,
      settings,
      slots: new MigrationSlots(settings.limits),
      timeoutFor: () => 150,
    });
    const s = await ex.start(
      {
        aggregate: 'lab',
        planId: null,
        startedBy: 'lab test',
        moves: [{ step: 1, wave: 1, serverId: vmId, from: 'compute1', to, estimatedSeconds: 20 }],
      },
      { deadline: null, shouldStop: () => false },
    );
    expect(s.moves[0]).toMatchObject({ state: 'completed' });
    expect((await admin.nova.getServer(vmId)).host).toBe(to);

    // Prevention: a ratio write on the destination (generation read by the reader), then put back.
    const rp = (await reader.placement.listResourceProviders({ name: to }))[0];
    if (!rp) throw new Error(`lab: no resource provider ${to}`);
    const original = (await reader.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio ?? 4;
    const writer = new RatioWriter({
      placement: reader.placement,
      actuator,
      sink: new InMemoryRatioChangeSink(),
      now: () => new Date(),
    });
    const lowered = original - 0.5;
    const decision = (from: number, ratio: number) => ({
      host: to,
      rpUuid: rp.uuid,
      action: ratio < from ? ('lower' as const) : ('raise' as const),
      code: 'lower-hot' as const,
      from,
      to: ratio,
      reason: `lab test ${from} -> ${ratio}`,
    });
    try {
      expect((await writer.apply(decision(original, lowered), 'lab')).outcome).toBe('written');
    } finally {
      await writer.apply(decision(lowered, original), 'lab');
    }
    expect((await reader.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio).toBe(original);

    // The actuator's HTTP log: live migration and inventory writes, each within a rule, each 2xx.
    expect(calls.map((c) => `${c.method} ${c.service}`)).toEqual(
      expect.arrayContaining(['POST compute', 'PUT placement']),
    );
    for (const c of calls) {
      expect(
        rules.actuator.some((r) => accessRuleMatches(r, c.service, c.method, c.path)),
        `${c.method} ${c.path}`,
      ).toBe(true);
      expect(c.status, `${c.method} ${c.path}`).toBeGreaterThanOrEqual(200);
      expect(c.status, `${c.method} ${c.path}`).toBeLessThan(300);
    }
    // The debug log says which credential made each request. Every actuator line is one of its
    // calls (matching a rule) or a version document read without a token (microversions).
    const actuatorLines = lines
      .filter((l) => l.includes('"credential":"actuator (lab)"'))
      .map((l) => /^\[debug\] (\w+) (\S+) -> (\d+)/.exec(l))
      .filter((m) => m !== null)
      .map((m) => ({ method: m[1] as string, path: new URL((m[2] as string).replace(/\?…$/, '')).pathname }))
      .filter((r) => !r.path.endsWith('/auth/tokens'));
    const withToken = actuatorLines.filter(
      (r) => !(r.method === 'GET' && roots.includes(r.path.replace(/\/$/, '') || '/')),
    );
    expect(withToken.length).toBe(calls.length);
    for (const r of withToken)
      expect(
        rules.actuator.some((rule) => accessRuleMatches(rule, rule.service, r.method, r.path)),
        `${r.method} ${r.path}`,
      ).toBe(true);
    expect(lines.some((l) => l.includes('"credential":"reader (lab)"'))).toBe(true);
    // Audit: one entry per actuator call, naming the credential, never a secret or token.
    expect(audit.map((a) => a.target)).toEqual(calls.map((c) => `${c.service}:${c.method} ${c.path}`));
    expect(audit.every((a) => a.credential === 'actuator (lab)')).toBe(true);
    const tokens = [(await reader.token()).token, (await actuator.whoami()).token];
    const emitted = JSON.stringify({ lines, audit, calls, summary: s });
    for (const secret of [...secrets, ...tokens]) expect(emitted.includes(secret)).toBe(false);
  });

  it('has Keystone refuse the actuator a read and the reader a migration (401), and the server stays', async () => {
    // Plain sessions with the same credentials: no local refusal, so what refuses is Keystone.
    const actuator = await openSession({ config: await credentialConfig('actuator') });
    const reader = await openSession({ config: await credentialConfig('reader') });
    const host = (await admin.nova.getServer(vmId)).host ?? 'compute1';
    const list = await actuator.nova.listServers().catch((e: unknown) => e);
    expect(isCloudError(list, 'auth') && [401, 403].includes(list.status ?? 0)).toBe(true);
    const rps = await actuator.placement.listResourceProviders().catch((e: unknown) => e);
    expect(isCloudError(rps, 'auth') && [401, 403].includes(rps.status ?? 0)).toBe(true);
    const to = HOSTS.find((h) => h !== host) ?? 'compute2';
    const migrate = await reader.nova.liveMigrate(vmId, to).catch((e: unknown) => e);
    expect(isCloudError(migrate, 'auth') && [401, 403].includes(migrate.status ?? 0)).toBe(true);
    const write = await reader.placement
      .updateInventory(
        (await admin.placement.listResourceProviders({ name: host }))[0]?.uuid ?? '',
        'VCPU',
        (i) => ({
          ...i,
          reserved: i.reserved + 1,
        }),
      )
      .catch((e: unknown) => e);
    expect(isCloudError(write, 'auth') && [401, 403].includes(write.status ?? 0)).toBe(true);
    expect((await admin.nova.getServer(vmId)).host).toBe(host);
  });

  it('refuses locally, before sending, a write through a reader session', async () => {
    const reader = await openSession({
      config: await credentialConfig('reader'),
      credential: { kind: 'reader', label: 'reader (lab)' },
    });
    const moved = await reader.nova.liveMigrate(vmId, 'compute2').catch((e: unknown) => e);
    expect(isCloudError(moved, 'not-allowed')).toBe(true);
    const before = reader.stats.total;
    await reader.nova.listServices('nova-compute');
    expect(reader.stats.total).toBe(before + 1);
  });

  it('passes check: each credential authenticates, is restricted by its rules, and they cover every call', async () => {
    const results = await checkCredentials(
      (['reader', 'actuator'] as const).map((kind) => ({
        kind,
        label: kind,
        open: async () =>
          openSession({ config: await credentialConfig(kind), credential: { kind, label: kind } }),
      })),
    );
    const status = Object.fromEntries(results.map((r) => [r.id, r.status]));
    expect(status).toMatchObject({
      'credential-reader-authenticates': 'ok',
      'credential-reader-restricted': 'ok',
      'credential-reader-covers': 'ok',
      'credential-actuator-authenticates': 'ok',
      'credential-actuator-restricted': 'ok',
      'credential-actuator-covers': 'ok',
    });
    // Made by the lab's admin user, the credentials carry admin: reported, contained by the rules.
    expect(results.find((r) => r.id === 'credential-actuator-roles')?.details).toEqual([
      'also holds admin (it needs only aicerine-actuator)',
    ]);
  });
});
