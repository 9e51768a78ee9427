// The four ways a first run usually goes wrong, each answered with one message that says
// what to fix.
import { describe, expect, it } from 'vitest';
import { cloudFromEnv } from '../../src/cloud/auth/clouds-yaml.js';
import { CloudError } from '../../src/cloud/errors.js';
import { openSession } from '../../src/cloud/session.js';
import { labEnv } from './lab.js';

function env(over: Record<string, string | undefined>) {
  labEnv('OS_AUTH_URL');
  return cloudFromEnv({ ...process.env, OS_CLOUD: undefined, ...over });
}

async function failure(p: Promise<unknown>): Promise<CloudError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(CloudError);
  return e as CloudError;
}

describe('clear errors against the lab', () => {
  it('says Keystone is unreachable and to check OS_AUTH_URL', async () => {
    const e = await failure(
      openSession({
        config: env({ OS_AUTH_URL: 'http://127.0.0.1:59999/v3' }),
        retry: { maxRetries: 1, initialDelayMs: 10, maxDelayMs: 20 },
      }),
    );
    expect(e.kind).toBe('unreachable');
    expect(e.message).toMatch(
      /^Keystone at http:\/\/127\.0\.0\.1:59999\/v3 cannot be reached \(ECONNREFUSED\)\. /,
    );
    expect(e.message).toMatch(/Check OS_AUTH_URL \(OS_\* environment variables\)/);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('says the password was refused and which settings to check', async () => {
    const e = await failure(openSession({ config: env({ OS_PASSWORD: 'not-the-password' }) }));
    expect(e.kind).toBe('auth');
    expect(e.status).toBe(401);
    expect(e.message).toContain(`refused user ${process.env.OS_USERNAME} (401)`);
    expect(e.message).toContain('Check OS_USERNAME, OS_PASSWORD and OS_USER_DOMAIN_NAME');
    expect(e.message).not.toContain('not-the-password');
  });

  it('says which catalog entry is missing and how to add or choose one', async () => {
    const s = await openSession({ config: env({ OS_REGION_NAME: 'RegionNowhere' }) });
    const e = await failure(s.nova.listServices());
    expect(e.kind).toBe('catalog');
    expect(e.message).toContain(
      'the Keystone catalog has no public "compute" endpoint in region RegionNowhere',
    );
    expect(e.message).toContain('public@RegionOne');
    expect(e.message).toContain('OS_REGION_NAME');
    const s2 = await openSession({ config: env({}) });
    const e2 = await failure(s2.service('volumev3').endpoint());
    expect(e2.message).toMatch(/has no "volumev3" service \(it has: .*compute.*\)/);
  });

  it('says the cloud is too old when its Nova lacks the microversion needed', async () => {
    const s = await openSession({ config: env({}), nova: { need: [2, 150], want: [2, 150] } });
    const e = await failure(s.nova.listServers());
    expect(e.kind).toBe('microversion');
    expect(e.message).toMatch(
      /^Nova at http:\/\/\S+ supports microversions up to 2\.\d+, Aicerine needs 2\.150 or later\. Upgrade Nova/,
    );
  });
});
