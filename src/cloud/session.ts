// One authenticated session on a cloud: the clients every command uses, sharing one token,
// one transport (retries, breakers) and one call counter.
import { type LoadCloudOptions, loadCloudConfig } from './auth/clouds-yaml.js';
import type { CloudConfig } from './auth/config.js';
import { Authenticator, type AuthenticatorOptions, type TokenInfo } from './auth/keystone.js';
import { type CredentialKind, callRefusal } from './credentials.js';
import type { BreakerSettings, RetrySettings } from './http/resilience.js';
import { type CallRecord, type RequestPolicy, ServiceClient } from './http/service-client.js';
import type { CallStats } from './http/stats.js';
import { HttpTransport } from './http/transport.js';
import type { Logger } from './log.js';
import type { Version } from './openstack/microversion.js';
import { NovaClient, type NovaOptions } from './openstack/nova.js';
import { PlacementClient } from './openstack/placement.js';
import { PrometheusClient } from './prometheus/client.js';

export interface SessionOptions {
  /** A resolved cloud; otherwise resolved from clouds.yaml / OS_* with `load`. */
  config?: CloudConfig;
  load?: LoadCloudOptions;
  prometheusUrl?: string;
  logger?: Logger;
  timeoutMs?: number;
  retry?: RetrySettings;
  breaker?: BreakerSettings;
  auth?: AuthenticatorOptions;
  nova?: NovaOptions;
  placement?: { need?: Version; want?: Version };
  /** Endpoint URLs that replace the catalog's, by service type. */
  endpointOverrides?: Record<string, string>;
  /** Authenticate now (default), so configuration errors surface before any work. */
  eager?: boolean;
  /**
   * The role this session plays in the service: its clients then refuse, before sending, any
   * call that is not the kind's (API_CALLS), and `observe` hears about every call made.
   */
  credential?: SessionCredential;
}

export interface SessionCredential {
  kind: CredentialKind;
  /** How it is named in logs and the audit log: where it comes from, never its secret. */
  label: string;
  observe?: (call: CallRecord) => Promise<void> | void;
  /**
   * Whether the session refuses calls outside its kind's table (default true). Only the tasks
   * credential's administrative session sets false: validate-compute and purge-project create
   * projects, flavors and traits and reach other projects, which no access rule can narrow
   * (access rules exist only on application credentials, and those cannot be scoped to the
   * canary's project). Its calls are still audited.
   */
  restricted?: boolean;
}

export interface CloudSession {
  config: CloudConfig;
  auth: Authenticator;
  http: HttpTransport;
  stats: CallStats;
  nova: NovaClient;
  placement: PlacementClient;
  prometheus: PrometheusClient | undefined;
  /** A client for any catalog service type ("network", "identity", ...). */
  service(type: string): ServiceClient;
  /** The current token's details (user, project, roles). */
  token(): Promise<TokenInfo>;
  /** Set when the session was opened for one role of the service (its calls are then restricted). */
  credential:
    | { kind: CredentialKind; label: string; observe?: (call: CallRecord) => Promise<void> | void }
    | undefined;
}

export async function openSession(opts: SessionOptions = {}): Promise<CloudSession> {
  const config = opts.config ?? (await loadCloudConfig(opts.load));
  const http = new HttpTransport({
    ...(config.cacert ? { cacert: config.cacert } : {}),
    insecure: config.insecure,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.retry ? { retry: opts.retry } : {}),
    ...(opts.breaker ? { breaker: opts.breaker } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.credential ? { credential: opts.credential.label } : {}),
  });
  const cred = opts.credential;
  const policy: RequestPolicy | undefined = cred
    ? {
        credential: cred.label,
        ...(cred.restricted === false
          ? {}
          : {
              refuse: (svc: string, method: string, url: URL, endpoint: URL) =>
                callRefusal(cred.kind, svc, method, url, endpoint),
            }),
        ...(cred.observe ? { observe: cred.observe } : {}),
      }
    : undefined;
  const auth = new Authenticator(config, http, opts.auth);
  const clients = new Map<string, ServiceClient>();
  const service = (type: string): ServiceClient => {
    let c = clients.get(type);
    if (!c) {
      c = new ServiceClient(type, auth, http, () => ({}), opts.endpointOverrides?.[type], policy);
      clients.set(type, c);
    }
    return c;
  };
  if (opts.eager !== false) await auth.token();
  return {
    config,
    auth,
    http,
    stats: http.stats,
    nova: new NovaClient(service('compute'), opts.nova),
    placement: new PlacementClient(service('placement'), opts.placement),
    prometheus: opts.prometheusUrl ? new PrometheusClient(opts.prometheusUrl, http) : undefined,
    service,
    token: () => auth.token(),
    credential: cred
      ? { kind: cred.kind, label: cred.label, ...(cred.observe ? { observe: cred.observe } : {}) }
      : undefined,
  };
}
