// The task worker inside `aicerine serve`: picks tasks from the table and runs them. Every
// decision (claim, wait, adopt, finish) is made holding the cluster-wide `tasks/table` lock and
// written as a compare-and-set on the row's version: take the lock, read, switch, release. No lock,
// nothing written; the lock backend unreachable, nothing written and the reason in `status()`.
// A task holds `host/<host>` locks on its hosts while it runs, so the balancer keeps off them and
// it never starts on a host the executor is migrating to or from.

import type { Actuator } from '../cloud/actuator.js';
import type { Logger } from '../cloud/log.js';
import type { CloudSession } from '../cloud/session.js';
import type { ServiceConfig } from '../config/types.js';
import {
  DEFAULT_LOCK_TTL_MS,
  hostLockName,
  type Lease,
  LOCK_NAMES,
  type LockService,
  LockUnavailableError,
  withLock,
} from '../coordination/locks.js';
import type { Clock } from '../executor/ports.js';
import type { JsonValue } from '../records/json.js';
import type { AuditLogRepository } from '../store/audit.js';
import type { TaskPatch, TaskRepository } from './ports.js';
import type { TaskRegistry } from './registry.js';
import {
  type AnyTaskHandler,
  isFinalTaskState,
  TaskFailedError,
  type TaskProgress,
  type TaskRecord,
  TaskWaitError,
} from './types.js';

export interface TaskWorkerSettings {
  /** How often the worker looks at the table. */
  pollMs: number;
  /** How often a running task's heartbeat is written (and its cancel flag read). */
  heartbeatMs: number;
  /** A RUNNING task whose heartbeat is older than this lost its worker: another adopts it. */
  staleAfterMs: number;
  /** DONE tasks older than this are purged. */
  doneRetentionMs: number;
  /** How often a worker tries the purge (under `tasks/purge-done`). */
  purgeEveryMs: number;
  /** Tasks one worker runs at once (coordinators, such as maintain-aggregate, not counted). */
  maxRunning: number;
  /** TTL of the host locks a task holds (how long they outlive a crashed worker). */
  hostLockTtlMs: number;
}

export const DEFAULT_TASK_WORKER_SETTINGS: TaskWorkerSettings = {
  pollMs: 5_000,
  heartbeatMs: 10_000,
  staleAfterMs: 60_000,
  doneRetentionMs: 86_400_000,
  purgeEveryMs: 600_000,
  maxRunning: 4,
  hostLockTtlMs: DEFAULT_LOCK_TTL_MS,
};

export interface TaskWorkerDeps {
  /** This worker's identity, unique per process start: "worker:<hostname>:<pid>:<random>". */
  id: string;
  tasks: TaskRepository;
  audit: AuditLogRepository;
  locks: LockService;
  registry: TaskRegistry;
  reader: CloudSession;
  actuator: Actuator | null;
  /** The tasks credential's session (canaries, purges); null when not configured. */
  tasksSession: CloudSession | null;
  config: ServiceConfig;
  clock: Clock;
  logger: Logger;
  settings?: Partial<TaskWorkerSettings>;
  /** Told of every task this worker ended (DONE or ERROR): what waits for it may look now. */
  onEnded?: (task: TaskRecord) => void;
}

export interface TaskWorkerStatus {
  state: 'stopped' | 'running' | 'stopping';
  /** Why the worker could not decide anything on its last pass (lock backend unreachable...). */
  blocked: string | null;
  blockedSince: string | null;
  /** Tasks this worker runs now. */
  running: string[];
}

/** Why a run stops before its end; `resume` says the task goes back to WAITING (not ERROR). */
class RunStop extends Error {
  constructor(
    message: string,
    readonly resume: boolean,
    /** The task is no longer this run's: write nothing. */
    readonly lost = false,
  ) {
    super(message);
    this.name = 'RunStop';
  }
}

interface Run {
  task: TaskRecord;
  controller: AbortController;
  leases: Lease[];
  done: Promise<void>;
  /** The run ended the task (DONE or ERROR), rather than leaving it WAITING. */
  ended: boolean;
}

/** The message a stopped run leaves in a WAITING task. */
export const RESUME_REASON = 'its worker stopped mid-way: it resumes from its checkpoint';

