// Sends HTTP requests for every client: timeouts, TLS settings, request ids, redacted logs,
// retries of idempotent requests and one circuit breaker per endpoint origin.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type CircuitBreakerPolicy, isBrokenCircuitError } from 'cockatiel';
import { Agent, type Dispatcher, request as undiciRequest } from 'undici';
import { CloudError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import {
  type BreakerSettings,
  createBreaker,
  createRetry,
  DEFAULT_BREAKER,
  DEFAULT_RETRY,
  type RetrySettings,
  TransientFailure,
} from './resilience.js';
import { CallStats } from './stats.js';

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** JSON body. */
  body?: unknown;
  /** Service type for call counting and messages ("compute", "placement", ...). */
  service: string;
  timeoutMs?: number;
  /** Defaults to true for GET/HEAD/PUT/DELETE, false for POST/PATCH. */
  idempotent?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  body: unknown;
  /** The request id the service answered with (X-OpenStack-Request-ID, x-compute-request-id). */
  requestId: string | undefined;
  url: string;
}

export interface TransportOptions {
  cacert?: string;
  insecure?: boolean;
  timeoutMs?: number;
  retry?: RetrySettings;
  breaker?: BreakerSettings;
  logger?: Logger;
  stats?: CallStats;
  /** The credential these requests are made with, in each log line (its kind and source, no secret). */
  credential?: string;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

function responseRequestId(h: Headers): string | undefined {
  return h.get('x-openstack-request-id') ?? h.get('x-compute-request-id') ?? undefined;
}

/** The URL without its query string: query values may hold markers but never secrets; keep logs short. */
function toHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

function logUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
}

export class HttpTransport {
  readonly stats: CallStats;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly retrySettings: RetrySettings;
  private readonly breakerSettings: BreakerSettings;
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();
  private readonly dispatcher: Dispatcher | undefined;
  private readonly credential: string | undefined;

  constructor(opts: TransportOptions = {}) {
    this.stats = opts.stats ?? new CallStats();
    this.credential = opts.credential;
    this.logger = opts.logger ?? silentLogger;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retrySettings = opts.retry ?? DEFAULT_RETRY;
    this.breakerSettings = opts.breaker ?? DEFAULT_BREAKER;
    if (opts.cacert || opts.insecure) {
      let ca: string | undefined;
      if (opts.cacert) {
        try {
          ca = readFileSync(opts.cacert, 'utf8');
        } catch (e) {
          throw new CloudError(
            'config',
            `CA bundle ${opts.cacert} cannot be read (${(e as Error).message})`,
            {
              fix: 'Fix OS_CACERT (or cacert: in clouds.yaml)',
            },
          );
        }
      }
      this.dispatcher = new Agent({
        connect: { ...(ca ? { ca } : {}), rejectUnauthorized: !opts.insecure },
      });
    }
  }

  private breakerFor(url: string): CircuitBreakerPolicy {
    const origin = new URL(url).origin;
    let b = this.breakers.get(origin);
    if (!b) {
      b = createBreaker(this.breakerSettings);
      this.breakers.set(origin, b);
    }
    return b;
  }

  async send(req: HttpRequest): Promise<HttpResponse> {
    const idempotent = req.idempotent ?? IDEMPOTENT.has(req.method.toUpperCase());
    const breaker = this.breakerFor(req.url);
    const requestId = `req-${randomUUID()}`;
    let attempt = 0;
    const once = async (): Promise<HttpResponse> => {
      this.stats.count(req.service, attempt > 0);
      attempt++;
      const res = await this.fetchOnce(req, requestId, attempt);
      if (res.status >= 500) throw new TransientFailure(`HTTP ${res.status}`, res);
      return res;
    };
    const guarded = () => breaker.execute(once);
    try {
      return idempotent ? await createRetry(this.retrySettings).execute(guarded) : await guarded();
    } catch (e) {
      if (e instanceof TransientFailure) {
        if (e.payload instanceof CloudError) throw e.payload;
        return e.payload as HttpResponse;
      }
      if (isBrokenCircuitError(e)) {
        throw new CloudError(
          'circuit-open',
          `${req.service} at ${new URL(req.url).origin} failed ${this.breakerSettings.consecutiveFailures} times in a row; not sending more requests for ${Math.round(this.breakerSettings.halfOpenAfterMs / 1000)} s`,
          { fix: 'Check that the service is up (its logs, a load balancer health check) and try again' },
        );
      }
      throw e;
    }
  }

  private async fetchOnce(req: HttpRequest, requestId: string, attempt: number): Promise<HttpResponse> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': 'aicerine',
      'X-OpenStack-Request-ID': requestId,
      ...req.headers,
    };
    let body: string | undefined;
    if (req.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(req.body);
    }
    const started = Date.now();
    // undici's request() rather than fetch(): the same connection pool at about half the
    // per-call overhead, which shows when a record reads Placement twice per host.
    let res: Awaited<ReturnType<typeof undiciRequest>>;
    let text: string;
    try {
      res = await undiciRequest(req.url, {
        method: req.method as Dispatcher.HttpMethod,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(req.timeoutMs ?? this.timeoutMs),
        ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
      });
      text = await res.body.text();
    } catch (e) {
      const err = e as Error & { code?: string; cause?: { code?: string; message?: string } };
      const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError';
      const detail = timedOut
        ? `no answer within ${req.timeoutMs ?? this.timeoutMs} ms`
        : (err.cause?.code ?? err.code ?? err.cause?.message ?? err.message);
      this.logger.warn(`${req.method} ${logUrl(req.url)} failed`, {
        requestId,
        attempt,
        detail,
        ...(this.credential ? { credential: this.credential } : {}),
      });
      throw new TransientFailure(
        detail,
        new CloudError(
          timedOut ? 'timeout' : 'unreachable',
          `${req.service} at ${new URL(req.url).origin} is unreachable (${detail})`,
          { cause: e },
        ),
      );
    }
    const responseHeaders = toHeaders(res.headers);
    const ctype = responseHeaders.get('content-type') ?? '';
    let parsed: unknown = text;
    if (text !== '' && ctype.includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    const answerId = responseRequestId(responseHeaders);
    this.logger.debug(`${req.method} ${logUrl(req.url)} -> ${res.statusCode}`, {
      requestId,
      answerId,
      attempt,
      ms: Date.now() - started,
      ...(this.credential ? { credential: this.credential } : {}),
    });
    return {
      status: res.statusCode,
      headers: responseHeaders,
      body: parsed,
      requestId: answerId ?? requestId,
      url: req.url,
    };
  }
}
