// The executor's entry points for the control loop: start an execution of one aggregate's
// moves, resume one (after a restart, reconciled with Nova first), or recover every execution
// the journal holds as unfinished.
import { randomUUID } from 'node:crypto';
import { ExecutionRun, type ExecutionSummary, type ExecutorDeps, type RunWindow } from './execution.js';
import type { ExecutionRecord, PlannedMove } from './journal.js';
import type { WatchCounters } from './migration-watch.js';
import { PlacementReads } from './placement-reads.js';
import { newEndReads, newWatch } from './run-book.js';
import { ComputeServiceReads } from './service-reads.js';

export type { ExecutionSummary, ExecutorDeps, RunCounters, RunWindow } from './execution.js';
export type { ExecutionJournal, ExecutionRecord, MoveRecord, MoveState, PlannedMove } from './journal.js';
export { FINAL_MOVE_STATES, MOVE_STATES } from './journal.js';
export { MemoryJournal } from './memory-journal.js';
export { MigrationWatch } from './migration-watch.js';
export { OpenStackExecutorCloud } from './openstack-cloud.js';
export * from './ports.js';
export { ExecutorService, type ExecutorServiceOptions, toPlannedMove } from './service.js';
export {
  backoffSeconds,
  type ConcurrencyLimits,
  DEFAULT_EXECUTOR_SETTINGS,
  type ExecutorSettings,
  type ExecutorSettingsInput,
  resolveExecutorSettings,
} from './settings.js';
export { MigrationSlots } from './slots.js';
export { type StoreSinks, storeSinks } from './store-sinks.js';

export interface StartRequest {
  aggregate: string;
  planId: string | null;
  startedBy: string;
  moves: PlannedMove[];
  /** Default: a random UUID. */
  executionId?: string;
}

/** Checks what a plan hands over before anything is stored: every error names the step. */
export function validateMoves(moves: PlannedMove[]): void {
  const steps = new Set(moves.map((m) => m.step));
  const servers = new Map<string, number>();
  for (const m of moves) {
    const where = `move step ${m.step}`;
    if (!Number.isInteger(m.step)) throw new RangeError(`${where}: step must be an integer`);
    if (!Number.isInteger(m.wave) || m.wave < 1)
      throw new RangeError(`${where}: wave must be >= 1, got ${m.wave}`);
    if (m.from === m.to) throw new RangeError(`${where}: from and to are both ${m.from}`);
    if (!(m.estimatedSeconds >= 0)) {
      throw new RangeError(`${where}: estimatedSeconds must be >= 0, got ${m.estimatedSeconds}`);
    }
    const twice = servers.get(m.serverId);
    if (twice !== undefined) {
      // One decision moves a server once; a second hop is a second decision.
      throw new RangeError(`${where}: server ${m.serverId} is also moved by step ${twice}`);
    }
    servers.set(m.serverId, m.step);
    for (const a of m.after ?? []) {
      // A step outside this execution (run earlier, or not handed over) is the caller's business.
      if (!steps.has(a)) continue;
      const dep = moves.find((x) => x.step === a);
      if (dep && dep.wave >= m.wave) {
        throw new RangeError(`${where}: after names step ${a} of wave ${dep.wave}, not an earlier wave`);
      }
    }
  }
  if (steps.size !== moves.length) throw new RangeError('moves: two moves have the same step');
}

export class Executor {
  private readonly runs = new Map<string, ExecutionRun>();

  private readonly deps: ExecutorDeps;

  constructor(deps: ExecutorDeps) {
    // One listing of live migrations and one of services for the whole process: every run and
    // every move shares them.
    const watch = deps.watch ?? newWatch(deps);
    this.deps = {
      ...deps,
      watch,
      services: deps.services ?? new ComputeServiceReads(deps.cloud, deps.clock),
      placement: deps.placement ?? new PlacementReads(deps.cloud, deps.clock),
      endReads: deps.endReads ?? newEndReads(deps, watch),
    };
  }

  /** Nova said a migration moved on (a notification): list the migrations now, not at the next poll. */
  migrationActivity(): void {
    this.deps.watch?.pollNow();
  }

  /** Listings of live migrations made so far (and failed), for benches and metrics. */
  watchCounters(): WatchCounters {
    return { ...(this.deps.watch?.counters ?? { polls: 0, pollErrors: 0, aimedHits: 0, aimedMisses: 0 }) };
  }

