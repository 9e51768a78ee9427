// The generated policy.yaml, installed into the lab's Nova and Placement, lets users holding
// only the dedicated roles make Aicerine's calls; and it shows Nova's own limit: a non-admin
// context only ever finds servers of its own project when acting on one.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { CloudConfig } from '../../src/cloud/auth/config.js';
import { policyJson, policyRules } from '../../src/cloud/credentials.js';
import { isCloudError } from '../../src/cloud/errors.js';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { updateInventory } from '../../src/cloud/openstack/placement.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { adminSession, bootServers, cleanupLab, labEnv, uniqueName } from './lab.js';

const P = uniqueName('pol');
const roles = { reader: `${P}-reader`, actuator: `${P}-actuator` };
const password = randomBytes(12).toString('hex');
let admin: CloudSession;
let demo: CloudSession;
const made: { users: string[]; roles: string[] } = { users: [], roles: [] };
const policyFiles: { path: string; before: string | undefined }[] = [];
let own: NovaServer;
let foreign: NovaServer;

async function identity(
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, Record<string, string>>> {
  const res = await admin
    .service('identity')
    .request({ method, path, ...(body === undefined ? {} : { body }) });
  return res.body as Record<string, Record<string, string>>;
}

const usersByRole = new Map<string, Promise<CloudSession>>();

/** One user per role for the whole file (the role and user are made once). */
function userWithRole(role: string): Promise<CloudSession> {
  let user = usersByRole.get(role);
  if (!user) {
    user = makeUserWithRole(role);
    usersByRole.set(role, user);
  }
  return user;
}

async function makeUserWithRole(role: string): Promise<CloudSession> {
  const roleId = (await identity('POST', '/roles', { role: { name: role } })).role?.id ?? '';
  made.roles.push(roleId);
  const name = `${role}-user`;
  const userId =
    (await identity('POST', '/users', { user: { name, password, domain_id: 'default' } })).user?.id ?? '';
  made.users.push(userId);
  const projectId = (await admin.token()).projectId;
  await identity('PUT', `/projects/${projectId}/users/${userId}/roles/${roleId}`);
  const config: CloudConfig = {
    name,
    method: 'password',
    auth: {
      authUrl: admin.config.auth.authUrl,
      username: name,
      password,
      userDomainName: 'Default',
      projectId: projectId ?? '',
    },
    interface: admin.config.interface,
    ...(admin.config.regionName ? { regionName: admin.config.regionName } : {}),
    insecure: false,
    origin: 'lab policy test',
  };
  return openSession({ config });
}

/**
 * Merges rules into a service's policy file. The file is never deleted afterwards: a running
 * service that has loaded a policy file answers 500 to everything once it disappears, so the
 * original content (or an empty `{}`) is written back instead.
 */
async function install(
  service: 'nova' | 'placement',
  file: string,
  rules: Record<string, string>,
): Promise<void> {
  const path = join(labEnv('OSLAB_STATE'), 'etc', service, file);
  const before = await readFile(path, 'utf8').catch(() => undefined);
  policyFiles.push({ path, before });
  const current = (before ? parseYaml(before) : {}) as Record<string, string> | null;
  await writeFile(path, policyJson({ ...(current ?? {}), ...rules }));
}

beforeAll(async () => {
  admin = await adminSession();
  demo = await openSession({
    load: { cloud: 'oslab-demo', searchPaths: [join(labEnv('OSLAB_STATE'), 'clouds.yaml')] },
  });
  const rules = policyRules(roles);
  await install('nova', 'policy.yaml', rules.nova ?? {});
  // Placement (Zed, oslo.policy 4.0) reads policy.json unless configured otherwise.
  await install('placement', 'policy.json', rules.placement ?? {});
  [own] = (await bootServers(admin, [{ name: `${P}-own`, host: 'compute1', flavor: 'm1.tiny' }])) as [
    NovaServer,
  ];
  [foreign] = (await bootServers(demo, [{ name: `${P}-demo`, flavor: 'm1.tiny' }])) as [NovaServer];
});

afterAll(async () => {
  for (const f of policyFiles) await writeFile(f.path, f.before ?? '{}\n');
  if (!admin) return;
  for (const id of made.users)
    await admin.service('identity').request({ method: 'DELETE', path: `/users/${id}`, accept: [404] });
  for (const id of made.roles)
    await admin.service('identity').request({ method: 'DELETE', path: `/roles/${id}`, accept: [404] });
  // Admin lists every project, so this removes the demo user's server too.
  await cleanupLab(admin, P);
});

describe('policy.yaml for the dedicated roles', () => {
  it('lets a user with only the reader role record every project', async () => {
    const reader = await userWithRole(roles.reader);
    expect((await reader.token()).roles).toEqual([roles.reader]);
    const { snapshot, warnings } = await recordSnapshot(reader, { neutron: 'never' });
    expect(snapshot.hosts.length).toBeGreaterThanOrEqual(2);
    expect(snapshot.servers.map((x) => x.id)).toEqual(expect.arrayContaining([own.id, foreign.id]));
    expect(warnings).toEqual([]);
    const migrate = await reader.nova.liveMigrate(own.id, 'compute2').catch((e: unknown) => e);
    expect(isCloudError(migrate, 'auth') && migrate.status).toBe(403);
  });

  it('lets a user with only the actuator role migrate and write ratios (the reader follows), and nothing else', async () => {
    const actuator = await userWithRole(roles.actuator);
    const reader = await userWithRole(roles.reader);
    const since = new Date();
    await actuator.nova.liveMigrate(own.id, 'compute3');
    expect(
      (await reader.nova.followLiveMigration(own.id, { since, pollMs: 500, timeoutMs: 90_000 })).status,
    ).toBe('completed');
    // Following is a read: the actuator's role does not pass os-migrations:index.
    const follow = await actuator.nova.listMigrations({ serverId: own.id }).catch((e: unknown) => e);
    expect(isCloudError(follow, 'auth') && follow.status).toBe(403);
    const rp = (await admin.placement.listResourceProviders({ name: 'compute3' }))[0];
    if (!rp) throw new Error('no provider compute3');
    const ratio = (await admin.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio ?? 4;
    // The generation is read with the reader, the PUT made with the actuator (as prevention does).
    const setRatio = (r: number) =>
      updateInventory(reader.placement, actuator.placement, rp.uuid, 'VCPU', (inv) => ({
        ...inv,
        allocationRatio: r,
      }));
    expect((await setRatio(ratio + 0.5)).allocationRatio).toBe(ratio + 0.5);
    await setRatio(ratio);
    const read = await actuator.placement.getInventories(rp.uuid).catch((e: unknown) => e);
    expect(isCloudError(read, 'auth') && read.status).toBe(403);
    const list = await actuator.nova.listServers().catch((e: unknown) => e);
    expect(isCloudError(list, 'auth') && list.status).toBe(403);
    // Nova looks servers up in the caller's project unless the context is admin: the
    // dedicated role cannot act on another project's server.
    const other = await actuator.nova.liveMigrate(foreign.id, 'compute3').catch((e: unknown) => e);
    expect(isCloudError(other) && other.status).toBe(404);
  });
});
