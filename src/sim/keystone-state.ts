// Keystone's part of the simulator: users, projects, roles, tokens and application
// credentials with access rules. Secrets are compared, never logged.
import { createHash, randomBytes } from 'node:crypto';
import { keystoneId } from './ids.js';
import { ADMIN_PROJECT, ADMIN_USER } from './model.js';

export interface SimUser {
  id: string;
  name: string;
  password: string;
  /** Project id -> role names. */
  roles: Map<string, string[]>;
}

export interface SimProject {
  id: string;
  name: string;
}

export interface AccessRule {
  id: string;
  service: string;
  method: string;
  path: string;
}

export interface AppCredential {
  id: string;
  name: string;
  description: string | null;
  userId: string;
  projectId: string;
  roles: string[];
  secretHash: string;
  unrestricted: boolean;
  expiresAt: string | null;
  accessRules: AccessRule[];
}

export interface TokenInfo {
  token: string;
  userId: string;
  projectId: string;
  roles: string[];
  methods: string[];
  issuedMs: number;
  expiresMs: number;
  auditId: string;
  appCredential: AppCredential | null;
  /** When a service (by type) first validated it: keystonemiddleware's token cache. */
  cachedBy: Map<string, number>;
}

/** Why Keystone no longer accepts a token it issued, for its 404. */
export type TokenRefusal = { ok: false; message: string };

export const DOMAIN = { id: 'default', name: 'Default' } as const;

export class KeystoneState {
  readonly users = new Map<string, SimUser>();
  readonly projects = new Map<string, SimProject>();
  readonly roleIds = new Map<string, string>();
  readonly tokens = new Map<string, TokenInfo>();
  readonly appCredentials = new Map<string, AppCredential>();
  // Keystone's [token] expiration as the lab (and many deployments) set it: 24 h.
  tokenLifetimeSeconds = 86400;
  // keystonemiddleware's token_cache_time default.
  tokenCacheSeconds = 300;

  constructor(password: string, extraProjects: Iterable<string>) {
    for (const r of ['admin', 'member', 'reader']) this.roleIds.set(r, keystoneId('role', r));
    const demoProject = keystoneId('project', 'demo');
    this.projects.set(ADMIN_PROJECT, { id: ADMIN_PROJECT, name: 'admin' });
    this.projects.set(demoProject, { id: demoProject, name: 'demo' });
    for (const p of extraProjects) if (!this.projects.has(p)) this.projects.set(p, { id: p, name: p });
    this.users.set(ADMIN_USER, {
      id: ADMIN_USER,
      name: 'admin',
      password,
      roles: new Map([[ADMIN_PROJECT, ['admin', 'member', 'reader']]]),
    });
    const demo = keystoneId('user', 'demo');
    this.users.set(demo, {
      id: demo,
      name: 'demo',
      password,
      roles: new Map([[demoProject, ['member', 'reader']]]),
    });
  }

  /** Keystone drops the project, every role assignment on it and the tokens scoped to it. */
  deleteProject(id: string): void {
    this.projects.delete(id);
    for (const u of this.users.values()) u.roles.delete(id);
    for (const [tok, t] of this.tokens) if (t.projectId === id) this.tokens.delete(tok);
  }

  userByName(name: string): SimUser | undefined {
    for (const u of this.users.values()) if (u.name === name) return u;
    return undefined;
  }

  projectByName(name: string): SimProject | undefined {
    for (const p of this.projects.values()) if (p.name === name) return p;
    return undefined;
  }

  issue(
    user: SimUser,
    projectId: string,
    methods: string[],
    nowMs: number,
    appCredential: AppCredential | null = null,
    expiresMs?: number,
  ): TokenInfo {
    const roles = appCredential ? appCredential.roles : (user.roles.get(projectId) ?? []);
    const info: TokenInfo = {
      token: `gAAAAA${randomBytes(90).toString('base64url')}`,
      userId: user.id,
      projectId,
      roles,
      methods,
      issuedMs: nowMs,
      expiresMs: expiresMs ?? nowMs + this.tokenLifetimeSeconds * 1000,
      auditId: randomBytes(16).toString('base64url').slice(0, 22),
      appCredential,
      cachedBy: new Map(),
    };
    this.tokens.set(info.token, info);
    return info;
  }

