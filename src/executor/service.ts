// The executor as the control loop sees it (ExecutorPort): executions started in the background,
// one per aggregate at a time, with the servers and hosts in flight, and the unfinished ones of
// a previous process resumed at start-up.
import { randomUUID } from 'node:crypto';
import { type Logger, silentLogger } from '../cloud/log.js';
import type { ExecutionRequest, ExecutorPort } from '../loop/ports.js';
import type { Move } from '../model/plan.js';
import type { ExecutionSummary, RunWindow } from './execution.js';
import type { Executor } from './index.js';
import type { ExecutionRecord, PlannedMove } from './journal.js';

export interface ExecutorServiceOptions {
  /** A global or per-aggregate pause, read at every step (no new migration starts while true). */
  isPaused: (aggregate: string) => boolean;
  /** Replicas: whether this process owns the aggregate now (absent: always). */
  isOwned?: (aggregate: string) => boolean;
  /**
   * Replicas: the aggregate's fence while this process owns it, else null. A run keeps the fence
   * it started under: it stops once the aggregate is held under another one, and its host locks
   * carry it (a newer owner resuming the execution takes them over).
   */
  fenceOf?: (aggregate: string) => number | null;
  /** After a restart: when the window of a resumed execution ends (null: no end). */
  deadlineOnResume?: (execution: ExecutionRecord) => Date | null;
  onEnded?: (summary: ExecutionSummary, aggregate: string) => void;
  onError?: (error: unknown, aggregate: string) => void;
  logger?: Logger;
}

/** A plan's move as the executor stores it. */
export function toPlannedMove(m: Move): PlannedMove {
  return {
    step: m.step,
    wave: m.wave,
    serverId: m.server,
    ...(m.serverName !== undefined ? { serverName: m.serverName } : {}),
    from: m.from,
    to: m.to,
    ...(m.after && m.after.length > 0 ? { after: [...m.after] } : {}),
    estimatedSeconds: m.estimatedSeconds,
  };
}

export class ExecutorService implements ExecutorPort {
  /** By execution id. */
  private readonly active = new Map<string, { aggregate: string; startedBy: string; done: Promise<void> }>();
  /** Executions started in this process, by aggregate (see startedIn). */
  private readonly starts = new Map<string, number>();
  /** Operators' aborts of running executions, by execution id: why. */
  private readonly aborts = new Map<string, string>();
  private readonly log: Logger;

  constructor(
    private readonly executor: Executor,
    private readonly opts: ExecutorServiceOptions,
  ) {
    this.log = opts.logger ?? silentLogger;
  }

  isRunning(aggregate: string): boolean {
    return this.runningBy(aggregate) !== null;
  }

  /** Who started the execution running in the aggregate (`loop:active`, `task:12`...), or null. */
  runningBy(aggregate: string): string | null {
    for (const a of this.active.values()) if (a.aggregate === aggregate) return a.startedBy;
    return null;
  }

  /**
   * How many executions have started in the aggregate in this process. A caller that read the
   * cloud while none ran and finds the same count (and none running) before it starts its own
   * knows that no move of this process ran in between: what it read still holds.
   */
  startedIn(aggregate: string): number {
    return this.starts.get(aggregate) ?? 0;
  }

  inFlight(): { servers: ReadonlySet<string>; hosts: ReadonlySet<string> } {
    const servers = new Set<string>();
    const hosts = new Set<string>();
    for (const r of this.executor.running()) {
      for (const s of r.inFlight.servers) servers.add(s);
      for (const h of r.inFlight.hosts) hosts.add(h);
    }
    return { servers, hosts };
  }

  async start(request: ExecutionRequest): Promise<void> {
    if (this.isRunning(request.aggregate)) {
      throw new Error(`aggregate ${request.aggregate}: an execution is already running`);
    }
    const executionId = randomUUID();
    const window = this.window(executionId, request.aggregate, request.deadline);
    this.track(
      executionId,
      request.aggregate,
      request.startedBy,
      this.executor.start(
        {
          executionId,
          aggregate: request.aggregate,
          planId: request.planId,
          startedBy: request.startedBy,
          moves: request.moves.map(toPlannedMove),
        },
        window,
      ),
    );
  }

  /**
   * Runs moves an operator task asks for (an evacuation's live migrations) as one execution with
   * the given id, through the same driver, slots, journal and sinks as the balancer's, and
   * resolves with its summary. The aggregate counts as busy meanwhile (the loop waits).
   * `ownHosts`: host locks the task holds itself. Throws when the aggregate already runs one.
   */
  async runForTask(request: {
    executionId: string;
    aggregate: string;
    startedBy: string;
    moves: PlannedMove[];
    deadline: Date | null;
    ownHosts: ReadonlySet<string>;
  }): Promise<ExecutionSummary> {
    if (this.isRunning(request.aggregate)) {
      throw new Error(`aggregate ${request.aggregate}: an execution is already running`);
    }
    const window = {
      ...this.window(request.executionId, request.aggregate, request.deadline),
      ownHosts: request.ownHosts,
    };
    const run = this.executor.start(
      {
        executionId: request.executionId,
        aggregate: request.aggregate,
        planId: null,
        startedBy: request.startedBy,
        moves: request.moves,
      },
      window,
    );
    this.track(request.executionId, request.aggregate, request.startedBy, run);
    return run;
  }

