// The executor's journal: the one narrow port through which the executor makes every intent and
// every Nova migration id durable before and after each call, so a restart reconciles instead of
// re-issuing. The store implements it on SQLite and MariaDB; nothing else in the executor knows
// about a database. Times are ISO-8601 UTC strings taken from the injected clock.

/** Where one move of an execution stands. Final states never change again. */
export const MOVE_STATES = [
  /** Stored with the execution; nothing asked of Nova yet. */
  'pending',
  /** The intent to call os-migrateLive is durable; the call may or may not have reached Nova. */
  'issuing',
  /** Nova accepted the live migration; `novaMigrationId` is known once it could be read. */
  'migrating',
  /** Abort (DELETE) requested; waiting to confirm the server stayed on its source. */
  'aborting',
  /** Final: the server is ACTIVE on the destination and Nova's migration is `completed`. */
  'completed',
  /** Final: the migration failed or was aborted and the server is still on its source. */
  'failed',
  /** Final: pre-flight refused the move (server gone, moved, not ACTIVE, no room...), nothing issued. */
  'skipped',
] as const;
export type MoveState = (typeof MOVE_STATES)[number];

export const FINAL_MOVE_STATES: readonly MoveState[] = ['completed', 'failed', 'skipped'];

export const EXECUTION_STATES = ['running', 'finished', 'aborted'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export interface PlannedMove {
  step: number;
  wave: number;
  serverId: string;
  serverName?: string;
  from: string;
  to: string;
  /** Steps that must be final (completed) before this one may start. */
  after?: number[];
  estimatedSeconds: number;
}

export interface ExecutionRecord {
  id: string;
  aggregate: string;
  /** The stored plan this execution runs (store id), or null for an operator task's moves. */
  planId: string | null;
  state: ExecutionState;
  startedAt: string;
  endedAt: string | null;
  /** Who or what started it: "loop:active", "operator:alice", "task:evacuate/42". */
  startedBy: string;
}

export interface MoveRecord extends PlannedMove {
  executionId: string;
  state: MoveState;
  /** 1 for the first try; a retry after a failure increments it. */
  attempt: number;
  novaMigrationId: number | null;
  /** When the current attempt's intent was stored (before os-migrateLive was sent). */
  issuedAt: string | null;
  endedAt: string | null;
  /** Why it ended as it did, in words (pre-flight refusal, Nova fault, timeout, window end...). */
  detail: string | null;
}

/** How a failed move's detail ends when its retry never reached Nova: the pre-flight refused it. */
export const RETRY_REFUSED = '; retry refused by pre-flight: ';

/** A failed move whose last attempt was refused by the pre-flight (nothing was sent to Nova for it). */
export function retryRefused(m: Pick<MoveRecord, 'state' | 'detail'>): boolean {
  return m.state === 'failed' && (m.detail?.includes(RETRY_REFUSED) ?? false);
}

export interface MoveTransition {
  state: MoveState;
  at: string;
  novaMigrationId?: number | null;
  detail?: string | null;
  /** Set when a retry starts a new attempt (state 'issuing' again). */
  attempt?: number;
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