  /** A token that is known and not expired (wall clock: tokens are about clients, not the simulated cloud). */
  validate(token: string | undefined, nowMs: number): TokenInfo | null {
    const t = this.lookup(token, nowMs);
    return t && this.stillBacked(t) ? t : null;
  }

  /**
   * What Keystone says about a token it issued but no longer backs (its application credential
   * was deleted): the 404 of GET /v3/auth/tokens. Null when the token is valid or unknown.
   */
  refusal(token: string | undefined, nowMs: number): string | null {
    const t = this.lookup(token, nowMs);
    if (!t || this.stillBacked(t)) return null;
    return `Could not find Application Credential: ${t.appCredential?.id}.`;
  }

  /**
   * A token as a service's keystonemiddleware sees it: once validated, it is cached for
   * token_cache_time (300 s) and accepted from the cache even if Keystone would now refuse it
   * (the lab's nova-api kept serving a token whose application credential had been deleted).
   */
  validateFor(service: string, token: string | undefined, nowMs: number): TokenInfo | null {
    const t = this.lookup(token, nowMs);
    if (!t) return null;
    const cached = t.cachedBy.get(service);
    if (cached !== undefined && nowMs < cached + this.tokenCacheSeconds * 1000) return t;
    if (!this.stillBacked(t)) return null;
    t.cachedBy.set(service, nowMs);
    return t;
  }

  private lookup(token: string | undefined, nowMs: number): TokenInfo | null {
    if (!token) return null;
    const t = this.tokens.get(token);
    if (!t) return null;
    if (t.expiresMs <= nowMs) {
      this.tokens.delete(token);
      return null;
    }
    return t;
  }

  private stillBacked(t: TokenInfo): boolean {
    return t.appCredential === null || this.appCredentials.has(t.appCredential.id);
  }

  createAppCredential(
    user: SimUser,
    projectId: string,
    fields: {
      name: string;
      description: string | null;
      secret: string | undefined;
      roles: string[];
      unrestricted: boolean;
      expiresAt: string | null;
      accessRules: Omit<AccessRule, 'id'>[];
    },
  ): { cred: AppCredential; secret: string } {
    const secret = fields.secret ?? randomBytes(48).toString('base64url');
    const cred: AppCredential = {
      id: keystoneId('appcred', user.id, fields.name, randomBytes(8).toString('hex')),
      name: fields.name,
      description: fields.description,
      userId: user.id,
      projectId,
      roles: fields.roles,
      secretHash: hashSecret(secret),
      unrestricted: fields.unrestricted,
      expiresAt: fields.expiresAt,
      accessRules: fields.accessRules.map((r) => ({
        ...r,
        id: keystoneId('access-rule', r.service, r.method, r.path),
      })),
    };
    this.appCredentials.set(cred.id, cred);
    return { cred, secret };
  }

  checkSecret(cred: AppCredential, secret: string): boolean {
    return cred.secretHash === hashSecret(secret);
  }
}

function hashSecret(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/**
 * Whether an access rule allows a request, as keystonemiddleware checks it: same service type
 * and method, and the path matches, where `*` is one segment and `**` any number of them.
 */
export function accessRuleAllows(rule: AccessRule, service: string, method: string, path: string): boolean {
  if (rule.service !== service || rule.method.toUpperCase() !== method.toUpperCase()) return false;
  const re = new RegExp(
    `^${rule.path
      .split('/')
      .map((seg) =>
        seg === '**' ? '.*' : seg === '*' ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/')}$`,
  );
  return re.test(path.replace(/\/+$/, '') || '/');
}
