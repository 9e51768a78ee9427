// X-Auth-Token validation against Keystone, as keystonemiddleware does it: the service presents
// its own token and asks GET /v3/auth/tokens about the caller's (X-Subject-Token). An answer is
// cached until the token expires, but for at most `cacheTtlMs`, so a revoked token stops working
// within that time. Cache keys are hashes: the tokens themselves are never kept or logged.
import { createHash } from 'node:crypto';

export interface Caller {
  userId: string;
  userName: string;
  projectId: string | null;
  projectName: string | null;
  roles: string[];
  /** A system-scoped token (`"system": {"all": true}`): its roles hold for the whole cloud. */
  system: boolean;
  /** What the audit log records as the credential: the token's audit id, never the token. */
  credential: string;
  expiresAt: string;
}

/** Keystone could not be asked (down, or refused the service's own token): answered 503. */
export class AuthUnavailableError extends Error {
  override readonly name = 'AuthUnavailableError';
}

export interface TokenValidator {
  /** The caller of a valid token, or null when Keystone does not know it (invalid, expired, revoked). */
  validate(token: string): Promise<Caller | null>;
}

export interface KeystoneValidatorOptions {
  /** The identity endpoint, with or without its /v3. */
  identityUrl: string;
  /** The service's own token (renewed by its authenticator). */
  serviceToken: () => Promise<string>;
  /** Called when Keystone refused the service token, so the next call gets a fresh one. */
  invalidateServiceToken?: (token: string) => void;
  /** How long a validation is trusted before Keystone is asked again (default 60 s). */
  cacheTtlMs?: number;
  /** Most cached tokens (default 10,000; the oldest go first). */
  cacheSize?: number;
  /**
   * How long a token Keystone refused stays refused without asking again (default 10 s), so a
   * flood of bad tokens does not become a flood of Keystone calls. A refused token never becomes
   * valid later (a new token is a new string), so this only saves calls.
   */
  refusedTtlMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

interface Cached {
  caller: Caller;
  checkedAt: number;
  expiresAt: number;
}

/** Header-safe token text; anything else is not a token (and is never sent on). */
const TOKEN = /^[\x21-\x7e]{1,8192}$/;

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export function callerFromToken(body: unknown): Caller | null {
  const t = (body as { token?: Record<string, unknown> } | null)?.token;
  if (t === undefined || t === null || typeof t !== 'object') return null;
  const user = (t.user ?? {}) as Record<string, unknown>;
  const project = (t.project ?? null) as Record<string, unknown> | null;
  const userId = str(user.id);
  const expiresAt = str(t.expires_at);
  if (userId === null || expiresAt === null || Number.isNaN(Date.parse(expiresAt))) return null;
  const roles = Array.isArray(t.roles)
    ? t.roles
        .map((r) => str((r as Record<string, unknown> | null)?.name))
        .filter((r): r is string => r !== null)
    : [];
  const auditId = Array.isArray(t.audit_ids) ? str(t.audit_ids[0]) : null;
  const appCred = (t.application_credential ?? null) as Record<string, unknown> | null;
  const credential =
    appCred !== null && str(appCred.name) !== null
      ? `application-credential:${str(appCred.name)}`
      : `token:${auditId ?? 'no-audit-id'}`;
  return {
    userId,
    userName: str(user.name) ?? userId,
    projectId: project === null ? null : str(project.id),
    projectName: project === null ? null : str(project.name),
    roles,
    system: (t.system as { all?: unknown } | null | undefined)?.all === true,
    credential,
    expiresAt,
  };
}

/** Makes room for one more entry by dropping the oldest. */
function bounded<V>(map: Map<string, V>, size: number): Map<string, V> {
  if (map.size >= size) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  return map;
}

export class KeystoneTokenValidator implements TokenValidator {
  private readonly cache = new Map<string, Cached>();
  /** Hashes of refused tokens -> when they were refused. */
  private readonly refused = new Map<string, number>();
  private readonly pending = new Map<string, Promise<Caller | null>>();
  private readonly url: string;
  private readonly ttl: number;
  private readonly size: number;
  private readonly now: () => number;

  constructor(private readonly opts: KeystoneValidatorOptions) {
    const base = opts.identityUrl.replace(/\/+$/, '');
    this.url = `${/\/v3$/.test(base) ? base : `${base}/v3`}/auth/tokens?nocatalog`;
    this.ttl = opts.cacheTtlMs ?? 60_000;
    this.size = opts.cacheSize ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  async validate(token: string): Promise<Caller | null> {
    if (!TOKEN.test(token)) return null;
    const key = createHash('sha256').update(token).digest('base64url');
    const now = this.now();
    const refusedAt = this.refused.get(key);
    if (refusedAt !== undefined) {
      if (now - refusedAt < (this.opts.refusedTtlMs ?? 10_000)) return null;
      this.refused.delete(key);
    }
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      if (now < hit.expiresAt && now - hit.checkedAt < this.ttl) return hit.caller;
      this.cache.delete(key);
    }
    let p = this.pending.get(key);
    if (p === undefined) {
      p = this.ask(token, key).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  private async ask(token: string, key: string): Promise<Caller | null> {
    let res = await this.request(token, await this.opts.serviceToken());
    if (res.status === 401) {
      // Our own token was refused (expired, revoked): renew it once.
      this.opts.invalidateServiceToken?.(res.serviceToken);
      res = await this.request(token, await this.opts.serviceToken());
      if (res.status === 401)
        throw new AuthUnavailableError('Keystone refused the service token used to validate callers (401)');
    }
    if (res.status === 404 || res.status === 403) return this.refuse(key);
    if (res.status !== 200)
      throw new AuthUnavailableError(`Keystone answered ${res.status} to a token validation`);
    const caller = callerFromToken(res.body);
    if (caller === null)
      throw new AuthUnavailableError('Keystone answered a token validation without a token');
    const expiresAt = Date.parse(caller.expiresAt);
    if (expiresAt <= this.now()) return this.refuse(key);
    bounded(this.cache, this.size).set(key, { caller, checkedAt: this.now(), expiresAt });
    return caller;
  }

  private refuse(key: string): null {
    this.cache.delete(key);
    bounded(this.refused, this.size).set(key, this.now());
    return null;
  }

  private async request(
    token: string,
    serviceToken: string,
  ): Promise<{ status: number; body: unknown; serviceToken: string }> {
    let res: Response | undefined;
    // A validation that times out or meets a 5xx is asked once more: on the lab, Keystone took
    // over 10 s to answer the first validation after a service started, while Nova and
    // Placement were validating that service's own new tokens; the next answer came in 2 s. A
    // refused connection is not retried: nothing listens, and the caller should know at once.
    for (let attempt = 1; res === undefined; attempt++) {
      try {
        const r = await fetch(this.url, {
          headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': token, Accept: 'application/json' },
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
        });
        if (r.status >= 500 && attempt < 2) {
          await r.body?.cancel();
          continue;
        }
        res = r;
      } catch (e) {
        if (attempt < 2 && isTimeout(e)) continue;
        throw new AuthUnavailableError(
          `Keystone at ${this.opts.identityUrl} cannot be reached to validate a token (${e instanceof Error ? e.message : String(e)})`,
        );
      }
    }
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: res.status, body, serviceToken };
  }
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
}

/** The v3 base of an identity URL given with or without its /v3. */
export function identityV3(identityUrl: string): string {
  const base = identityUrl.replace(/\/+$/, '');
  return /\/v3$/.test(base) ? base : `${base}/v3`;
}