export class TaskWorker {
  readonly settings: TaskWorkerSettings;
  private readonly runs = new Map<string, Run>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** Woken during a pass: the pass may have read the table before the change, so another follows. */
  private again = false;
  private state: TaskWorkerStatus['state'] = 'stopped';
  private blocked: { why: string; since: string } | null = null;
  private lastPurge = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: TaskWorkerDeps) {
    this.settings = { ...DEFAULT_TASK_WORKER_SETTINGS, ...deps.settings };
  }

  get id(): string {
    return this.deps.id;
  }

  status(): TaskWorkerStatus {
    return {
      state: this.state,
      blocked: this.blocked?.why ?? null,
      blockedSince: this.blocked?.since ?? null,
      running: [...this.runs.keys()],
    };
  }

  /**
   * Proves the lock backend works (takes and releases a lock), then polls. Throws, starting
   * nothing, when it does not: a worker that cannot lock must not touch the table.
   */
  async start(): Promise<void> {
    try {
      await this.deps.locks.probe();
    } catch (err) {
      throw new LockUnavailableError(
        this.deps.locks.kind,
        `tasks: the worker refuses to start: it cannot take and release a ${this.deps.locks.kind} lock: ${message(err)}`,
        { cause: err },
      );
    }
    this.state = 'running';
    this.schedule(0);
  }

  /** Stops polling and every run; the runs go back to WAITING and resume from their checkpoints. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopping';
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    for (const run of this.runs.values()) run.controller.abort(new RunStop(RESUME_REASON, true));
    await Promise.all([...this.runs.values()].map((r) => r.done));
    this.state = 'stopped';
  }

  /** Waits until every task this worker runs now has ended (tests, shutdown). */
  async drain(): Promise<void> {
    while (this.runs.size > 0) await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  /**
   * Makes a pass now rather than at the next poll: a task was created in this process (the task
   * service calls it once its decision released the table lock), or a run here ended its task.
   * Tasks created by other processes are still found by the poll.
   */
  wake(): void {
    if (this.state !== 'running') return;
    if (this.ticking !== null) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.state !== 'running') return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.again = false;
      this.ticking = this.tick()
        .catch((err) => this.deps.logger.error(`tasks: worker pass failed: ${message(err)}`))
        .finally(() => {
          this.ticking = null;
          this.schedule(this.again ? 0 : this.settings.pollMs);
          this.again = false;
        });
    }, ms);
    this.timer.unref?.();
  }

  private nowIso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  private setBlocked(why: string | null): void {
    if (why === null) this.blocked = null;
    else if (this.blocked?.why !== why) {
      this.blocked = { why, since: this.nowIso() };
      this.deps.logger.warn(`tasks: ${why}`);
    }
  }

  /** One pass: the purge when due, then the claims. Tests call it directly. */
  async tick(): Promise<void> {
    try {
      await this.purgeIfDue();
      await this.claim();
      this.setBlocked(null);
    } catch (err) {
      if (!(err instanceof LockUnavailableError)) throw err;
      this.setBlocked(`the lock backend is unreachable; no task is touched until it answers: ${err.message}`);
    }
  }

  private async purgeIfDue(): Promise<void> {
    const now = this.deps.clock.now();
    if (now - this.lastPurge < this.settings.purgeEveryMs) return;
    const outcome = await withLock(this.deps.locks, LOCK_NAMES.tasksPurgeDone, this.deps.id, async () =>
      this.deps.tasks.deleteDone(new Date(now - this.settings.doneRetentionMs).toISOString()),
    );
    if (!outcome.acquired) return;
    this.lastPurge = now;
    if (outcome.value > 0) this.deps.logger.info(`tasks: purged ${outcome.value} DONE task(s)`);
  }

  private async claim(): Promise<void> {
    if (this.state === 'stopping') return;
    await withLock(this.deps.locks, LOCK_NAMES.tasksTable, this.deps.id, async () => {
      const unfinished = await this.deps.tasks.unfinished();
      for (const task of unfinished) {
        if (this.runs.has(task.id)) continue;
        // A coordinator mostly waits for the tasks it asks for: counted, it could fill every
        // slot and leave its own tasks none.
        const coordinator = this.deps.registry.get(task.kind)?.coordinator === true;
        if (!coordinator && this.busy() >= this.settings.maxRunning) continue;
        if (task.state === 'RUNNING' && !this.orphaned(task)) continue;
        await this.consider(task, unfinished);
      }
    });
  }

  /** Runs that count against maxRunning (every one but the coordinators'). */
  private busy(): number {
    let n = 0;
    for (const r of this.runs.values()) if (this.deps.registry.get(r.task.kind)?.coordinator !== true) n++;
    return n;
  }

  /** A RUNNING task whose worker stopped beating (crashed, partitioned). */
  private orphaned(task: TaskRecord): boolean {
    if (task.owner === this.deps.id) return true;
    const beat = task.heartbeatAt === null ? 0 : Date.parse(task.heartbeatAt);
    return this.deps.clock.now() - beat >= this.settings.staleAfterMs;
  }

  /** Under the table lock: run the task, or say why it waits. */
  private async consider(task: TaskRecord, unfinished: readonly TaskRecord[]): Promise<void> {
    const at = this.nowIso();
    const handler = this.deps.registry.get(task.kind);
    if (handler === undefined) {
      await this.deps.tasks.update(
        task.id,
        task.version,
        { state: 'ERROR', error: `no handler for the task kind ${task.kind} in this build`, endedAt: at },
        at,
      );
      return;
    }
    if (task.cancelRequested) {
      await this.deps.tasks.update(
        task.id,
        task.version,
        { state: 'ERROR', error: 'cancelled', endedAt: at },
        at,
      );
      return;
    }
    if (task.afterBatch) {
      const peers = unfinished.filter((t) => t.batch === task.batch && t.id !== task.id);
      if (peers.length > 0) {
        await this.wait(task, `waits for task(s) ${peers.map((p) => p.id).join(', ')} of its batch to end`);
        return;
      }
    }
    const leases: Lease[] = [];
    for (const host of task.hosts) {
      const lease = await this.deps.locks.tryAcquire(hostLockName(host), taskLockOwner(task.id), {
        ttlMs: this.settings.hostLockTtlMs,
      });
      if (lease === null) {
        await Promise.all(leases.map((l) => l.release()));
        const holder = (await this.deps.locks.list(hostLockName(host))).find(
          (h) => h.name === hostLockName(host),
        );
        await this.wait(
          task,
          holder?.owner === taskLockOwner(task.id)
            ? `host ${host} is still locked by this task's previous worker: it resumes once that lock lapses`
            : `host ${host} is held by ${holder?.owner ?? 'someone else'}`,
        );
        return;
      }
      leases.push(lease);
    }
    const running = await this.deps.tasks.update(
      task.id,
      task.version,
      {
        state: 'RUNNING',
        owner: this.deps.id,
        attempts: task.attempts + 1,
        startedAt: task.startedAt ?? at,
        heartbeatAt: at,
        waitingReason: null,
        progress: { ...task.progress, detail: task.checkpoint === null ? 'starting' : 'resuming' },
      },
      at,
    );
    if (running === null) {
      await Promise.all(leases.map((l) => l.release()));
      return;
    }
    this.launch(handler, running, leases);
  }

  private async wait(task: TaskRecord, why: string): Promise<void> {
    if (task.state === 'WAITING' && task.waitingReason === why) return;
    const at = this.nowIso();
    await this.deps.tasks.update(task.id, task.version, { state: 'WAITING', waitingReason: why }, at);
  }

  private launch(handler: AnyTaskHandler, task: TaskRecord, leases: Lease[]): void {
    const controller = new AbortController();
    const run: Run = { task, controller, leases, done: Promise.resolve(), ended: false };
    this.runs.set(task.id, run);
    run.done = this.execute(handler, run)
      .catch((err) => this.deps.logger.error(`tasks: task ${task.id} ended badly: ${message(err)}`))
      .finally(async () => {
        await Promise.all(leases.map((l) => l.release()));
        this.runs.delete(task.id);
        // Its slot and hosts are free, and tasks of its batch may be waiting for its end. Not
        // after a wait: the task would be claimed again at once, to wait again, in a loop.
        if (run.ended) this.wake();
      });
  }

  private async execute(handler: AnyTaskHandler, run: Run): Promise<void> {
    const { task, controller } = run;
    const { tasks, clock, logger } = this.deps;
    const me = this.deps.id;
    let checkpoint: JsonValue | null = task.checkpoint;
    const own = async (patch: TaskPatch): Promise<void> => {
      const at = this.nowIso();
      const rec = await tasks.updateRunning(task.id, me, { ...patch, heartbeatAt: at }, at);
      if (rec === null) {
        const lost = new RunStop(
          'another worker took the task over (or it ended): this run stops',
          false,
          true,
        );
        controller.abort(lost);
        throw lost;
      }
      if (rec.cancelRequested && !controller.signal.aborted)
        controller.abort(new RunStop('cancelled', false));
    };
    const heartbeat = setInterval(() => {
      if (run.leases.some((l) => !l.isValid())) {
        controller.abort(
          new RunStop('a host lock of the task was lost: it resumes when it gets it back', true),
        );
        return;
      }
      own({}).catch((err) => {
        if (!(err instanceof RunStop)) logger.warn(`tasks: heartbeat of task ${task.id}: ${message(err)}`);
      });
    }, this.settings.heartbeatMs);
    heartbeat.unref?.();

    let outcome: RunOutcome;
    try {
      const result = await handler.run({
        task,
        args: task.args,
        progress: (p: TaskProgress) => own({ progress: p }),
        checkpoint: {
          load: () => checkpoint,
          save: async (value: unknown) => {
            await own({ checkpoint: value as JsonValue });
            checkpoint = value as JsonValue;
          },
        },
        signal: controller.signal,
        reader: this.deps.reader,
        actuator: this.deps.actuator,
        tasks: this.deps.tasksSession,
        config: this.deps.config,
        audit: {
          record: async (action, target, detail) => {
            await this.deps.audit.record({
              actor: `task:${task.id}`,
              credential: null,
              action: `task.${action}`,
              target,
              detail: {
                kind: task.kind,
                requestedBy: task.requestedBy,
                ...(detail === undefined ? {} : { detail }),
              },
              at: this.nowIso(),
            });
          },
          recorded: async (action, target) => {
            const page = await this.deps.audit.list(
              { actor: `task:${task.id}`, action: `task.${action}`, target },
              { limit: 1 },
            );
            return page.items.length > 0;
          },
        },
        clock,
        logger,
      });
      outcome = { ok: true, result: result as JsonValue };
    } catch (err) {
      // A cancelled run ends with the cancellation as its error and, when the handler said what
      // it did before it stopped, with that as its result.
      const said = err instanceof TaskFailedError ? err.result : null;
      outcome = {
        ok: false,
        err: controller.signal.aborted ? (controller.signal.reason ?? err) : err,
        result: said,
      };
    } finally {
      clearInterval(heartbeat);
    }
    await this.finish(run, outcome);
  }

  /** The run's end as a decision under the table lock; retried until the lock answers. */
  private async finish(run: Run, outcome: RunOutcome): Promise<void> {
    const { task } = run;
    const stop = !outcome.ok && outcome.err instanceof RunStop ? outcome.err : null;
    if (stop?.lost) return;
    for (let tries = 0; ; tries++) {
      try {
        const decided = await withLock(this.deps.locks, LOCK_NAMES.tasksTable, this.deps.id, async () => {
          const now = await this.deps.tasks.get(task.id);
          if (now === null || now.state !== 'RUNNING' || now.owner !== this.deps.id) return null;
          const at = this.nowIso();
          let patch: TaskPatch;
          if (outcome.ok) {
            patch = {
              state: 'DONE',
              result: outcome.result,
              error: null,
              endedAt: at,
              progress: { ...now.progress, detail: 'done' },
            };
          } else if (stop?.resume) {
            patch = { state: 'WAITING', waitingReason: stop.message };
          } else if (!outcome.ok && outcome.err instanceof TaskWaitError) {
            patch = { state: 'WAITING', waitingReason: outcome.err.message };
          } else {
            const err = outcome.err;
            patch = {
              state: 'ERROR',
              error: err instanceof RunStop && err.message === 'cancelled' ? 'cancelled' : message(err),
              endedAt: at,
              ...(outcome.result !== null ? { result: outcome.result } : {}),
            };
          }
          const written = await this.deps.tasks.update(task.id, now.version, patch, at);
          if (written !== null && isFinalTaskState(written.state)) {
            this.deps.logger.info(`tasks: task ${task.id} (${task.kind}) ended ${written.state}`);
            return written;
          }
          return null;
        });
        if (decided.acquired) {
          // Told once the table lock is released: what it wakes may want to decide at once.
          if (decided.value) {
            run.ended = true;
            this.deps.onEnded?.(decided.value);
          }
          return;
        }
      } catch (err) {
        if (!(err instanceof LockUnavailableError)) throw err;
        this.setBlocked(
          `task ${task.id} ended but its end cannot be written: the lock backend is unreachable: ${err.message}`,
        );
      }
      // While stopping, give up after a while: the task stays RUNNING and is adopted later.
      if (this.state !== 'running' && tries >= 20) return;
      await this.deps.clock.sleep(Math.min(this.settings.pollMs, 1000));
    }
  }
}

/** How a run ended: its result, or its error (and what it did before, when it said). */
type RunOutcome = { ok: true; result: JsonValue } | { ok: false; err: unknown; result: JsonValue | null };

/** The owner string of a task's host locks. */
export function taskLockOwner(taskId: string): string {
  return `task:${taskId}`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
