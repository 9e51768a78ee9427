// `aicerine check`'s credential checks against the simulator's Keystone: application credentials
// with the generated access rules pass; one whose rules miss a call the service makes fails;
// one without rules, with admin, or with rules beyond its calls is reported; a wrong secret fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudConfig } from '../../src/cloud/auth/config.js';
import type { CheckResult } from '../../src/cloud/check.js';
import { type CredentialRoles, checkCredentials } from '../../src/cloud/credential-check.js';
import {
  type AccessRule,
  accessRules,
  type CredentialKind,
  prefixesFromCatalog,
  type ServicePrefixes,
} from '../../src/cloud/credentials.js';
import { openSession } from '../../src/cloud/session.js';
import { type SimSession, startSimSession } from '../fixtures/sim-session.js';
import { host, snapshot } from '../sim/fixtures.js';

// The simulator knows admin, member and reader; the dedicated roles stand in as those.
const ROLES: CredentialRoles = { reader: 'reader', actuator: 'member', tasks: 'member' };
let w: SimSession;
let prefixes: ServicePrefixes;
let userId: string;
let n = 0;

beforeAll(async () => {
  w = await startSimSession(snapshot([host('c1'), host('c2')], []));
  userId = (await w.session.token()).userId as string;
  prefixes = await prefixesFromCatalog((t) => w.session.service(t).endpoint());
});
afterAll(async () => {
  await w?.close();
});

async function credential(
  roles: string[],
  rules: AccessRule[] | null,
  secret?: string,
): Promise<CloudConfig> {
  const res = await w.session.service('identity').request({
    method: 'POST',
    path: `/users/${userId}/application_credentials`,
    body: {
      application_credential: {
        name: `check-${n++}`,
        roles: roles.map((name) => ({ name })),
        ...(rules ? { access_rules: rules } : {}),
      },
    },
  });
  const ac = (res.body as { application_credential: { id: string; secret: string } }).application_credential;
  return {
    name: `check-${n}`,
    method: 'application-credential',
    auth: {
      authUrl: w.sim.authUrl,
      applicationCredentialId: ac.id,
      applicationCredentialSecret: secret ?? ac.secret,
    },
    interface: 'public',
    insecure: false,
    origin: 'test',
  };
}

async function check(kind: CredentialKind, config: CloudConfig): Promise<Record<string, CheckResult>> {
  const results = await checkCredentials(
    [{ kind, label: kind, open: () => openSession({ config, credential: { kind, label: kind } }) }],
    ROLES,
  );
  return Object.fromEntries(results.map((r) => [r.id.replace(`credential-${kind}-`, ''), r]));
}

describe('credential checks', () => {
  it('pass a reader and an actuator created with the generated rules and only their roles', async () => {
    const reader = await check('reader', await credential(['reader'], accessRules('reader', prefixes)));
    expect(Object.values(reader).map((r) => [r.id, r.status])).toEqual([
      ['credential-reader-authenticates', 'ok'],
      ['credential-reader-roles', 'ok'],
      ['credential-reader-restricted', 'ok'],
      ['credential-reader-covers', 'ok'],
    ]);
    const actuator = await check('actuator', await credential(['member'], accessRules('actuator', prefixes)));
    expect(Object.values(actuator).every((r) => r.status === 'ok')).toBe(true);
    expect(actuator.covers?.details).toEqual([
      `all ${accessRules('actuator', prefixes).length} calls covered`,
    ]);
  });

  it('fail an actuator whose rules miss a call the service makes, naming the call and why it is made', async () => {
    const rules = accessRules('actuator', prefixes).filter(
      (r) => r.method !== 'PUT' || !r.path.includes('inventories'),
    );
    const r = await check('actuator', await credential(['member'], rules));
    expect(r.covers?.status).toBe('fail');
    expect(r.covers?.details).toEqual([
      `not covered: placement PUT ${prefixes.placement}/resource_providers/*/inventories/* (set a VCPU allocation ratio (prevention); the generation is read with the reader)`,
    ]);
  });

  it('report an actuator without access rules, one with admin, and rules beyond its calls', async () => {
    const open = await check('actuator', await credential(['admin', 'member'], null));
    expect(open.roles).toMatchObject({
      status: 'info',
      details: ['also holds admin (it needs only member)'],
    });
    expect(open.restricted?.status).toBe('info');
    expect(open.restricted?.details[0]).toMatch(
      /has no access rules: it can make every call its roles allow \(admin: any call at all\)$/,
    );
    expect(open.covers).toBeUndefined();
    const wide = await check(
      'actuator',
      await credential(
        ['member'],
        [
          ...accessRules('actuator', prefixes),
          { service: 'compute', method: 'GET', path: `${prefixes.compute}/servers/detail` },
        ],
      ),
    );
    expect(wide.restricted).toMatchObject({
      status: 'info',
      details: [`rules beyond the actuator's calls: compute GET ${prefixes.compute}/servers/detail`],
    });
    expect(wide.covers?.status).toBe('ok');
    // The reader holding the actuator's role could migrate wherever its rules let it.
    const both = await check(
      'reader',
      await credential(['reader', 'member'], accessRules('reader', prefixes)),
    );
    expect(both.roles?.details).toEqual(["also holds member (the actuator's role)"]);
  });

  it('fail a credential that does not authenticate, saying why without its secret', async () => {
    const r = await check('reader', await credential(['reader'], null, 'not-the-secret-9d2'));
    expect(r.authenticates?.status).toBe('fail');
    expect(r.authenticates?.details[0]).toMatch(/refused application credential .* \(401\)/);
    expect(JSON.stringify(r)).not.toContain('not-the-secret-9d2');
  });
});
