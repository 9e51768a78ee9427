// The records of executions and their moves, as the executor writes them through its journal
// (src/executor/journal.ts, the port) and the store keeps them (src/store/journal.ts). Plain data
// and the states it may hold, below both, so the store implements the port without importing
// the executor. Times are ISO-8601 UTC strings taken from the injected clock.

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

export interface MoveTransition {
  state: MoveState;
  at: string;
  novaMigrationId?: number | null;
  detail?: string | null;
  /** Set when a retry starts a new attempt (state 'issuing' again). */
  attempt?: number;
}
