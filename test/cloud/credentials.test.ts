import { describe, expect, it } from 'vitest';
import {
  API_CALLS,
  accessRuleMatches,
  accessRules,
  callRefusal,
  credentialCommands,
  policyRules,
  policyYaml,
  prefixesFromCatalog,
  prefixFromEndpoint,
} from '../../src/cloud/credentials.js';

describe('access rules', () => {
  it('give the reader only GETs and the actuator the migration and inventory calls', () => {
    const reader = accessRules('reader');
    expect(reader.every((r) => r.method === 'GET')).toBe(true);
    expect(reader).toContainEqual({ service: 'compute', method: 'GET', path: '/v2.1/servers/detail' });
    expect(reader).toContainEqual({
      service: 'placement',
      method: 'GET',
      path: '/resource_providers/*/usages',
    });
    expect(reader).toContainEqual({ service: 'network', method: 'GET', path: '/v2.0/ports' });
    const actuator = accessRules('actuator');
    expect(actuator).toContainEqual({ service: 'compute', method: 'POST', path: '/v2.1/servers/*/action' });
    expect(actuator).toContainEqual({
      service: 'compute',
      method: 'DELETE',
      path: '/v2.1/servers/*/migrations/*',
    });
    expect(actuator).toContainEqual({
      service: 'placement',
      method: 'PUT',
      path: '/resource_providers/*/inventories/*',
    });
    expect(actuator.some((r) => r.path.endsWith('/servers/detail'))).toBe(false);
    // The actuator writes and nothing else: every read it depends on is the reader's.
    expect(actuator.filter((r) => r.method === 'GET')).toEqual([]);
    expect(actuator).toContainEqual({ service: 'compute', method: 'PUT', path: '/v2.1/os-services/*' });
    expect(new Set(actuator.map((r) => `${r.method} ${r.path}`)).size).toBe(actuator.length);
  });

  it('follow the service prefixes, and can leave Neutron out', () => {
    const rules = accessRules(
      'reader',
      { compute: '/compute/v2.1/abc', placement: '/placement', network: '/v2.0' },
      false,
    );
    expect(rules[0]?.path).toBe('/compute/v2.1/abc/os-services');
    expect(rules.some((r) => r.service === 'network')).toBe(false);
    expect(prefixFromEndpoint('https://nova.example:8774/v2.1/')).toBe('/v2.1');
    expect(prefixFromEndpoint('http://p:8778')).toBe('');
  });

  it('read the prefixes from catalog endpoints', async () => {
    const urls: Record<string, string> = {
      compute: 'https://api/compute/v2.1',
      placement: 'https://api/placement',
      network: 'https://api/network',
    };
    const p = await prefixesFromCatalog(async (t) => urls[t] ?? '');
    expect(p).toEqual({ compute: '/compute/v2.1', placement: '/placement', network: '/network/v2.0' });
  });

  it('match paths with Keystone wildcards', () => {
    const rule = { service: 'compute', method: 'DELETE', path: '/v2.1/servers/*/migrations/*' };
    expect(accessRuleMatches(rule, 'compute', 'DELETE', '/v2.1/servers/abc/migrations/7')).toBe(true);
    expect(accessRuleMatches(rule, 'compute', 'DELETE', '/v2.1/servers/abc/migrations')).toBe(false);
    expect(accessRuleMatches(rule, 'compute', 'DELETE', '/v2.1/servers/a/b/migrations/7')).toBe(false);
    expect(accessRuleMatches(rule, 'compute', 'GET', '/v2.1/servers/abc/migrations/7')).toBe(false);
    expect(accessRuleMatches(rule, 'placement', 'DELETE', '/v2.1/servers/abc/migrations/7')).toBe(false);
    expect(accessRuleMatches({ service: 's', method: 'GET', path: '/a/**' }, 's', 'GET', '/a/b/c')).toBe(
      true,
    );
  });
});