  /** Whether an execution with this id runs in this process now. */
  isActive(executionId: string): boolean {
    return this.active.has(executionId);
  }

  /** Resolves when the execution with this id, running here, has ended (at once when it does not run here). */
  async ended(executionId: string): Promise<void> {
    await this.active.get(executionId)?.done;
  }

  /**
   * Resumes, in the background, every execution a previous process left unfinished (each first
   * reconciled with Nova). Returns their ids. Call once at start-up, before the first cycle.
   */
  async recover(): Promise<string[]> {
    const unfinished = await this.executor.unfinished();
    for (const e of unfinished) {
      const deadline = this.opts.deadlineOnResume?.(e) ?? null;
      this.track(
        e.id,
        e.aggregate,
        e.startedBy,
        this.executor.resume(e.id, this.window(e.id, e.aggregate, deadline)),
      );
    }
    return unfinished.map((e) => e.id);
  }

  /** Whether this process runs the execution (and so can abort its migrations in Nova). */
  runs(executionId: string): boolean {
    return this.active.has(executionId);
  }

  /**
   * Stops an execution running here: moves not issued are skipped, migrations in flight are
   * aborted in Nova (DELETE on the migration) and followed until Nova confirms. False when this
   * process does not run it. `done` resolves when the execution has ended.
   */
  abort(executionId: string, why: string): { done: Promise<void> } | null {
    const run = this.active.get(executionId);
    if (run === undefined) return null;
    if (!this.aborts.has(executionId)) this.aborts.set(executionId, why);
    return { done: run.done };
  }

  /**
   * Replicas, on taking over an aggregate: resumes in the background the executions of that
   * aggregate the journal holds as running (each reconciled with Nova first), except those already
   * running here. Returns their ids.
   */
  async recoverAggregate(aggregate: string): Promise<string[]> {
    const unfinished = (await this.executor.unfinished()).filter(
      (e) => e.aggregate === aggregate && !this.active.has(e.id),
    );
    for (const e of unfinished) {
      const deadline = this.opts.deadlineOnResume?.(e) ?? null;
      this.track(
        e.id,
        e.aggregate,
        e.startedBy,
        this.executor.resume(e.id, this.window(e.id, e.aggregate, deadline)),
      );
    }
    return unfinished.map((e) => e.id);
  }

  /** Resolves when the executions of the aggregate running here have stopped (a hand-over). */
  async settled(aggregate: string): Promise<void> {
    for (;;) {
      const mine = [...this.active.values()].filter((a) => a.aggregate === aggregate);
      if (mine.length === 0) return;
      await Promise.allSettled(mine.map((a) => a.done));
    }
  }

  /** Resolves when every execution started here has ended (for shutdown and tests). */
  /** Nova's notifications say a live migration moved on: list the migrations now. */
  migrationActivity(): void {
    this.executor.migrationActivity();
  }

  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.allSettled([...this.active.values()].map((a) => a.done));
  }

  private window(executionId: string, aggregate: string, deadline: Date | null): RunWindow {
    const { isOwned, fenceOf } = this.opts;
    const fence = fenceOf?.(aggregate) ?? null;
    const owned =
      isOwned === undefined
        ? undefined
        : () => isOwned(aggregate) && (fence === null || fenceOf?.(aggregate) === fence);
    return {
      deadline: deadline === null ? null : deadline.getTime(),
      shouldStop: () => this.opts.isPaused(aggregate),
      abortRequested: () => this.aborts.get(executionId) ?? null,
      ...(owned !== undefined ? { owned } : {}),
      ...(fence !== null ? { fence } : {}),
    };
  }

  private track(
    executionId: string,
    aggregate: string,
    startedBy: string,
    run: Promise<ExecutionSummary>,
  ): void {
    this.starts.set(aggregate, this.startedIn(aggregate) + 1);
    const done = run.then(
      (summary) => {
        this.log.info(`executor: execution ${summary.executionId} of ${aggregate} ${summary.state}`, {
          counts: summary.counts,
        });
        this.opts.onEnded?.(summary, aggregate);
      },
      (e: unknown) => {
        this.log.error(`executor: execution of ${aggregate} stopped on an error`, {
          error: e instanceof Error ? e.message : String(e),
        });
        this.opts.onError?.(e, aggregate);
      },
    );
    this.active.set(executionId, {
      aggregate,
      startedBy,
      done: done.finally(() => {
        this.active.delete(executionId);
        this.aborts.delete(executionId);
      }),
    });
  }
}
