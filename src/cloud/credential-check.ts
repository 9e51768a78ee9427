// `aicerine check`'s credential checks: each credential the service is configured with
// authenticates, holds the roles its calls need and no more, and its access rules cover every
// call the service makes with it: the calls come from API_CALLS, the same table the sessions
// refuse other calls by, so the check cannot drift from the code.
import type { TokenInfo } from './auth/keystone.js';
import type { CheckResult } from './check.js';
import {
  type AccessRule,
  API_CALLS,
  accessRuleMatches,
  accessRules,
  type CredentialKind,
  DEFAULT_PREFIXES,
  prefixesFromCatalog,
  type ServicePrefixes,
} from './credentials.js';
import type { CloudSession } from './session.js';

/**
 * The dedicated role names (`aicerine credentials --reader-role …`). Operator tasks need admin:
 * validate-compute creates its project, flavor, aggregate and traits, purge-project reaches
 * another project's resources.
 */
export interface CredentialRoles {
  reader: string;
  actuator: string;
  tasks: string;
}

export const DEFAULT_CREDENTIAL_ROLES: CredentialRoles = {
  reader: 'aicerine-reader',
  actuator: 'aicerine-actuator',
  tasks: 'admin',
};

export interface CredentialFacts {
  kind: CredentialKind;
  label: string;
  /** The token when it authenticated; otherwise why not. */
  token: TokenInfo | { error: string };
  prefixes: ServicePrefixes;
  withNetwork: boolean;
}

export const CREDENTIALS_GROUP = 'credentials';

/** A path an access rule pattern stands for, with each `*` filled in. */
function samplePath(pattern: string): string {
  return pattern
    .split('/')
    .map((p) => (p === '*' ? 'x1' : p === '**' ? 'x1/x2' : p))
    .join('/');
}

/** Whether `rule` lets through nothing beyond what one of `allowed` lets through. */
function within(rule: AccessRule, allowed: AccessRule[]): boolean {
  if (rule.path.split('/').includes('**'))
    return allowed.some((a) => a.path === rule.path && a.method === rule.method);
  return allowed.some((a) => accessRuleMatches(a, rule.service, rule.method, samplePath(rule.path)));
}

const why: Record<CredentialKind, string> = {
  reader: 'the service reads Nova, Placement and Neutron with it, every cycle',
  actuator:
    'the service live-migrates, aborts, disables services and writes ratios with it, and with nothing else',
  tasks:
    'operator tasks (validate-compute, purge-project) run with it; their canaries boot in a project of their own',
};