  /** Executions this executor is running now. */
  running(): { executionId: string; aggregate: string; inFlight: { servers: string[]; hosts: string[] } }[] {
    return [...this.runs].map(([executionId, run]) => ({
      executionId,
      aggregate: run.aggregate,
      inFlight: run.inFlight(),
    }));
  }

  /** Stores the execution (every move pending) and runs it until every move is final or the window ends. */
  async start(req: StartRequest, window: RunWindow): Promise<ExecutionSummary> {
    validateMoves(req.moves);
    const execution = {
      id: req.executionId ?? randomUUID(),
      aggregate: req.aggregate,
      planId: req.planId,
      startedAt: new Date(this.deps.clock.now()).toISOString(),
      startedBy: req.startedBy,
    };
    // While the execution is stored, what the first pre-flights and calls would each wait for in
    // turn is read at once; pre-flights join readings still under way.
    const warm = this.warm(req.moves);
    await this.deps.journal.createExecution(execution, req.moves);
    await this.deps.audit?.record({
      at: execution.startedAt,
      actor: req.startedBy,
      action: 'execution-started',
      executionId: execution.id,
      step: null,
      serverId: null,
      detail: `${req.moves.length} moves in aggregate ${req.aggregate}`,
    });
    try {
      return await this.runStored({ ...execution, state: 'running', endedAt: null }, window);
    } finally {
      // Never left running after the execution (its failures are the pre-flights' to meet).
      await warm;
    }
  }

  /**
   * The readings the first moves' pre-flights share (compute services, the destinations'
   * inventories, the sources' allocations) and the clients' microversions, taken at once. Only
   * the moves that can start first (wave 1, no `after`, one per source, up to the global limit)
   * are warmed: the others' readings are taken when they come, as usual. Failures are left for
   * the pre-flights, which read again.
   */
  private async warm(moves: PlannedMove[]): Promise<void> {
    const { services, placement, settings, cloud } = this.deps;
    const firstWave = Math.min(...moves.map((m) => m.wave));
    const sources = new Set<string>();
    const dests: string[] = [];
    for (const m of [...moves].sort((a, b) => a.step - b.step)) {
      if (sources.size >= settings.limits.global) break;
      if (m.wave !== firstWave || (m.after?.length ?? 0) > 0 || sources.has(m.from)) continue;
      sources.add(m.from);
      dests.push(m.to);
    }
    const prepared = cloud.prepare?.().catch(() => undefined);
    await Promise.allSettled([
      services?.warm(),
      // Placement's hosts are found through the providers prepare() lists: after it.
      Promise.resolve(prepared).then(() => placement?.warm(sources, dests)),
    ]);
  }

  /** Continues a stored execution: unfinished moves are first resolved from Nova's records. */
  async resume(executionId: string, window: RunWindow): Promise<ExecutionSummary> {
    const execution = await this.deps.journal.getExecution(executionId);
    if (!execution) throw new Error(`execution ${executionId}: not in the journal`);
    if (execution.state !== 'running') {
      throw new Error(`execution ${executionId}: already ${execution.state}, nothing to resume`);
    }
    return this.runStored(execution, window);
  }

  /** Executions the journal holds as running: what a restarted process must resume first. */
  unfinished(): Promise<ExecutionRecord[]> {
    return this.deps.journal.listUnfinishedExecutions();
  }

  /** Every execution the journal holds as running, resumed together (at start-up); they share the slot pool. */
  async recover(windowFor: (execution: ExecutionRecord) => RunWindow): Promise<ExecutionSummary[]> {
    const unfinished = await this.deps.journal.listUnfinishedExecutions();
    return Promise.all(unfinished.map((e) => this.runStored(e, windowFor(e))));
  }

  private async runStored(execution: ExecutionRecord, window: RunWindow): Promise<ExecutionSummary> {
    if (this.runs.has(execution.id)) throw new Error(`execution ${execution.id}: already running here`);
    const settings = this.deps.settingsFor?.(execution.aggregate) ?? this.deps.settings;
    const run = new ExecutionRun({ ...this.deps, settings }, execution, window);
    this.runs.set(execution.id, run);
    try {
      return await run.run();
    } finally {
      this.runs.delete(execution.id);
    }
  }
}
