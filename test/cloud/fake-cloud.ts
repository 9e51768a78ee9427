// A fake cloud for unit tests built from responses recorded from the lab: Keystone with a
// catalog pointing back at the fake, Nova, Placement and a Neutron with no ports.
import type { CloudConfig } from '../../src/cloud/auth/config.js';
import { type CloudSession, openSession, type SessionOptions } from '../../src/cloud/session.js';
import { type FakeReply, type FakeServer, fixture, startFake } from './fake-server.js';

export interface FakeCloud {
  fake: FakeServer;
  config: CloudConfig;
  /** Tokens issued so far. */
  tokens(): number;
  session(opts?: Omit<SessionOptions, 'config'>): Promise<CloudSession>;
  close(): Promise<void>;
}

const LAB_URLS: [string, string][] = [
  ['http://127.0.0.1:8774', '/compute'],
  ['http://127.0.0.1:8778', '/placement'],
  ['http://127.0.0.1:5000', '/identity'],
  ['http://127.0.0.1:9696', '/network'],
];

export function rewriteUrls(doc: unknown, base: string): unknown {
  let text = JSON.stringify(doc);
  for (const [from, to] of LAB_URLS) text = text.split(from).join(`${base}${to}`);
  return JSON.parse(text);
}

export async function startFakeCloud(
  opts: { tokenLifetimeMs?: number; now?: () => number } = {},
): Promise<FakeCloud> {
  const fake = await startFake();
  let issued = 0;
  const now = opts.now ?? Date.now;
  const tokenDoc = fixture<{ token: Record<string, unknown> }>('keystone-token');
  fake.route('POST /identity/v3/auth/tokens', () => {
    issued++;
    const token = rewriteUrls(tokenDoc, fake.url) as { token: Record<string, unknown> };
    token.token.expires_at = new Date(now() + (opts.tokenLifetimeMs ?? 3_600_000)).toISOString();
    return { status: 201, body: token, headers: { 'X-Subject-Token': `tok-${issued}` } };
  });
  const reply = (name: string): FakeReply => ({ body: rewriteUrls(fixture(name), fake.url) });
  fake.route('GET /compute/v2.1/', reply('nova-version'));
  fake.route('GET /compute/v2.1/os-services', reply('nova-services'));
  fake.route('GET /compute/v2.1/os-aggregates', reply('nova-aggregates'));
  fake.route('GET /compute/v2.1/os-hypervisors/detail', reply('nova-hypervisors'));
  fake.route('GET /compute/v2.1/servers/detail', reply('nova-servers'));
  fake.route('GET /compute/v2.1/os-server-groups', reply('nova-server-groups'));
  fake.route('GET /compute/v2.1/os-migrations', reply('nova-migrations'));
  fake.route('GET /compute/v2.1/flavors/detail', reply('nova-flavors'));
  fake.route('GET /placement/', reply('placement-version'));
  fake.route('GET /placement/resource_providers', reply('placement-providers'));
  const providers = fixture<{ resource_providers: { uuid: string }[] }>(
    'placement-providers',
  ).resource_providers;
  for (const p of providers) {
    fake.route(
      `GET /placement/resource_providers/${p.uuid}/inventories`,
      reply('placement-inventories-compute1'),
    );
    fake.route(`GET /placement/resource_providers/${p.uuid}/usages`, reply('placement-usages-compute1'));
  }
  fake.route('GET /network/v2.0/ports', { body: { ports: [] } });
  const config: CloudConfig = {
    name: 'fake',
    method: 'password',
    auth: {
      authUrl: `${fake.url}/identity/v3`,
      username: 'admin',
      password: 'fake-password-123',
      projectName: 'admin',
      userDomainName: 'Default',
      projectDomainName: 'Default',
    },
    regionName: 'RegionOne',
    interface: 'public',
    insecure: false,
    origin: 'unit test',
  };
  return {
    fake,
    config,
    tokens: () => issued,
    session: (o = {}) =>
      openSession({ ...o, config, retry: o.retry ?? { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 } }),
    close: () => fake.close(),
  };
}
