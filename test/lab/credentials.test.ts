// Application credentials restricted by the access rules `aicerine credentials` generates:
// the reader records the whole lab and nothing more; the actuator migrates and nothing more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudConfig } from '../../src/cloud/auth/config.js';
import { accessRules, type CredentialKind, prefixesFromCatalog } from '../../src/cloud/credentials.js';
import { isCloudError } from '../../src/cloud/errors.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { adminSession, bootServers, cleanupLab, uniqueName } from './lab.js';

const P = uniqueName('cred');
let admin: CloudSession;
let userId: string;
const created: string[] = [];

async function identity(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await admin
    .service('identity')
    .request({ method, path, ...(body === undefined ? {} : { body }) });
  return res.body;
}

async function createCredential(kind: CredentialKind): Promise<CloudSession> {
  const prefixes = await prefixesFromCatalog((t) => admin.service(t).endpoint());
  const body = (await identity('POST', `/users/${userId}/application_credentials`, {
    application_credential: {
      name: `${P}-${kind}-${created.length}`,
      access_rules: accessRules(kind, prefixes),
    },
  })) as { application_credential: { id: string; secret: string } };
  created.push(body.application_credential.id);
  const config: CloudConfig = {
    name: `${P}-${kind}`,
    method: 'application-credential',
    auth: {
      authUrl: admin.config.auth.authUrl,
      applicationCredentialId: body.application_credential.id,
      applicationCredentialSecret: body.application_credential.secret,
    },
    interface: admin.config.interface,
    ...(admin.config.regionName ? { regionName: admin.config.regionName } : {}),
    insecure: false,
    origin: 'lab test',
  };
  return openSession({ config });
}

beforeAll(async () => {
  admin = await adminSession();
  const tok = await admin.token();
  if (!tok.userId) throw new Error('lab: admin token has no user id');
  userId = tok.userId;
  await bootServers(admin, [{ name: `${P}-vm`, host: 'compute1', flavor: 'm1.tiny' }]);
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

describe('application credentials with the generated access rules', () => {
  it('lets the reader record the whole cloud', async () => {
    const reader = await createCredential('reader');
    expect((await reader.token()).applicationCredentialId).toBe(created.at(-1));
    const { snapshot, warnings } = await recordSnapshot(reader, { neutron: 'auto' });
    expect(snapshot.hosts.length).toBeGreaterThanOrEqual(2);
    expect(snapshot.servers.some((x) => x.name === `${P}-vm`)).toBe(true);
    expect(warnings.filter((w) => /not readable/.test(w))).toEqual([]);
  });

  it('has Keystone refuse the reader a call outside its rules', async () => {
    const reader = await createCredential('reader');
    const vm = (await admin.nova.listServers()).find((x) => x.name === `${P}-vm`);
    if (!vm) throw new Error('test server missing');
    const migrate = await reader.nova.liveMigrate(vm.id, 'compute2').catch((e: unknown) => e);
    expect(isCloudError(migrate, 'auth')).toBe(true);
    expect(isCloudError(migrate) && migrate.status).toBe(401);
    const flavors = await reader.nova.client
      .request({ method: 'GET', path: '/flavors' })
      .catch((e: unknown) => e);
    expect(isCloudError(flavors, 'auth')).toBe(true);
    // The server did not move.
    expect((await admin.nova.getServer(vm.id)).host).toBe('compute1');
  });

  it('lets the actuator live-migrate (the reader follows), and refuses it every read', async () => {
    const actuator = await createCredential('actuator');
    const reader = await createCredential('reader');
    const vm = (await admin.nova.listServers()).find((x) => x.name === `${P}-vm`);
    if (!vm) throw new Error('test server missing');
    const since = new Date();
    await actuator.nova.liveMigrate(vm.id, 'compute2');
    const m = await reader.nova.followLiveMigration(vm.id, { since, pollMs: 500, timeoutMs: 90_000 });
    expect(m.status).toBe('completed');
    const list = await actuator.nova.listServers().catch((e: unknown) => e);
    expect(isCloudError(list, 'auth')).toBe(true);
    const follow = await actuator.nova.listMigrations({ serverId: vm.id }).catch((e: unknown) => e);
    expect(isCloudError(follow, 'auth')).toBe(true);
    const rps = await actuator.placement.listResourceProviders().catch((e: unknown) => e);
    expect(isCloudError(rps, 'auth')).toBe(true);
  });
});
