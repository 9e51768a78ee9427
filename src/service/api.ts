// The REST API of a running service: built on its store, configuration and control port, with
// the loop's latest snapshot for host figures and what-if, Keystone validating callers (or the
// loopback no-auth mode), metrics fed by every cycle, operator tasks on the service's own task
// service and worker, and bound where the configuration says.

import {
  type ApiLogger,
  ApiMetrics,
  buildApi,
  createApiLogger,
  DEFAULT_API_POLICY,
  keystoneValidatorFor,
  listenApi,
  loadApiPolicy,
  type ZodApp,
} from '../api/index.js';
import { KeystoneTokenIssuer } from '../api/login.js';
import { recordSnapshot } from '../cloud/record.js';
import type { CloudSession } from '../cloud/session.js';
import type { ServiceConfig } from '../config/types.js';
import type { Store } from '../store/store.js';
import type { AicerineService } from './service.js';

export interface ServiceApiOptions {
  service: AicerineService;
  store: Store;
  config: ServiceConfig;
  /** The reader session: validates callers' tokens, forwards logins, records snapshots. */
  reader: CloudSession;
  /** The loopback no-auth mode (demo): refused on any other address. */
  noAuth: boolean;
  /** Overrides config.api.host / port (the demo's --port). */
  host?: string;
  port?: number;
  logger?: ApiLogger;
  now?: () => Date;
}

export interface ServiceApi {
  app: ZodApp;
  metrics: ApiMetrics;
  /** Where it listens: http://host:port. */
  url: string;
  close(): Promise<void>;
}

export async function startServiceApi(o: ServiceApiOptions): Promise<ServiceApi> {
  const metrics = new ApiMetrics();
  o.service.onCycle((report, seconds) =>
    metrics.cycleCompleted({ durationSeconds: seconds, outcome: report === null ? 'failed' : 'ok' }),
  );
  const policy = o.config.api.policyFile ? await loadApiPolicy(o.config.api.policyFile) : DEFAULT_API_POLICY;
  const app = await buildApi({
    store: o.store,
    config: o.config,
    control: o.service.control(),
    auth: o.noAuth
      ? { kind: 'none' }
      : { kind: 'keystone', validator: keystoneValidatorFor(o.reader), policy },
    ...(o.noAuth ? {} : { login: new KeystoneTokenIssuer(o.reader.config.auth.authUrl) }),
    snapshots: {
      latest: () => o.service.latestSnapshot(),
      lastDecision: (aggregate) => o.service.lastDecision(aggregate),
      // The service's clock, as for the cycles' recordings (the demo's runs ahead of the wall).
      record: async () =>
        (
          await recordSnapshot(o.reader, {
            source: 'aicerine serve (operator)',
            ...(o.now ? { now: o.now } : {}),
          })
        ).snapshot,
    },
    logger: o.logger ?? createApiLogger(),
    metrics,
    tasks: o.service.tasks.service,
    maintenance: o.service.tasks.maintenance,
    ...(o.service.ownership !== null ? { replicas: o.service.ownership } : {}),
    ...(o.now ? { now: o.now } : {}),
    listenHost: o.host ?? o.config.api.host,
  });
  const url = await listenApi(app, {
    host: o.host ?? o.config.api.host,
    port: o.port ?? o.config.api.port,
    noAuth: o.noAuth,
  });
  return { app, metrics, url, close: () => app.close() };
}