/** The checks of one credential, from what Keystone said about it. Pure. */
export function judgeCredential(
  f: CredentialFacts,
  roles: CredentialRoles = DEFAULT_CREDENTIAL_ROLES,
): CheckResult[] {
  const base = { aggregate: CREDENTIALS_GROUP, why: why[f.kind] };
  const id = (what: string) => `credential-${f.kind}-${what}`;
  if ('error' in f.token) {
    return [
      {
        ...base,
        id: id('authenticates'),
        title: `${f.label} authenticates`,
        status: 'fail',
        details: [f.token.error],
        ifNot: 'serve does not start',
      },
    ];
  }
  const t = f.token;
  const out: CheckResult[] = [
    {
      ...base,
      id: id('authenticates'),
      title: `${f.label} authenticates`,
      status: 'ok',
      details: [
        `roles: ${t.roles.join(', ') || 'none'}${t.applicationCredential ? `; application credential ${t.applicationCredential.id}` : ''}`,
      ],
      ifNot: 'serve does not start',
    },
  ];

  // Roles: the dedicated role (or admin) is needed; anything that reaches further is reported.
  const need = roles[f.kind];
  const has = new Set(t.roles);
  const hasNeeded = has.has(need) || has.has('admin');
  const beyond: string[] = [];
  if (has.has('admin') && need !== 'admin') beyond.push(`admin (it needs only ${need})`);
  for (const k of ['reader', 'actuator'] as const)
    if (k !== f.kind && roles[k] !== need && has.has(roles[k])) beyond.push(`${roles[k]} (the ${k}'s role)`);
  out.push({
    ...base,
    id: id('roles'),
    title: `${f.label} has the roles it needs and no more`,
    status: !hasNeeded ? 'fail' : beyond.length > 0 ? 'info' : 'ok',
    details: !hasNeeded
      ? [
          `holds ${t.roles.join(', ') || 'no role'}; needs ${need} (with the policy from \`aicerine credentials\`) or admin`,
        ]
      : beyond.length > 0
        ? [`also holds ${beyond.join(', ')}`]
        : [`holds ${need}`],
    ifNot: !hasNeeded
      ? 'the services refuse its calls (403)'
      : 'a leaked secret could do more than Aicerine ever does with it',
  });

  // Access rules: present, not wider than the kind's calls, covering every one of them.
  const calls = accessRules(f.kind, f.prefixes, f.withNetwork);
  const ac = t.applicationCredential;
  const rules = ac?.accessRules ?? [];
  if (!ac || rules.length === 0) {
    const admin = has.has('admin');
    out.push({
      ...base,
      id: id('restricted'),
      title: `${f.label} is restricted by access rules`,
      // The actuator is the one whose reach matters most: it changes the cloud.
      status: 'info',
      details: [
        `${ac ? `application credential ${ac.id} has no access rules` : 'not an application credential'}: it can make every call its roles allow${admin ? ' (admin: any call at all)' : ''}`,
        `create it with \`--access-rules\` from \`aicerine credentials\` (${calls.length} rules)`,
      ],
      ifNot:
        f.kind === 'actuator'
          ? 'a leaked actuator secret could do anything its roles allow, far beyond migrations and ratios'
          : 'a leaked secret could do anything its roles allow',
    });
  } else {
    const wider = rules.filter((r) => !within(r, calls));
    out.push({
      ...base,
      id: id('restricted'),
      title: `${f.label} is restricted by access rules to its calls`,
      status: wider.length > 0 || !ac.restricted ? 'info' : 'ok',
      details: [
        ...(wider.length > 0
          ? [
              `rules beyond the ${f.kind}'s calls: ${wider.map((r) => `${r.service} ${r.method} ${r.path}`).join(', ')}${
                has.has('admin') ? ' (with admin, these pass any policy)' : ''
              }`,
            ]
          : [`${rules.length} rules, none beyond the ${f.kind}'s calls`]),
        ...(ac.restricted ? [] : ['unrestricted: it may create other application credentials and trusts']),
      ],
      ifNot: 'a leaked secret could make calls Aicerine never makes',
    });
    const missing = new Map<string, string>();
    for (const c of API_CALLS) {
      if (c.for !== f.kind || (c.service === 'network' && !f.withNetwork)) continue;
      const path = `${f.prefixes[c.service]}${c.path}`;
      if (!rules.some((r) => accessRuleMatches(r, c.service, c.method, samplePath(path))))
        missing.set(`${c.service} ${c.method} ${path}`, c.why);
    }
    out.push({
      ...base,
      id: id('covers'),
      title: `${f.label}'s access rules cover every call the service makes with it`,
      status: missing.size > 0 ? 'fail' : 'ok',
      details:
        missing.size > 0
          ? [...missing].map(([call, reason]) => `not covered: ${call} (${reason})`)
          : [`all ${calls.length} calls covered`],
      ifNot: 'Keystone refuses those calls (401): the service cannot do that part of its work',
    });
  }
  return out;
}

export interface CredentialToCheck {
  kind: CredentialKind;
  label: string;
  /** Opens (and authenticates) a session with the credential. */
  open: () => Promise<CloudSession>;
}

/** Authenticates each credential, reads its catalog's path prefixes, and judges it. */
export async function checkCredentials(
  credentials: CredentialToCheck[],
  roles: CredentialRoles = DEFAULT_CREDENTIAL_ROLES,
): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const c of credentials) {
    let facts: CredentialFacts;
    try {
      const s = await c.open();
      const token = await s.token();
      const withNetwork = await s
        .service('network')
        .endpoint()
        .then(
          () => true,
          () => false,
        );
      const prefixes = await prefixesFromCatalog((t) => s.service(t).endpoint(), withNetwork);
      facts = { kind: c.kind, label: c.label, token, prefixes, withNetwork };
    } catch (e) {
      facts = {
        kind: c.kind,
        label: c.label,
        token: { error: e instanceof Error ? e.message : String(e) },
        prefixes: DEFAULT_PREFIXES,
        withNetwork: false,
      };
    }
    out.push(...judgeCredential(facts, roles));
  }
  return out;
}
