// Opens what a service configuration names: the store, the reader and actuator sessions, the
// broker URL with its password. Secrets are read here, from where the operator keeps them, and
// never written anywhere else.
import { readSettingsFile } from '../cloud/config-file.js';
import type { IncrementalOptions } from '../cloud/incremental-record.js';
import type { Logger } from '../cloud/log.js';
import { parseMetricsPolicy } from '../cloud/prometheus/policy.js';
import { type CloudSession, openSession } from '../cloud/session.js';
import { readSecret, sessionSourceFor } from '../config/credentials.js';
import type { ServiceConfig, StoreConfig } from '../config/types.js';
import type { StoreOptions } from '../store/connect.js';
import { openStore, type Store } from '../store/store.js';

export async function storeOptions(c: StoreConfig): Promise<StoreOptions> {
  if (c.kind === 'sqlite') return { kind: 'sqlite', path: c.path };
  return {
    kind: 'mysql',
    ...(c.socketPath !== null ? { socketPath: c.socketPath } : {}),
    ...(c.host !== null ? { host: c.host } : {}),
    ...(c.port !== null ? { port: c.port } : {}),
    user: c.user,
    database: c.database,
    ...(c.password ? { password: await readSecret(c.password) } : {}),
  };
}

export interface OpenedService {
  store: Store;
  reader: CloudSession;
  actuator: CloudSession;
  recorder: IncrementalOptions;
  notificationsUrl: string | null;
  /** Lines to say at start (e.g. no actuator credential configured). */
  notes: string[];
}

export async function openServiceParts(config: ServiceConfig, logger: Logger): Promise<OpenedService> {
  const notes: string[] = [];
  const prometheusUrl = config.prometheus?.url;
  const reader = await openSession({
    ...sessionSourceFor(config.openstack.reader),
    ...(prometheusUrl ? { prometheusUrl } : {}),
    logger,
  });
  let actuator = reader;
  if (config.openstack.actuator) {
    actuator = await openSession({ ...sessionSourceFor(config.openstack.actuator), logger });
  } else {
    notes.push(
      'openstack.actuator is not set: migrations and ratio writes use the reader credential (see `aicerine credentials` for a restricted actuator)',
    );
  }
  const metricsPolicy = config.prometheus?.metricsPolicyFile
    ? parseMetricsPolicy(
        await readSettingsFile(config.prometheus.metricsPolicyFile),
        config.prometheus.metricsPolicyFile,
      )
    : undefined;
  let notificationsUrl: string | null = null;
  if (config.notifications) {
    notificationsUrl = config.notifications.url;
    if (config.notifications.password) {
      const u = new URL(notificationsUrl.replace(/^rabbit:/, 'amqp:'));
      u.password = await readSecret(config.notifications.password);
      notificationsUrl = u.toString();
    }
  }
  const store = await openStore(await storeOptions(config.store));
  return {
    store,
    reader,
    actuator,
    recorder: {
      ...(metricsPolicy ? { metricsPolicy } : {}),
      ...(config.storage ? { storage: config.storage } : {}),
    },
    notificationsUrl,
    notes,
  };
}
