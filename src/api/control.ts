// The one narrow port through which the API asks the running service to act: pause and resume
// (global or per aggregate) and abort an execution. Everything else the API reads from the store.
// The API writes the audit entry for every action itself, so implementations do not.
import type { Store } from '../store/store.js';
import { setOwn } from '../util/maps.js';

export interface PauseScope {
  /** Absent: the global pause. */
  aggregate?: string;
}

export interface PauseEntry {
  /** Who paused: "operator:alice". */
  by: string;
  at: string;
  reason: string | null;
}

export interface PauseState {
  global: PauseEntry | null;
  aggregates: Record<string, PauseEntry>;
}

export type AbortResult =
  /** The execution stops: moves not yet issued are skipped, those in flight are aborted. */
  | { outcome: 'aborting'; executionId: string }
  | { outcome: 'not-running'; executionId: string; state: string }
  | { outcome: 'not-found'; executionId: string };

export interface ServiceControl {
  /** Pauses made at run time (the configuration's `paused` flags are separate and read-only here). */
  pauses(): Promise<PauseState>;
  /** Nothing new starts in the scope until resumed; what is in flight follows the aggregate's onPause. */
  pause(scope: PauseScope, by: string, reason: string | null): Promise<void>;
  /** Lifts a run-time pause; returns false when the scope was not paused at run time. */
  resume(scope: PauseScope, by: string): Promise<boolean>;
  abortExecution(executionId: string, by: string): Promise<AbortResult>;
}

/** The run-time pauses the store holds (the service reads them every cycle). */
export async function storedPauses(store: Store): Promise<PauseState> {
  const out: PauseState = { global: null, aggregates: {} };
  for (const p of await store.pauses.list()) {
    const entry = { by: p.by, at: p.at, reason: p.reason };
    if (p.aggregate === null) out.global = entry;
    else setOwn(out.aggregates, p.aggregate, entry);
  }
  return out;
}

/**
 * A ServiceControl for an API that runs without the control loop in-process (tests, a read-mostly
 * API next to a service): pauses are written to the store, where the service reads them every
 * cycle (they survive a restart), and an abort is carried out on the store's journal, which can
 * only stop moves that were not issued yet: with moves in flight, only the executor that issued
 * them can abort them in Nova, so the abort is refused.
 */
export class StoreServiceControl implements ServiceControl {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {}

  pauses(): Promise<PauseState> {
    return storedPauses(this.store);
  }

  async pause(scope: PauseScope, by: string, reason: string | null): Promise<void> {
    await this.store.pauses.set({
      aggregate: scope.aggregate ?? null,
      by,
      at: this.now().toISOString(),
      reason,
    });
  }

  resume(scope: PauseScope): Promise<boolean> {
    return this.store.pauses.clear(scope.aggregate ?? null);
  }

  async abortExecution(executionId: string, by: string): Promise<AbortResult> {
    const execution = await this.store.getExecution(executionId);
    if (execution === null) return { outcome: 'not-found', executionId };
    if (execution.state !== 'running') return { outcome: 'not-running', executionId, state: execution.state };
    const moves = await this.store.listMoves(executionId);
    const inFlight = moves.filter((m) => ['issuing', 'migrating', 'aborting'].includes(m.state));
    if (inFlight.length > 0)
      throw new ControlError(
        `execution ${executionId} has ${inFlight.length} move(s) in flight; only the running service can abort them in Nova`,
      );
    const at = this.now().toISOString();
    for (const m of moves)
      if (m.state === 'pending')
        await this.store.transitionMove(executionId, m.step, 'pending', {
          state: 'skipped',
          at,
          detail: `aborted by ${by} before it started`,
        });
    await this.store.finishExecution(executionId, 'aborted', at);
    return { outcome: 'aborting', executionId };
  }
}

/** A control action that cannot be carried out as asked (answered 409). */
export class ControlError extends Error {
  override readonly name = 'ControlError';
}
