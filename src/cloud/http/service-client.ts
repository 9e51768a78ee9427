// Requests to one catalog service on behalf of an authenticated session: endpoint from the
// catalog, token header, one re-authentication on 401, errors that carry the service's message.
import type { Authenticator } from '../auth/keystone.js';
import { CloudError } from '../errors.js';
import type { HttpResponse, HttpTransport } from './transport.js';

export type Query = Record<string, string | number | boolean | undefined | (string | number)[]>;

export interface ServiceRequest {
  method: string;
  /** Path below the endpoint ("/servers/detail"), or an absolute URL (a "next" link). */
  path: string;
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  idempotent?: boolean;
  /** false: send no token (version documents are public, and stay outside access rules). */
  auth?: boolean;
  /** Statuses that are answers, not errors (e.g. 404 when probing). Default: 2xx only. */
  accept?: number[];
}

/** One request made with a credential, as the audit log and the HTTP log record it (no secrets). */
export interface CallRecord {
  /** Which credential made it (its kind and where it comes from, never its secret). */
  credential: string;
  service: string;
  method: string;
  /** URL path without the query string. */
  path: string;
  /** The HTTP status; undefined when no answer came (timeout, unreachable). */
  status: number | undefined;
  requestId: string | undefined;
  ms: number;
}

/** What a session allows its clients to send, and who hears about what was sent. */
export interface RequestPolicy {
  /** The credential's label in CallRecords and refusals. */
  credential: string;
  /** A reason to refuse an authenticated request before it is sent; undefined lets it through. */
  refuse?(service: string, method: string, url: URL, endpoint: URL): string | undefined;
  /** Called after every authenticated request with what came back; awaited, never throws into the caller. */
  observe?(call: CallRecord): Promise<void> | void;
}

export function buildUrl(base: string, path: string, query?: Query): string {
  const url = new URL(/^https?:\/\//.test(path) ? path : `${base}${path.startsWith('/') ? '' : '/'}${path}`);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
    else url.searchParams.set(k, String(v));
  }
  return url.toString();
}

/** The human message inside an OpenStack error body ({"badRequest": {"message": …}}, {"errors": [{detail}]}). */
export function openstackMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim().slice(0, 300) || undefined;
  if (!body || typeof body !== 'object') return undefined;
  const rec = body as Record<string, unknown>;
  if (Array.isArray(rec.errors)) {
    const first = rec.errors[0] as { detail?: unknown; title?: unknown } | undefined;
    if (first) return String(first.detail ?? first.title ?? '');
  }
  for (const v of Object.values(rec)) {
    if (v && typeof v === 'object' && 'message' in v) return String((v as { message: unknown }).message);
  }
  if (typeof rec.message === 'string') return rec.message;
  return undefined;
}

function errorCode(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || !errors[0] || typeof errors[0] !== 'object') return undefined;
  const code = (errors[0] as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

export class ServiceClient {
  private base: string | undefined;

  constructor(
    readonly serviceType: string,
    private readonly auth: Authenticator,
    private readonly http: HttpTransport,
    private readonly defaultHeaders: () => Record<string, string> = () => ({}),
    /** A fixed endpoint instead of the catalog's (tests, or an operator override). */
    private readonly endpointOverride?: string,
    private readonly policy?: RequestPolicy,
  ) {}

  async endpoint(): Promise<string> {
    if (!this.base) this.base = this.endpointOverride ?? (await this.auth.endpoint(this.serviceType));
    return this.base;
  }

  async request(req: ServiceRequest): Promise<HttpResponse> {
    const endpoint = await this.endpoint();
    const url = buildUrl(endpoint, req.path, req.query);
    const policy = req.auth === false ? undefined : this.policy;
    const refusal = policy?.refuse?.(
      this.serviceType,
      req.method.toUpperCase(),
      new URL(url),
      new URL(endpoint),
    );
    if (policy && refusal !== undefined) {
      throw new CloudError(
        'not-allowed',
        `${this.serviceType}: ${req.method} ${new URL(url).pathname} not sent: the ${policy.credential} credential ${refusal}`,
        {
          fix: 'Use the credential meant for this call; a new call belongs in API_CALLS (src/cloud/credentials.ts), which also generates the access rules',
        },
      );
    }
    let reauthed = false;
    for (;;) {
      const tok = req.auth === false ? undefined : await this.auth.token();
      const started = Date.now();
      let res: HttpResponse;
      try {
        res = await this.http.send({
          method: req.method,
          url,
          service: this.serviceType,
          headers: {
            ...(tok ? { 'X-Auth-Token': tok.token } : {}),
            ...this.defaultHeaders(),
            ...req.headers,
          },
          ...(req.body === undefined ? {} : { body: req.body }),
          ...(req.idempotent === undefined ? {} : { idempotent: req.idempotent }),
        });
      } catch (e) {
        await this.observe(policy, req.method, url, undefined, undefined, started);
        throw e;
      }
      await this.observe(policy, req.method, url, res.status, res.requestId, started);
      if (res.status === 401 && tok && !reauthed) {
        // The token may have been revoked or expired early: one fresh token, never a loop.
        this.auth.invalidate(tok.token);
        reauthed = true;
        continue;
      }
      if ((res.status >= 200 && res.status < 300) || req.accept?.includes(res.status)) return res;
      throw this.toError(req, res);
    }
  }

  private async observe(
    policy: RequestPolicy | undefined,
    method: string,
    url: string,
    status: number | undefined,
    requestId: string | undefined,
    started: number,
  ): Promise<void> {
    if (!policy?.observe) return;
    try {
      await policy.observe({
        credential: policy.credential,
        service: this.serviceType,
        method: method.toUpperCase(),
        path: new URL(url).pathname,
        status,
        requestId,
        ms: Date.now() - started,
      });
    } catch {
      // The observer (an audit write) failing must not turn a call that happened into one that did not.
    }
  }

  async get<T = unknown>(path: string, query?: Query): Promise<T> {
    return (await this.request({ method: 'GET', path, ...(query ? { query } : {}) })).body as T;
  }

  private toError(req: ServiceRequest, res: HttpResponse): CloudError {
    const msg = openstackMessage(res.body) ?? 'no message';
    const where = `${req.method} ${new URL(res.url).pathname}`;
    const code = errorCode(res.body);
    const base = {
      status: res.status,
      ...(res.requestId ? { requestId: res.requestId } : {}),
      ...(code ? { code } : {}),
    };
    if (res.status === 401) {
      return new CloudError(
        'auth',
        `${this.serviceType}: ${where} refused after a fresh token (401): ${msg}`,
        {
          ...base,
          fix: 'The credential is not allowed to make this call (application credential access rules, or a revoked token)',
        },
      );
    }
    if (res.status === 403) {
      return new CloudError('auth', `${this.serviceType}: ${where} forbidden by policy (403): ${msg}`, {
        ...base,
        fix: 'Give the credential a role that the service policy allows (see `aicerine credentials`)',
      });
    }
    if (res.status === 409) {
      return new CloudError('conflict', `${this.serviceType}: ${where} conflict (409): ${msg}`, base);
    }
    return new CloudError(
      'http',
      `${this.serviceType}: ${where} failed (${res.status}): ${msg}${res.requestId ? ` [request ${res.requestId}]` : ''}`,
      base,
    );
  }
}
