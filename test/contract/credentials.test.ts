// The access rules `aicerine credentials` generates, enforced by the cloud: a reader
// application credential records everything and may not migrate; an actuator migrates and may
// not read the cloud. Same tests on the simulator and on the lab.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudConfig } from '../../src/cloud/auth/config.js';
import { accessRules, type CredentialKind, prefixesFromCatalog } from '../../src/cloud/credentials.js';
import { isCloudError } from '../../src/cloud/errors.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { openWorld, PREFIX, type World } from './world.js';

let w: World;
let userId: string;
const created: string[] = [];

beforeAll(async () => {
  w = await openWorld();
  const tok = await w.session.token();
  if (!tok.userId) throw new Error('admin token has no user id');
  userId = tok.userId;
}, 300_000);

afterAll(async () => {
  if (!w) return;
  for (const id of created) {
    await w.session
      .service('identity')
      .request({ method: 'DELETE', path: `/users/${userId}/application_credentials/${id}`, accept: [404] });
  }
  await w.close();
}, 300_000);

async function credential(kind: CredentialKind): Promise<CloudSession> {
  const prefixes = await prefixesFromCatalog((t) => w.session.service(t).endpoint());
  const res = await w.session.service('identity').request({
    method: 'POST',
    path: `/users/${userId}/application_credentials`,
    body: {
      application_credential: {
        name: `${PREFIX}${kind}-${created.length}-${Date.now()}`,
        access_rules: accessRules(kind, prefixes),
      },
    },
  });
  const ac = (res.body as { application_credential: { id: string; secret: string } }).application_credential;
  created.push(ac.id);
  const config: CloudConfig = {
    name: `${PREFIX}${kind}`,
    method: 'application-credential',
    auth: { authUrl: w.authUrl, applicationCredentialId: ac.id, applicationCredentialSecret: ac.secret },
    interface: 'public',
    insecure: false,
    origin: 'contract test',
  };
  return openSession({ config });
}

describe('generated access rules', () => {
  it('let the reader record the fixture, and refuse it a live migration with 401', async () => {
    const reader = await credential('reader');
    const { snapshot, warnings } = await recordSnapshot(reader, { neutron: 'auto' });
    for (const f of Object.values(w.servers))
      expect(snapshot.servers.find((s) => s.id === f.id)?.host).toBe(f.host);
    expect(warnings.filter((x) => /not readable/.test(x))).toEqual([]);
    const migrate = await reader.nova.liveMigrate(w.servers.c.id, w.hosts[1]).catch((e: unknown) => e);
    expect(isCloudError(migrate, 'auth')).toBe(true);
    expect((await w.session.nova.getServer(w.servers.c.id)).host).toBe(w.servers.c.host);
  });

  it('let the actuator migrate (the reader follows), and refuse it every read', async () => {
    const actuator = await credential('actuator');
    const reader = await credential('reader');
    const since = new Date();
    const to = w.servers.c.host === w.hosts[2] ? w.hosts[0] : w.hosts[2];
    await actuator.nova.liveMigrate(w.servers.c.id, to);
    const m = await reader.nova.followLiveMigration(w.servers.c.id, {
      since,
      pollMs: 250,
      timeoutMs: 120_000,
    });
    expect(m.status).toBe('completed');
    w.servers.c.host = to;
    const list = await actuator.nova.listServers().catch((e: unknown) => e);
    expect(isCloudError(list, 'auth')).toBe(true);
    const follow = await actuator.nova.listMigrations({ serverId: w.servers.c.id }).catch((e: unknown) => e);
    expect(isCloudError(follow, 'auth')).toBe(true);
    const inventories = await actuator.placement.listResourceProviders().catch((e: unknown) => e);
    expect(isCloudError(inventories, 'auth')).toBe(true);
  });
});
