// Opens what a service configuration names: the store, the reader, actuator and tasks sessions,
// the broker URL with its password, and for replicas the etcd coordination. Secrets are read here,
// from where the operator keeps them, and never written anywhere else. Each session is opened for
// its role: it refuses calls that are not its kind's, and every call made with the actuator or the
// tasks credential lands in the audit log.
import { readFile } from 'node:fs/promises';
import { Actuator } from '../cloud/actuator.js';
import { readSettingsFile } from '../cloud/config-file.js';
import type { IncrementalOptions } from '../cloud/incremental-record.js';
import type { Logger } from '../cloud/log.js';
import { parseMetricsPolicy } from '../cloud/prometheus/policy.js';
import { type CloudSession, openSession } from '../cloud/session.js';
import { credentialLabel, readSecret, sessionSourceFor } from '../config/credentials.js';
import type { CoordinationConfig, ServiceConfig, StoreConfig } from '../config/types.js';
import { EtcdLockService } from '../coordination/etcd-locks.js';
import type { StoreOptions } from '../store/connect.js';
import { openStore, type Store } from '../store/store.js';
import { auditCalls } from './call-audit.js';
import type { ServiceCoordination } from './service.js';

/**
 * Replicas: the etcd lock service of the configuration, proven to work (a probe lock taken and
 * given back) before the replica starts; null for one process (coordination: local).
 */
export async function openCoordination(c: CoordinationConfig): Promise<ServiceCoordination | null> {
  if (c.kind === 'local') return null;
  const locks = new EtcdLockService({
    endpoints: c.endpoints,
    prefix: c.prefix,
    ...(c.username !== null
      ? { auth: { username: c.username, password: c.password ? await readSecret(c.password) : '' } }
      : {}),
    ...(c.tls !== null
      ? {
          tls: {
            rootCertificate: await readFile(c.tls.caFile),
            ...(c.tls.keyFile !== null ? { privateKey: await readFile(c.tls.keyFile) } : {}),
            ...(c.tls.certFile !== null ? { certChain: await readFile(c.tls.certFile) } : {}),
          },
        }
      : {}),
  });
  try {
    await locks.probe();
  } catch (e) {
    await locks.close();
    throw e;
  }
  return {
    locks,
    replicaId: c.replicaId,
    leaseTtlMs: c.leaseTtlMs,
    rebalanceIntervalMs: c.rebalanceIntervalMs,
  };
}

export async function storeOptions(c: StoreConfig): Promise<StoreOptions> {
  if (c.kind === 'sqlite')
    return { kind: 'sqlite', path: c.path, ...(c.synchronous ? { synchronous: c.synchronous } : {}) };
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
  /** Every read. */
  reader: CloudSession;
  /** The writes; null when none is configured (every aggregate observes, prevention dry-runs). */
  actuator: Actuator | null;
  /** Operator tasks' canaries, in their own project; null when not configured. */
  tasks: CloudSession | null;
  recorder: IncrementalOptions;
  notificationsUrl: string | null;
  /** Replicas: the etcd locks and this replica's settings; null for one process. */
  coordination: ServiceCoordination | null;
  /** Lines to say at start (e.g. no actuator credential configured). */
  notes: string[];
}

export async function openServiceParts(config: ServiceConfig, logger: Logger): Promise<OpenedService> {
  const notes: string[] = [];
  const prometheusUrl = config.prometheus?.url;
  const store = await openStore(await storeOptions(config.store));
  const { reader: readerRef, actuator: actuatorRef, tasks: tasksRef } = config.credentials;
  const reader = await openSession({
    ...(await sessionSourceFor(readerRef)),
    ...(prometheusUrl ? { prometheusUrl } : {}),
    logger,
    credential: { kind: 'reader', label: credentialLabel('reader', readerRef) },
  });
  let actuator: Actuator | null = null;
  if (actuatorRef) {
    actuator = await Actuator.open({
      ...(await sessionSourceFor(actuatorRef)),
      logger,
      credential: {
        label: credentialLabel('actuator', actuatorRef),
        observe: auditCalls(store.audit, logger),
      },
    });
  } else {
    notes.push(
      'credentials.actuator is not set: nothing is migrated and no ratio is written (see `aicerine credentials` for a restricted actuator)',
    );
  }
  const tasks = tasksRef
    ? await openSession({
        ...(await sessionSourceFor(tasksRef)),
        logger,
        credential: {
          kind: 'tasks',
          label: credentialLabel('tasks', tasksRef),
          observe: auditCalls(store.audit, logger),
          // The administrative side of operator tasks; the canary's own project session is the
          // restricted one (ValidationCloud.projectSession).
          restricted: false,
        },
      })
    : null;
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
  let coordination: ServiceCoordination | null;
  try {
    coordination = await openCoordination(config.coordination);
  } catch (e) {
    await store.close();
    throw e;
  }
  if (coordination !== null)
    notes.push(
      `coordination: replica ${coordination.replicaId} of the replicas on etcd ${config.coordination.kind === 'etcd' ? config.coordination.endpoints.join(', ') : ''}`,
    );
  return {
    store,
    coordination,
    reader,
    actuator,
    tasks,
    recorder: {
      ...(metricsPolicy ? { metricsPolicy } : {}),
      ...(config.storage ? { storage: config.storage } : {}),
    },
    notificationsUrl,
    notes,
  };
}