describe('the calls a session of each kind may send', () => {
  const nova = new URL('http://cloud:8774/v2.1');
  const at = (path: string) => new URL(`http://cloud:8774${path}`);
  it('let the reader read and refuse it any write', () => {
    expect(callRefusal('reader', 'compute', 'GET', at('/v2.1/servers/detail'), nova)).toBeUndefined();
    expect(callRefusal('reader', 'compute', 'GET', at('/v2.1/servers/abc'), nova)).toBeUndefined();
    expect(callRefusal('reader', 'compute', 'POST', at('/v2.1/servers/abc/action'), nova)).toMatch(
      /^is not meant for it \(the reader's compute calls: GET \/v2\.1\/os-services, /,
    );
  });
  it('let the actuator write and refuse it any read', () => {
    expect(callRefusal('actuator', 'compute', 'POST', at('/v2.1/servers/abc/action'), nova)).toBeUndefined();
    expect(
      callRefusal('actuator', 'compute', 'DELETE', at('/v2.1/servers/abc/migrations/3'), nova),
    ).toBeUndefined();
    expect(callRefusal('actuator', 'compute', 'GET', at('/v2.1/servers/abc'), nova)).toBeDefined();
    expect(callRefusal('actuator', 'compute', 'GET', at('/v2.1/os-migrations'), nova)).toBeDefined();
    const placement = new URL('http://cloud/placement');
    expect(
      callRefusal(
        'actuator',
        'placement',
        'PUT',
        new URL('http://cloud/placement/resource_providers/r/inventories/VCPU'),
        placement,
      ),
    ).toBeUndefined();
    expect(
      callRefusal(
        'actuator',
        'placement',
        'GET',
        new URL('http://cloud/placement/resource_providers/r/inventories'),
        placement,
      ),
    ).toBeDefined();
    expect(
      callRefusal(
        'actuator',
        'identity',
        'GET',
        new URL('http://cloud/identity/v3/users'),
        new URL('http://cloud/identity'),
      ),
    ).toBe('makes no identity calls');
  });
});

describe('policy.yaml and commands', () => {
  it('allow admin or the dedicated role on every policy the calls need', () => {
    const rules = policyRules({ reader: 'aic-r', actuator: 'aic-a' });
    expect(rules.nova?.['os_compute_api:os-migrate-server:migrate_live']).toBe('role:admin or role:aic-a');
    expect(rules.nova?.['os_compute_api:os-migrations:index']).toBe('role:admin or role:aic-r');
    expect(rules.nova?.['os_compute_api:os-services:update']).toBe('role:admin or role:aic-a');
    // Policies whose default reaches project users keep that default: members still see their own servers.
    expect(rules.nova?.['os_compute_api:servers:show']).toBe('rule:project_reader_or_admin or role:aic-r');
    expect(rules.nova?.['os_compute_api:servers:detail']).toBe('rule:project_reader_or_admin or role:aic-r');
    expect(rules.nova?.['os_compute_api:servers:confirm_resize']).toBe(
      'rule:project_member_or_admin or role:aic-a',
    );
    // Canaries pass the project-member defaults: no rule is written over them.
    expect(rules.nova?.['os_compute_api:servers:create']).toBeUndefined();
    expect(rules.placement?.['placement:resource_providers:inventories:update']).toBe(
      'role:admin or role:aic-a',
    );
    const names = Object.values(rules).flatMap((r) => Object.keys(r));
    for (const c of API_CALLS) for (const p of c.policies) expect(names).toContain(p);
    expect(API_CALLS.filter((c) => c.for === 'tasks').every((c) => c.policies.length === 0)).toBe(true);
    const yaml = policyYaml(rules.nova ?? {}, 'Nova');
    expect(yaml).toMatch(/^# Nova policy\.yaml additions/);
    expect(yaml).toContain('"os_compute_api:os-services:list": "role:admin or role:aic-r"');
  });

  it('print the openstack commands that create roles, user and both credentials', () => {
    const text = credentialCommands({
      project: 'ops',
      user: 'aicerine',
      roles: { reader: 'aic-r', actuator: 'aic-a' },
      readerRulesFile: 'r.json',
      actuatorRulesFile: 'a.json',
    });
    expect(text).toContain('openstack role create aic-r');
    expect(text).toContain('openstack role add --user aicerine --project ops aic-a');
    expect(text).toContain(
      'openstack application credential create aicerine-reader --role aic-r \\\n  --access-rules r.json',
    );
    expect(text).toContain(
      'openstack application credential create aicerine-actuator --role aic-a \\\n  --access-rules a.json',
    );
  });
});
