// Operator tasks inside the service: the registry of kinds, the worker and the task service the
// API uses, wired to the same store, locks, executor and slots as the balancer.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Actuator } from '../cloud/actuator.js';
import type { Logger } from '../cloud/log.js';
import type { CloudSession } from '../cloud/session.js';
import type { ServiceConfig } from '../config/types.js';
import { hostOfLockName, LOCK_NAMES, type LockService } from '../coordination/locks.js';
import type { Clock } from '../executor/ports.js';
import type { ExecutorService } from '../executor/service.js';
import type { MigrationSlots } from '../executor/slots.js';
import { maintainAggregateHandler } from '../maintenance/driver.js';
import { MaintenanceService } from '../maintenance/service.js';
import { campaignOfActor } from '../maintenance/types.js';
import { CampaignWakeups } from '../maintenance/wakeups.js';
import type { Store } from '../store/store.js';
import { evacuateComputeHandler } from '../tasks/kinds/evacuate-compute.js';
import { purgeProjectHandler } from '../tasks/kinds/purge-project.js';
import { TaskRegistry } from '../tasks/registry.js';
import { TaskService } from '../tasks/service.js';
import type { AnyTaskHandler } from '../tasks/types.js';
import { TaskWorker, type TaskWorkerSettings } from '../tasks/worker.js';
import { validationTaskHandlers } from '../validation/handler.js';

export interface ServiceTasksDeps {
  config: ServiceConfig;
  store: Store;
  reader: CloudSession;
  actuator: Actuator | null;
  tasksSession: CloudSession | null;
  clock: Clock;
  logger: Logger;
  locks: LockService;
  executor: ExecutorService;
  slots: MigrationSlots;
  /** Kinds beyond the built-in ones (tests). */
  extraHandlers?: AnyTaskHandler[];
  worker?: Partial<TaskWorkerSettings>;
}

export interface ServiceTasks {
  registry: TaskRegistry;
  worker: TaskWorker;
  service: TaskService;
  /** Rolling maintenance (docs/maintenance.md): campaigns driven by maintain-aggregate tasks. */
  maintenance: MaintenanceService;
}

export function createServiceTasks(deps: ServiceTasksDeps): ServiceTasks {
  // The driver creates and cancels child tasks through the service built below.
  let service: TaskService | null = null;
  const taskService = (): TaskService => {
    if (service === null) throw new Error('tasks: the task service is not built yet');
    return service;
  };
  // A campaign's driver here is woken by its operator's requests and its child tasks' ends.
  const wakeups = new CampaignWakeups(deps.clock);
  const registry = new TaskRegistry([
    evacuateComputeHandler({
      executor: deps.executor,
      journal: deps.store,
      slots: deps.slots,
      locks: deps.locks,
    }),
    purgeProjectHandler(),
    ...validationTaskHandlers(),
    maintainAggregateHandler({ campaigns: deps.store.maintenance, tasks: taskService, wakeups }),
    ...(deps.extraHandlers ?? []),
  ]);
  const worker = new TaskWorker({
    id: `worker:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    tasks: deps.store.tasks,
    audit: deps.store.audit,
    locks: deps.locks,
    registry,
    reader: deps.reader,
    actuator: deps.actuator,
    tasksSession: deps.tasksSession,
    config: deps.config,
    clock: deps.clock,
    logger: deps.logger,
    settings: { doneRetentionMs: deps.config.tasks.doneRetentionMs, ...deps.worker },
    onEnded: (task) => {
      const campaign = campaignOfActor(task.requestedBy);
      if (campaign !== null) wakeups.wake(campaign);
    },
  });
  service = new TaskService({
    tasks: deps.store.tasks,
    locks: deps.locks,
    registry,
    reader: deps.reader,
    actuator: deps.actuator,
    tasksSession: deps.tasksSession,
    config: deps.config,
    clock: deps.clock,
    worker: () => worker,
  });
  const maintenance = new MaintenanceService({
    campaigns: deps.store.maintenance,
    tasks: service,
    reader: deps.reader,
    actuator: deps.actuator,
    tasksSession: deps.tasksSession,
    config: deps.config,
    clock: deps.clock,
    wakeups,
  });
  return { registry, worker, service, maintenance };
}

/**
 * Hosts held by operator tasks (every host lock but the executor's own moves), with why: the
 * control loop plans nothing from or to them. Throws when the locks cannot be read.
 */
export async function taskHeldHosts(locks: LockService): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const l of await locks.list(LOCK_NAMES.hostPrefix)) {
    const host = hostOfLockName(l.name);
    if (host !== null && !l.owner.startsWith('executor:'))
      out.set(host, `held by ${l.owner.replace(/^task:/, 'task ')}`);
  }
  return out;
}
