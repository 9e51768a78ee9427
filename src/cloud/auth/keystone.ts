// Keystone v3 authentication (password, application credential, token), with the token kept
// until shortly before it expires.
import { CloudError } from '../errors.js';
import type { HttpTransport } from '../http/transport.js';
import { type CatalogService, findEndpoint, parseCatalog } from './catalog.js';
import type { CloudConfig } from './config.js';

export interface TokenInfo {
  token: string;
  expiresAt: Date;
  catalog: CatalogService[];
  userId: string | undefined;
  projectId: string | undefined;
  roles: string[];
  /** Set when the token came from an application credential with access rules. */
  applicationCredentialId: string | undefined;
  /** The application credential behind the token, as Keystone describes it in the token. */
  applicationCredential: TokenAppCredential | undefined;
}

export interface TokenAppCredential {
  id: string;
  name: string;
  /** false: an unrestricted credential, which may create more credentials and trusts. */
  restricted: boolean;
  /** Empty: no access rules, every call its roles allow. */
  accessRules: { service: string; method: string; path: string }[];
}

function tokenAppCredential(v: unknown): TokenAppCredential | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.id !== 'string') return undefined;
  const rules = Array.isArray(r.access_rules) ? r.access_rules : [];
  return {
    id: r.id,
    name: typeof r.name === 'string' ? r.name : '',
    restricted: r.restricted !== false,
    accessRules: rules.flatMap((x) => {
      if (!x || typeof x !== 'object') return [];
      const a = x as Record<string, unknown>;
      return typeof a.service === 'string' && typeof a.method === 'string' && typeof a.path === 'string'
        ? [{ service: a.service, method: a.method.toUpperCase(), path: a.path }]
        : [];
    }),
  };
}

function identityUrl(authUrl: string): string {
  const base = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(base) ? base : `${base}/v3`;
}

function domain(name: string | undefined, id: string | undefined): Record<string, string> | undefined {
  if (id) return { id };
  if (name) return { name };
  return undefined;
}

export function authRequestBody(cfg: CloudConfig): unknown {
  const a = cfg.auth;
  let identity: Record<string, unknown>;
  if (cfg.method === 'password') {
    const user: Record<string, unknown> = { password: a.password };
    if (a.userId) user.id = a.userId;
    else {
      user.name = a.username;
      user.domain = domain(a.userDomainName, a.userDomainId) ?? { id: 'default' };
    }
    identity = { methods: ['password'], password: { user } };
  } else if (cfg.method === 'application-credential') {
    const cred: Record<string, unknown> = { secret: a.applicationCredentialSecret };
    if (a.applicationCredentialId) cred.id = a.applicationCredentialId;
    else {
      cred.name = a.applicationCredentialName;
      cred.user = {
        name: a.username,
        domain: domain(a.userDomainName, a.userDomainId) ?? { id: 'default' },
      };
    }
    // An application credential carries its own scope: sending one is refused by Keystone.
    return { auth: { identity: { methods: ['application_credential'], application_credential: cred } } };
  } else {
    identity = { methods: ['token'], token: { id: a.token } };
  }
  let scope: unknown;
  if (a.projectId) scope = { project: { id: a.projectId } };
  else if (a.projectName) {
    scope = {
      project: {
        name: a.projectName,
        domain: domain(a.projectDomainName, a.projectDomainId) ?? { id: 'default' },
      },
    };
  }
  return { auth: scope ? { identity, scope } : { identity } };
}

function keystoneMessage(body: unknown): string | undefined {
  if (body && typeof body === 'object' && 'error' in body) {
    const err = (body as { error: unknown }).error;
    if (err && typeof err === 'object' && 'message' in err)
      return String((err as { message: unknown }).message);
  }
  return undefined;
}

