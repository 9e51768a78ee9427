// Operator tasks: the record the task table keeps, and the interface a task kind implements.
// A kind (validate-compute, evacuate-compute, purge-project...) is a TaskHandler registered by
// name; the worker (worker.ts) owns states, locks and checkpoints, the handler only parses its
// arguments, checks them against the cloud before anything is created, and runs.
//
// States:
//   SCHEDULED  created, no worker has looked at it yet
//   WAITING    a worker looked and could not run it now; `waitingReason` says why (a host held
//              by the balancer or another task, the lock backend unreachable, earlier tasks of
//              its batch still running, its worker stopped mid-way and it resumes from its checkpoint)
//   RUNNING    a worker runs it; `owner` and `heartbeatAt` say which and how recently
//   DONE       finished; `result` says what it did. Purged after the configured retention.
//   ERROR      failed or cancelled; `error` says why. Never purged automatically.

import type { Actuator } from '../cloud/actuator.js';
import type { Logger } from '../cloud/log.js';
import type { CloudSession } from '../cloud/session.js';
import type { ServiceConfig } from '../config/types.js';
import type { InputIssue } from '../errors.js';
import type { Clock } from '../executor/ports.js';

import type { JsonObject, JsonValue } from '../records/json.js';
import type { TaskProgress, TaskRecord } from '../records/tasks.js';

// The records are declared below the tasks and the store both (src/records); the task modules
// keep importing them from here.
export type { JsonObject } from '../records/json.js';
export {
  FINAL_TASK_STATES,
  isFinalTaskState,
  TASK_STATES,
  type TaskProgress,
  type TaskRecord,
  type TaskState,
} from '../records/tasks.js';

/** What the handler's preflight returns: the tasks one request creates. */
export interface PlannedTask {
  kind: string;
  args: JsonObject;
  hosts: string[];
  /** Starts only after every other task of the same request has ended (DONE or ERROR). */
  afterBatch?: boolean;
}

/**
 * A request the cloud refuses before anything is created: 400 (malformed), 404 (unknown host,
 * project...), 409 (conflicts with the cloud's state or another unfinished task).
 */
export class TaskRequestError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
    readonly issues: InputIssue[] = [],
  ) {
    super(message);
    this.name = 'TaskRequestError';
  }
}

/** The handler ends the task in ERROR with this message (and the partial result, if any). */
export class TaskFailedError extends Error {
  constructor(
    message: string,
    readonly result: JsonValue | null = null,
  ) {
    super(message);
    this.name = 'TaskFailedError';
  }
}

/**
 * The task cannot go on now (the balancer executes in the aggregate, the window is closed): the
 * worker puts it back to WAITING with this reason, and a later pass resumes it from its checkpoint.
 */
export class TaskWaitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskWaitError';
  }
}

/** What a task records in the audit log, with the task as the actor's subject. */
export interface TaskAudit {
  record(action: string, target: string, detail?: JsonValue): Promise<void>;
  /**
   * Whether this task (in any of its runs) has recorded the action on the target: a resumed run
   * writes an entry a killed run owed, once.
   */
  recorded(action: string, target: string): Promise<boolean>;
}

/** What preflight may read: the cloud, the configuration, and the unfinished tasks. */
export interface PreflightContext {
  reader: CloudSession;
  /** The actuator credential's writes (null: none configured). */
  actuator: Actuator | null;
  /** The tasks credential (canaries, purges); null: none configured. */
  tasks: CloudSession | null;
  config: ServiceConfig;
  /** Unfinished tasks (SCHEDULED, WAITING, RUNNING), to refuse a conflicting request with 409. */
  unfinished(): Promise<TaskRecord[]>;
  clock: Clock;
}

export interface TaskCheckpoint<C> {
  /** The last saved checkpoint, or null for a first run. */
  load(): C | null;
  /** Saves (durably, before returning) where a resumed run continues. */
  save(value: C): Promise<void>;
}

export interface TaskContext<A, C> {
  /** The task as it was when this run started. */
  task: Readonly<TaskRecord>;
  args: A;
  /** Reports progress (stored, shown in the API); cheap to call often. */
  progress(progress: TaskProgress): Promise<void>;
  checkpoint: TaskCheckpoint<C>;
  /**
   * Aborts when the task is cancelled, the worker stops, or a host lock the task holds is lost:
   * stop at the next safe point and throw (signal.reason). A run stopped because the worker stops
   * resumes later from its checkpoint; a cancelled one ends in ERROR.
   */
  signal: AbortSignal;
  /** Reads everything (it refuses writes). */
  reader: CloudSession;
  /** Disables and enables hosts, migrates (live and cold), confirms; null: no actuator configured. */
  actuator: Actuator | null;
  /** Creates and deletes what operator tasks own (canaries) and purge; null: not configured. */
  tasks: CloudSession | null;
  config: ServiceConfig;
  audit: TaskAudit;
  clock: Clock;
  logger: Logger;
}

/**
 * One kind of task. `A` is its parsed arguments, `C` its checkpoint (both plain JSON values:
 * they are stored with JSON.stringify).
 * Handlers are built with whatever else they need (the migration driver, settings) and registered
 * by kind in a TaskRegistry.
 */
export interface TaskHandler<A = JsonObject, C = JsonValue> {
  readonly kind: string;
  /** One line for `aicerine tasks` and the API's list of kinds. */
  readonly description: string;
  /** A follow-up kind that only other kinds' preflight creates: not accepted from the API. */
  readonly internal?: boolean;
  /**
   * A coordinator that mostly waits for tasks it asks for (maintain-aggregate): it does not count
   * against the worker's maxRunning, so coordinators never take every slot from their own tasks.
   */
  readonly coordinator?: boolean;
  /**
   * Parses the request's arguments. Throws InputError whose issues name each wrong field
   * (path = the field, e.g. `hosts[2]`) and value; pure (no I/O).
   */
  parse(raw: unknown): A;
  /**
   * Checks the parsed arguments against the cloud before anything is created, and says which
   * tasks to create. Throws TaskRequestError (400/404/409) to refuse; writes nothing.
   */
  preflight(args: A, ctx: PreflightContext): Promise<PlannedTask[]>;
  /**
   * Runs (or resumes, when ctx.checkpoint.load() is not null) the task. Returns the result of a
   * DONE task; throws TaskFailedError (or anything else) for ERROR, TaskWaitError to wait and
   * resume later. Must be idempotent from any
   * checkpoint: a crash between an action and the next checkpoint repeats that action.
   */
  run(ctx: TaskContext<A, C>): Promise<JsonValue>;
}

/**
 * Any handler, as a registry holds it (methods are bivariant in their parameters, so a
 * TaskHandler<EvacuateArgs, EvacuateCheckpoint> is one).
 */
export type AnyTaskHandler = TaskHandler<unknown, unknown>;

/** The actuator a task needs to change the cloud; without one the request is refused (409). */
export function requireActuator(ctx: { actuator: Actuator | null }, kind: string): Actuator {
  if (ctx.actuator === null)
    throw new TaskRequestError(
      409,
      `${kind} needs the actuator credential (credentials.actuator), which is not configured`,
    );
  return ctx.actuator;
}

/** The tasks credential a task creates and deletes with; without one the request is refused (409). */
export function requireTasksSession(ctx: { tasks: CloudSession | null }, kind: string): CloudSession {
  if (ctx.tasks === null)
    throw new TaskRequestError(
      409,
      `${kind} needs the tasks credential (credentials.tasks), which is not configured`,
    );
  return ctx.tasks;
}
