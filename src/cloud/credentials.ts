// The credentials Aicerine runs with, derived from one table of the calls it makes: a reader
// (every read: record, check, pre-flight, following a migration, the generation before a ratio
// write), an actuator (the writes only: live and cold migration, abort, force-complete, compute
// service disable/enable, Placement inventory writes) and an optional tasks credential (canary
// servers in the tasks' own project). Keystone access rules restrict the paths; a policy.yaml
// lets a dedicated role pass the services' own policy checks for exactly those calls, without
// the admin role. The sessions the service opens refuse, before sending, any call that is not
// in this table for their kind, so the rules and the code cannot drift apart unnoticed.

export const CREDENTIAL_KINDS = ['reader', 'actuator', 'tasks'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export interface ApiCall {
  service: 'compute' | 'placement' | 'network';
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the service prefix; `*` is one path component. */
  path: string;
  /** Policy rules of the service that guard the call. */
  policies: string[];
  for: CredentialKind;
  why: string;
}

export const API_CALLS: ApiCall[] = [
  {
    service: 'compute',
    method: 'GET',
    path: '/os-services',
    policies: ['os_compute_api:os-services:list'],
    for: 'reader',
    why: 'host state and status',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/os-aggregates',
    policies: ['os_compute_api:os-aggregates:index'],
    for: 'reader',
    why: 'aggregates and their hosts',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/os-hypervisors/detail',
    policies: ['os_compute_api:os-hypervisors:list-detail'],
    for: 'reader',
    why: 'compute node to resource provider mapping',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/servers/detail',
    policies: [
      'os_compute_api:servers:detail',
      'os_compute_api:servers:detail:get_all_tenants',
      'os_compute_api:servers:allow_all_filters',
      'os_compute_api:os-extended-server-attributes',
      'os_compute_api:os-flavor-extra-specs:index',
    ],
    for: 'reader',
    why: 'servers of all projects with host and flavor extra specs',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/os-server-groups',
    policies: ['os_compute_api:os-server-groups:index', 'os_compute_api:os-server-groups:index:all_projects'],
    for: 'reader',
    why: 'server groups of all projects',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/flavors/detail',
    policies: ['os_compute_api:os-flavor-extra-specs:index', 'os_compute_api:os-flavor-access'],
    for: 'reader',
    why: 'flavors that cannot be live-migrated',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/os-migrations',
    policies: ['os_compute_api:os-migrations:index'],
    for: 'reader',
    why: 'migration history (cost learning, evidence that live migration works)',
  },
  {
    service: 'placement',
    method: 'GET',
    path: '/resource_providers',
    policies: ['placement:resource_providers:list'],
    for: 'reader',
    why: 'compute node providers',
  },
  {
    service: 'placement',
    method: 'GET',
    path: '/resource_providers/*/inventories',
    policies: ['placement:resource_providers:inventories:list'],
    for: 'reader',
    why: 'capacity and allocation ratios',
  },
  {
    service: 'placement',
    method: 'GET',
    path: '/resource_providers/*/usages',
    policies: ['placement:resource_providers:usages'],
    for: 'reader',
    why: 'allocated resources',
  },
  {
    service: 'placement',
    method: 'GET',
    path: '/resource_providers/*/traits',
    policies: ['placement:resource_providers:traits:list'],
    for: 'reader',
    why: 'host traits (check)',
  },
  {
    service: 'network',
    method: 'GET',
    path: '/ports',
    policies: ['get_port', 'get_port:binding:vnic_type'],
    for: 'reader',
    why: 'SR-IOV ports (direct, macvtap, …)',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/servers/*',
    policies: ['os_compute_api:servers:show', 'os_compute_api:os-extended-server-attributes'],
    for: 'reader',
    why: 'pre-flight and follow: status, task state and host of one server',
  },
  {
    service: 'placement',
    method: 'GET',
    path: '/allocations/*',
    policies: ['placement:allocations:list'],
    for: 'reader',
    why: 'pre-flight: what a server holds, which its destination must take',
  },
  {
    service: 'placement',
    method: 'GET',
    path: '/resource_providers/*/allocations',
    policies: ['placement:resource_providers:allocations:list'],
    for: 'reader',
    why: "pre-flight: what every server of a source host holds, in one read per host (a server's own allocation is read when it does not match its flavor)",
  },
  {
    service: 'compute',
    method: 'POST',
    path: '/servers/*/action',
    policies: [
      'os_compute_api:os-migrate-server:migrate_live',
      'os_compute_api:os-migrate-server:migrate',
      'os_compute_api:servers:confirm_resize',
    ],
    for: 'actuator',
    why: 'os-migrateLive to a named host; cold migration (migrate) and its confirmResize',
  },
  {
    service: 'compute',
    method: 'DELETE',
    path: '/servers/*/migrations/*',
    policies: ['os_compute_api:servers:migrations:delete'],
    for: 'actuator',
    why: 'abort a live migration',
  },
  {
    service: 'compute',
    method: 'POST',
    path: '/servers/*/migrations/*/action',
    policies: ['os_compute_api:servers:migrations:force_complete'],
    for: 'actuator',
    why: 'force-complete a live migration that does not converge',
  },
  {
    service: 'compute',
    method: 'PUT',
    path: '/os-services/*',
    policies: ['os_compute_api:os-services:update'],
    for: 'actuator',
    why: 'disable a compute service before an evacuation or maintenance, enable it after',
  },
  {
    service: 'placement',
    method: 'PUT',
    path: '/resource_providers/*/inventories/*',
    policies: ['placement:resource_providers:inventories:update'],
    for: 'actuator',
    why: 'set a VCPU allocation ratio (prevention); the generation is read with the reader',
  },
  // Operator tasks' canaries live in their own project: the services' default policies (project
  // member) already allow these, so no policy rule is generated for them.
  {
    service: 'compute',
    method: 'POST',
    path: '/servers',
    policies: [],
    for: 'tasks',
    why: 'create a canary server in the tasks project',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/servers/*',
    policies: [],
    for: 'tasks',
    why: 'follow a canary until it is ACTIVE or gone',
  },
  {
    service: 'compute',
    method: 'GET',
    path: '/servers/detail',
    policies: [],
    for: 'tasks',
    why: 'find canaries left behind by an interrupted task',
  },
  {
    service: 'compute',
    method: 'DELETE',
    path: '/servers/*',
    policies: [],
    for: 'tasks',
    why: 'delete a canary',
  },
];

export interface AccessRule {
  service: string;
  method: string;
  path: string;
}

/** Path prefixes as each service sees them (Nova's version prefix, Neutron's /v2.0). */
export interface ServicePrefixes {
  compute: string;
  placement: string;
  network: string;
}

export const DEFAULT_PREFIXES: ServicePrefixes = { compute: '/v2.1', placement: '', network: '/v2.0' };

/** The path part of an endpoint URL, which is the prefix the service sees ("http://h:8774/v2.1" -> "/v2.1"). */
export function prefixFromEndpoint(url: string): string {
  return new URL(url).pathname.replace(/\/+$/, '');
}

export function accessRules(
  kind: CredentialKind,
  prefixes: ServicePrefixes = DEFAULT_PREFIXES,
  withNetwork = true,
): AccessRule[] {
  const seen = new Set<string>();
  const out: AccessRule[] = [];
  for (const c of API_CALLS) {
    if (c.for !== kind || (c.service === 'network' && !withNetwork)) continue;
    const rule = { service: c.service, method: c.method, path: `${prefixes[c.service]}${c.path}` };
    const key = `${rule.service} ${rule.method} ${rule.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(rule);
  }
  return out;
}

/** Whether an access rule lets a request through, with Keystone's wildcards (`*` one component, `**` any). */
export function accessRuleMatches(rule: AccessRule, service: string, method: string, path: string): boolean {
  if (rule.service !== service || rule.method !== method.toUpperCase()) return false;
  return rulePathPattern(rule.path).test(path);
}

/** Each rule's path as a pattern, made once: every request of a restricted session is checked. */
const rulePatterns = new Map<string, RegExp>();

function rulePathPattern(rulePath: string): RegExp {
  let pattern = rulePatterns.get(rulePath);
  if (!pattern) {
    const source = rulePath
      .split('/')
      .map((part) =>
        part === '**' ? '.*' : part === '*' ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    pattern = new RegExp(`^${source}/?$`);
    rulePatterns.set(rulePath, pattern);
  }
  return pattern;
}

/**
 * The defaults a policy.yaml line must keep because they reach ordinary project users (a line
 * replaces the service's default outright: writing "role:admin or role:aicerine-reader" for
 * servers:show would lock every project member out of their own servers). From the services'
 * own defaults (`oslopolicy-sample-generator --namespace nova|placement|neutron`, Nova 26 /
 * Placement 8); every policy not listed here defaults to admin only.
 */
const PROJECT_DEFAULTS: Record<string, string> = {
  'os_compute_api:servers:detail': 'rule:project_reader_or_admin',
  'os_compute_api:servers:show': 'rule:project_reader_or_admin',
  'os_compute_api:os-flavor-extra-specs:index': 'rule:project_reader_or_admin',
  'os_compute_api:os-server-groups:index': 'rule:project_reader_or_admin',
  'os_compute_api:servers:confirm_resize': 'rule:project_member_or_admin',
  get_port: 'rule:context_is_advsvc or rule:admin_owner_or_network_owner',
  'get_port:binding:vnic_type': 'rule:admin_or_owner',
};

/** policy.yaml rules, per service: the service's default (admin, or its project rule) or the dedicated role. */
export function policyRules(roles: {
  reader: string;
  actuator: string;
}): Record<string, Record<string, string>> {
  const byService: Record<string, Map<string, Set<string>>> = {};
  for (const c of API_CALLS) {
    if (c.for === 'tasks') continue;
    const svc = c.service === 'compute' ? 'nova' : c.service === 'placement' ? 'placement' : 'neutron';
    byService[svc] ??= new Map();
    for (const p of c.policies) {
      const set = byService[svc].get(p) ?? new Set<string>();
      set.add(roles[c.for]);
      byService[svc].set(p, set);
    }
  }
  const out: Record<string, Record<string, string>> = {};
  for (const [svc, rules] of Object.entries(byService)) {
    out[svc] = {};
    for (const [name, set] of [...rules.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      out[svc][name] = [
        PROJECT_DEFAULTS[name] ?? 'role:admin',
        ...[...set].sort().map((r) => `role:${r}`),
      ].join(' or ');
    }
  }
  return out;
}

export function policyYaml(rules: Record<string, string>, service: string): string {
  const lines = [`# ${service} policy.yaml additions for Aicerine (merge into the existing file)`];
  for (const [k, v] of Object.entries(rules)) lines.push(`"${k}": "${v}"`);
  return `${lines.join('\n')}\n`;
}

/**
 * The same rules as JSON. Placement of the Zed era reads `policy.json` unless
 * `[oslo_policy] policy_file` says otherwise, and JSON is also valid YAML.
 */
export function policyJson(rules: Record<string, string>): string {
  return `${JSON.stringify(rules, null, 2)}\n`;
}

export interface CommandOptions {
  project: string;
  user: string;
  roles: { reader: string; actuator: string };
  readerRulesFile: string;
  actuatorRulesFile: string;
}

/** The `openstack` commands an operator runs (as admin, then as the Aicerine user). */
export function credentialCommands(o: CommandOptions): string {
  return `# As a cloud admin: two roles, one user that holds them in project ${o.project}
openstack role create ${o.roles.reader}
openstack role create ${o.roles.actuator}
openstack user create --domain Default --password-prompt ${o.user}
openstack role add --user ${o.user} --project ${o.project} ${o.roles.reader}
openstack role add --user ${o.user} --project ${o.project} ${o.roles.actuator}
# Merge nova-policy.yaml into Nova's policy.yaml and neutron-policy.yaml into Neutron's;
# placement-policy.json goes to Placement's policy.json (or the file [oslo_policy] policy_file
# names). The services re-read a changed policy file on the next request.

# As ${o.user} (OS_USERNAME=${o.user} OS_PROJECT_NAME=${o.project}):
openstack application credential create aicerine-reader --role ${o.roles.reader} \\
  --access-rules ${o.readerRulesFile} --description "Aicerine: read-only (record, check)"
openstack application credential create aicerine-actuator --role ${o.roles.actuator} \\
  --access-rules ${o.actuatorRulesFile} --description "Aicerine: live-migrate, abort, set ratios"
# Each prints an id and a secret: put them in clouds.yaml (auth_type: v3applicationcredential).
`;
}

/** The path prefixes the services see, read from the catalog endpoints of a session. */
export async function prefixesFromCatalog(
  endpoint: (type: string) => Promise<string>,
  withNetwork = true,
): Promise<ServicePrefixes> {
  const p: ServicePrefixes = {
    ...DEFAULT_PREFIXES,
    compute: prefixFromEndpoint(await endpoint('compute')),
    placement: prefixFromEndpoint(await endpoint('placement')),
  };
  if (withNetwork) {
    const net = await endpoint('network').catch(() => undefined);
    if (net) p.network = `${prefixFromEndpoint(net)}/v2.0`;
  }
  return p;
}

/**
 * Why a session of `kind` must not send a request, or undefined when the request is one of its
 * calls: the same matching Keystone applies to an application credential's access rules, on the
 * path the service sees (its endpoint's path is the prefix).
 */
export function callRefusal(
  kind: CredentialKind,
  service: string,
  method: string,
  url: URL,
  endpoint: URL,
): string | undefined {
  if (service !== 'compute' && service !== 'placement' && service !== 'network')
    return `makes no ${service} calls`;
  const base = prefixFromEndpoint(endpoint.toString());
  const prefixes: ServicePrefixes = { compute: base, placement: base, network: `${base}/v2.0` };
  const rules = accessRules(kind, prefixes);
  if (rules.some((r) => accessRuleMatches(r, service, method, url.pathname))) return undefined;
  return `is not meant for it (the ${kind}'s ${service} calls: ${
    rules
      .filter((r) => r.service === service)
      .map((r) => `${r.method} ${r.path}`)
      .join(', ') || 'none'
  })`;
}