export async function authenticate(cfg: CloudConfig, http: HttpTransport): Promise<TokenInfo> {
  const url = `${identityUrl(cfg.auth.authUrl)}/auth/tokens`;
  let res: Awaited<ReturnType<HttpTransport['send']>>;
  try {
    // Sending the same credentials twice is harmless, so a lost answer may be retried.
    res = await http.send({
      method: 'POST',
      url,
      body: authRequestBody(cfg),
      service: 'identity',
      idempotent: true,
    });
  } catch (e) {
    if (
      e instanceof CloudError &&
      (e.kind === 'unreachable' || e.kind === 'timeout' || e.kind === 'circuit-open')
    ) {
      const detail = /\(([^()]*)\)$/.exec(e.message.split('. ')[0] ?? '')?.[1] ?? e.message;
      throw new CloudError('unreachable', `Keystone at ${cfg.auth.authUrl} cannot be reached (${detail})`, {
        fix: `Check OS_AUTH_URL (${cfg.origin}), the network path and that Keystone is running`,
        cause: e,
      });
    }
    throw e;
  }
  const what =
    cfg.method === 'password'
      ? `user ${cfg.auth.username ?? cfg.auth.userId}`
      : cfg.method === 'application-credential'
        ? `application credential ${cfg.auth.applicationCredentialId ?? cfg.auth.applicationCredentialName}`
        : 'the given token';
  if (res.status === 401) {
    const fix =
      cfg.method === 'password'
        ? 'Check OS_USERNAME, OS_PASSWORD and OS_USER_DOMAIN_NAME'
        : cfg.method === 'application-credential'
          ? 'Check OS_APPLICATION_CREDENTIAL_ID and _SECRET; the credential may have expired or been deleted'
          : 'Get a fresh token (openstack token issue) and set OS_TOKEN';
    throw new CloudError('auth', `Keystone at ${cfg.auth.authUrl} refused ${what} (401)`, {
      fix,
      status: 401,
      ...(res.requestId ? { requestId: res.requestId } : {}),
    });
  }
  if (res.status !== 201 && res.status !== 200) {
    throw new CloudError(
      'auth',
      `Keystone at ${cfg.auth.authUrl} answered ${res.status} to ${what}: ${keystoneMessage(res.body) ?? 'no message'}`,
      {
        fix: 'Check the project and domain settings (OS_PROJECT_NAME, OS_PROJECT_DOMAIN_NAME, OS_USER_DOMAIN_NAME)',
        status: res.status,
      },
    );
  }
  const token = res.headers.get('x-subject-token');
  const body = res.body as { token?: Record<string, unknown> } | undefined;
  const t = body?.token;
  if (!token || !t || typeof t.expires_at !== 'string') {
    throw new CloudError(
      'protocol',
      `Keystone at ${cfg.auth.authUrl} answered ${res.status} without a token`,
    );
  }
  const roles = Array.isArray(t.roles)
    ? t.roles.map((r) => (r && typeof r === 'object' ? String((r as { name?: unknown }).name) : ''))
    : [];
  const user = t.user as { id?: string } | undefined;
  const project = t.project as { id?: string } | undefined;
  const appCred = t.application_credential as { id?: string } | undefined;
  const applicationCredential = tokenAppCredential(t.application_credential);
  return {
    token,
    expiresAt: new Date(t.expires_at),
    catalog: parseCatalog(t.catalog),
    userId: user?.id,
    projectId: project?.id,
    roles,
    applicationCredentialId: appCred?.id,
    applicationCredential,
  };
}

export interface AuthenticatorOptions {
  /** Renew when the token has less than this left (ms). */
  renewBeforeMs?: number;
  now?: () => number;
}

/** Holds the current token; renews it before expiry and on demand after a 401. */
export class Authenticator {
  private current: TokenInfo | undefined;
  private pending: Promise<TokenInfo> | undefined;
  private readonly renewBeforeMs: number;
  private readonly now: () => number;

  constructor(
    readonly config: CloudConfig,
    private readonly http: HttpTransport,
    opts: AuthenticatorOptions = {},
  ) {
    this.renewBeforeMs = opts.renewBeforeMs ?? 5 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  async token(): Promise<TokenInfo> {
    const cur = this.current;
    if (cur && cur.expiresAt.getTime() - this.now() > this.renewBeforeMs) return cur;
    if (!this.pending) {
      this.pending = authenticate(this.config, this.http).finally(() => {
        this.pending = undefined;
      });
    }
    this.current = await this.pending;
    return this.current;
  }

  /** Forgets the token so the next call authenticates again (after a 401). */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  async endpoint(serviceType: string): Promise<string> {
    const t = await this.token();
    return findEndpoint(t.catalog, serviceType, this.config.interface, this.config.regionName);
  }
}
