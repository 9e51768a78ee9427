// A task rig: the simulator over HTTP with the real clients on it, a SQLite store, the in-process
// locks, a registry, the task service and workers built on demand. `clock.now` is settable so
// heartbeats can go stale without waiting.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actuator } from '../../src/cloud/actuator.js';
import { silentLogger } from '../../src/cloud/log.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { ServiceConfig } from '../../src/config/types.js';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import {
  type AcquireOptions,
  type HeldLock,
  type Lease,
  type LockService,
  LockUnavailableError,
} from '../../src/coordination/locks.js';
import type { Clock } from '../../src/executor/ports.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { isFinalTaskState, type TaskRecord } from '../../src/records/tasks.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { TaskRegistry } from '../../src/tasks/registry.js';
import { TaskService } from '../../src/tasks/service.js';
import type { AnyTaskHandler } from '../../src/tasks/types.js';
import { TaskWorker, type TaskWorkerSettings } from '../../src/tasks/worker.js';

/** A lock service whose backend can be made unreachable, as a lost etcd would be. */
export class SwitchableLocks implements LockService {
  readonly kind = 'local' as const;
  down: string | null = null;
  constructor(readonly inner: LockService) {}
  private check(): void {
    if (this.down !== null) throw new LockUnavailableError('local', this.down);
  }
  async tryAcquire(name: string, owner: string, options?: AcquireOptions): Promise<Lease | null> {
    this.check();
    return this.inner.tryAcquire(name, owner, options);
  }
  async list(prefix: string): Promise<HeldLock[]> {
    this.check();
    return this.inner.list(prefix);
  }
  async probe(): Promise<void> {
    this.check();
    return this.inner.probe();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface TaskRig {
  sim: SimServerHandle;
  session: CloudSession;
  store: Store;
  config: ServiceConfig;
  locks: SwitchableLocks;
  registry: TaskRegistry;
  service: TaskService;
  clock: Clock & { offsetMs: number };
  /** A worker on the rig's locks, or on `locks` (another process's client of the same backend). */
  worker(id: string, settings?: Partial<TaskWorkerSettings>, locks?: LockService): TaskWorker;
  /**
   * The task's final record (DONE or ERROR), as soon as a worker of this rig ends it (its onEnded)
   * or at once if it already has; fails after `ms`.
   */
  ended(taskId: string, ms?: number): Promise<TaskRecord>;
  close(): Promise<void>;
}

export async function taskRig(
  world: Snapshot,
  handlers: AnyTaskHandler[],
  configDoc: Record<string, unknown> = {},
  speed = 50,
): Promise<TaskRig> {
  const cloud = new SimCloud(world, { clock: new SimClock({ speed }), load: staticLoadModel() });
  const sim = await startSimServer({ cloud, password: 'secret' });
  const dir = await mkdtemp(join(tmpdir(), 'aic-tasks-'));
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      ...configDoc,
    },
    { baseDir: dir },
  );
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'tasks test (simulator)'),
    retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
    credential: { kind: 'tasks', label: 'tasks (test)', restricted: false },
  });
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
  const locks = new SwitchableLocks(new LocalLockService());
  const registry = new TaskRegistry(handlers);
  const clock = {
    offsetMs: 0,
    now: () => cloud.clock.nowMs() + clock.offsetMs,
    sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms / speed))),
  };
  const workers: TaskWorker[] = [];
  const endedListeners = new Set<(task: TaskRecord) => void>();
  const actuator = await Actuator.open({ config: session.config, credential: { label: 'actuator (test)' } });
  const service = new TaskService({
    tasks: store.tasks,
    locks,
    registry,
    reader: session,
    actuator,
    tasksSession: session,
    config,
    clock,
    // The first worker is this process's; the others stand for other processes.
    worker: () => workers[0] ?? null,
  });
  return {
    sim,
    session,
    store,
    config,
    locks,
    registry,
    service,
    clock,
    worker(id, settings = {}, own = locks) {
      const w = new TaskWorker({
        id,
        tasks: store.tasks,
        audit: store.audit,
        locks: own,
        registry,
        reader: session,
        actuator,
        tasksSession: session,
        config,
        clock,
        logger: silentLogger,
        settings: { pollMs: 20, heartbeatMs: 20, ...settings },
        onEnded: (task) => {
          for (const l of [...endedListeners]) l(task);
        },
      });
      workers.push(w);
      return w;
    },
    ended(taskId, ms = 10_000) {
      return new Promise<TaskRecord>((resolve, reject) => {
        const finish = (task: TaskRecord | Error) => {
          clearTimeout(timer);
          endedListeners.delete(listener);
          if (task instanceof Error) reject(task);
          else resolve(task);
        };
        const listener = (task: TaskRecord) => {
          if (task.id === taskId) finish(task);
        };
        const timer = setTimeout(() => finish(new Error(`task ${taskId} did not end in ${ms / 1000} s`)), ms);
        endedListeners.add(listener);
        // Ended before the wait began (or by a path that tells no one): the store says so.
        store.tasks.get(taskId).then(
          (t) => {
            if (t !== null && isFinalTaskState(t.state)) finish(t);
          },
          (e: unknown) => finish(e instanceof Error ? e : new Error(String(e))),
        );
      });
    },
    async close() {
      for (const w of workers) await w.stop();
      await store.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls until `check` holds (or fails after `ms`): for what no event announces (task states short
 * of an end, worker status, the simulator's migrations on its virtual clock). A task's end: `ended`.
 */
export async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
