// What the API asks of tasks: create (parse, preflight, insert — under the table lock, so a
// conflicting request is refused with 409 against what is really unfinished), cancel, clean,
// list and show. Every write is a decision under `tasks/table` (or `tasks/purge-done`).

import { randomUUID } from 'node:crypto';
import type { Actuator } from '../cloud/actuator.js';
import type { CloudSession } from '../cloud/session.js';
import type { ServiceConfig } from '../config/types.js';
import { LOCK_NAMES, type LockService, withLock } from '../coordination/locks.js';
import { formatIssues, InputError } from '../errors.js';
import type { Clock } from '../executor/ports.js';
import type { Page, PageRequest } from '../store/paging.js';
import type { TaskFilter, TaskRepository } from './ports.js';
import type { TaskRegistry } from './registry.js';
import { type PlannedTask, type TaskRecord, TaskRequestError } from './types.js';
import type { TaskWorkerStatus } from './worker.js';

/** The task table is busy (another decision holds its lock) or the lock backend is unreachable. */
export class TaskTableUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskTableUnavailableError';
  }
}

export interface TaskServiceDeps {
  tasks: TaskRepository;
  locks: LockService;
  registry: TaskRegistry;
  reader: CloudSession;
  actuator: Actuator | null;
  /** The tasks credential's session (canaries, purges); null when not configured. */
  tasksSession: CloudSession | null;
  config: ServiceConfig;
  clock: Clock;
  /** The worker of this process (null when none runs here): its status, and told of new tasks. */
  worker: () => LocalTaskWorker | null;
}

/** What the task service asks of the worker in its own process. */
export interface LocalTaskWorker {
  status(): TaskWorkerStatus;
  /** Tasks were just created or changed here: look at the table now, not at the next poll. */
  wake(): void;
}

/**
 * A handler names its arguments' fields as the arguments see them (`hosts[1]`); the caller sent
 * them under `args`, so that is where they are pointed to (`args.hosts[1]`), like the parse's.
 * Issues with a `file` are about the service's own configuration and stay as they are. The
 * message lists every issue (a refusal of several hosts names each one) unless it says them already.
 */
function inRequestTerms(err: TaskRequestError): TaskRequestError {
  if (err.issues.length === 0) return err;
  const issues = err.issues.map((i) =>
    i.file !== undefined ? i : { ...i, path: i.path === '' ? 'args' : `args.${i.path}` },
  );
  const said = issues.every((i) => err.message.includes(i.message));
  return new TaskRequestError(
    err.status,
    said ? err.message : `${err.message}\n${formatIssues(issues)}`,
    issues,
  );
}

/** How long a request waits for the table lock held by another decision. */
const LOCK_WAIT_MS = 10_000;
const LOCK_RETRY_MS = 100;

export class TaskService {
  /**
   * The decision under way created tasks (or ended one others of its batch wait for): the
   * worker is woken once the decision released the lock.
   */
  private changed = false;

  constructor(private readonly deps: TaskServiceDeps) {}

  get registry(): TaskRegistry {
    return this.deps.registry;
  }

  workerStatus(): TaskWorkerStatus | null {
    return this.deps.worker()?.status() ?? null;
  }

  list(filter: TaskFilter, page: PageRequest): Promise<Page<TaskRecord>> {
    return this.deps.tasks.list(filter, page);
  }

  get(id: string): Promise<TaskRecord | null> {
    return this.deps.tasks.get(id);
  }

  /**
   * Checks the request (400 malformed, 404 unknown names, 409 conflicts) and creates its tasks,
   * SCHEDULED. Throws TaskRequestError and writes nothing when refused.
   */
  async create(kind: string, rawArgs: unknown, requestedBy: string): Promise<TaskRecord[]> {
    const handler = this.deps.registry.get(kind);
    if (handler === undefined || handler.internal === true) {
      const known = this.deps.registry.requestable().map((h) => h.kind);
      throw new TaskRequestError(
        400,
        `kind: no task kind ${JSON.stringify(kind)} (known: ${known.join(', ')})`,
        [{ path: 'kind', message: `expected one of ${known.join(', ')}`, value: kind }],
      );
    }
    let args: unknown;
    try {
      args = handler.parse(rawArgs ?? {});
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      const issues = err.issues.map((i) => ({ ...i, path: i.path === '' ? 'args' : `args.${i.path}` }));
      throw new TaskRequestError(400, new InputError(issues).message, issues);
    }
    const { tasks, clock } = this.deps;
    return this.decide(`api:${requestedBy}`, async () => {
      const unfinished = await tasks.unfinished();
      const planned = await handler
        .preflight(args, {
          reader: this.deps.reader,
          actuator: this.deps.actuator,
          tasks: this.deps.tasksSession,
          config: this.deps.config,
          unfinished: async () => unfinished,
          clock,
        })
        .catch((err: unknown) => {
          throw err instanceof TaskRequestError ? inRequestTerms(err) : err;
        });
      return this.insertPlanned(planned, requestedBy);
    });
  }

