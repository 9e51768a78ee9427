// The executor's journal: the one narrow port through which the executor makes every intent and
// every Nova migration id durable before and after each call, so a restart reconciles instead of
// re-issuing. The store implements it on SQLite and MariaDB; nothing else in the executor knows
// about a database. Times are ISO-8601 UTC strings taken from the injected clock.

import type {
  ExecutionRecord,
  ExecutionState,
  MoveRecord,
  MoveState,
  MoveTransition,
  PlannedMove,
} from '../records/executions.js';

// The records are declared below the executor and the store both (src/records), so the store
// implements this port without importing the executor; the executor's modules keep importing them
// from here.
export {
  EXECUTION_STATES,
  type ExecutionRecord,
  type ExecutionState,
  FINAL_MOVE_STATES,
  MOVE_STATES,
  type MoveRecord,
  type MoveState,
  type MoveTransition,
  type PlannedMove,
} from '../records/executions.js';

/** How a failed move's detail ends when its retry never reached Nova: the pre-flight refused it. */
export const RETRY_REFUSED = '; retry refused by pre-flight: ';

/** How a failed move's detail ends when its server was quarantined with it. */
export const QUARANTINED = '; server quarantined';

/** A failed move whose last attempt was refused by the pre-flight (nothing was sent to Nova for it). */
export function retryRefused(m: Pick<MoveRecord, 'state' | 'detail'>): boolean {
  return m.state === 'failed' && (m.detail?.includes(RETRY_REFUSED) ?? false);
}

export interface ExecutionJournal {
  /** Stores the execution and all its moves as `pending`, atomically. */
  createExecution(execution: Omit<ExecutionRecord, 'state' | 'endedAt'>, moves: PlannedMove[]): Promise<void>;
  /**
   * Moves one move to a new state, atomically, only if it is currently in `expectedFrom`
   * (compare-and-set); returns false, changing nothing, when it is not. Final states are never left.
   */
  transitionMove(
    executionId: string,
    step: number,
    expectedFrom: MoveState,
    next: MoveTransition,
  ): Promise<boolean>;
  finishExecution(executionId: string, state: Exclude<ExecutionState, 'running'>, at: string): Promise<void>;
  getExecution(executionId: string): Promise<ExecutionRecord | null>;
  listMoves(executionId: string): Promise<MoveRecord[]>;
  /** Executions still `running`: what a restarted executor must reconcile with Nova first. */
  listUnfinishedExecutions(): Promise<ExecutionRecord[]>;
}