  /**
   * Creates tasks another subsystem planned itself (the maintenance campaign's driver, an
   * internal kind the API refuses), SCHEDULED, as one batch; no preflight.
   */
  async createPlanned(planned: PlannedTask[], requestedBy: string): Promise<TaskRecord[]> {
    return this.decision(`api:${requestedBy}`, () => this.insertPlanned(planned, requestedBy));
  }

  /** Inserts planned tasks; only inside a decision (the caller holds the table lock). */
  insertPlanned(planned: PlannedTask[], requestedBy: string): Promise<TaskRecord[]> {
    this.changed = true;
    return this.deps.tasks.create({
      requestedBy,
      requestedAt: new Date(this.deps.clock.now()).toISOString(),
      batch: randomUUID(),
      tasks: planned.map((p) => ({
        kind: p.kind,
        args: p.args,
        hosts: p.hosts,
        afterBatch: p.afterBatch === true,
      })),
    });
  }

  /**
   * Runs `fn` as one decision under the table lock (waiting up to 10 s for it): what it reads of
   * the tasks is what is really unfinished while it decides.
   */
  decision<T>(owner: string, fn: () => Promise<T>): Promise<T> {
    return this.decide(owner, fn);
  }

  /**
   * SCHEDULED or WAITING: ends in ERROR now. RUNNING: asks its run to stop (it ends in ERROR at
   * its next safe point). 404 unknown, 409 already ended.
   */
  async cancel(id: string, by: string): Promise<TaskRecord> {
    const { tasks, clock } = this.deps;
    return this.decide(`api:${by}`, async () => {
      const task = await tasks.get(id);
      if (task === null) throw new TaskRequestError(404, `no task ${id}`);
      if (task.state === 'DONE' || task.state === 'ERROR')
        throw new TaskRequestError(409, `task ${id} already ended ${task.state}`);
      const at = new Date(clock.now()).toISOString();
      const patch =
        task.state === 'RUNNING'
          ? { cancelRequested: true }
          : { state: 'ERROR' as const, error: `cancelled by ${by}`, endedAt: at, cancelRequested: true };
      const updated = await tasks.update(id, task.version, patch, at);
      if (updated === null) throw new TaskTableUnavailableError(`task ${id} changed meanwhile; ask again`);
      if (updated.state === 'ERROR') this.changed = true;
      return updated;
    });
  }

  /** Removes DONE tasks that ended before `before` (default: now); never other states. */
  async clean(before: string | null): Promise<number> {
    const cutoff = before ?? new Date(this.deps.clock.now()).toISOString();
    const out = await this.withRetries(LOCK_NAMES.tasksPurgeDone, 'api:clean', () =>
      this.deps.tasks.deleteDone(cutoff),
    );
    return out;
  }

  /**
   * A decision under the table lock. When it created or ended tasks, this process's worker is
   * woken once the lock is released (woken inside, its pass would find the lock taken and wait
   * for its poll). Decisions are serialized by the lock: while one runs, the flag is its own.
   */
  private async decide<T>(owner: string, fn: () => Promise<T>): Promise<T> {
    let changed = false;
    const value = await this.withRetries(LOCK_NAMES.tasksTable, owner, async () => {
      this.changed = false;
      const v = await fn();
      // Read while the lock is held: the next decision resets it.
      changed = this.changed;
      return v;
    });
    if (changed) this.deps.worker()?.wake();
    return value;
  }

  private async withRetries<T>(name: string, owner: string, fn: () => Promise<T>): Promise<T> {
    const until = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      let outcome: Awaited<ReturnType<typeof withLock<T>>>;
      try {
        outcome = await withLock(this.deps.locks, name, owner, fn);
      } catch (err) {
        if (err instanceof TaskRequestError || !(err instanceof Error) || err.name !== 'LockUnavailableError')
          throw err;
        throw new TaskTableUnavailableError(
          `the lock backend is unreachable; nothing was written: ${err.message}`,
        );
      }
      if (outcome.acquired) return outcome.value;
      if (Date.now() >= until)
        throw new TaskTableUnavailableError(
          `the lock ${name} stayed held by ${outcome.holder?.owner ?? 'someone else'}; nothing was written, try again`,
        );
      await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
    }
  }
}
