// The operator tasks' records, as the task worker and service write them through the task table
// (src/tasks/ports.ts, the port) and the store keeps them (src/store/tasks.ts): plain data and the
// states it may hold, below both. States and their meaning: src/tasks/types.ts.

import type { JsonObject, JsonValue } from './json.js';

export const TASK_STATES = ['SCHEDULED', 'WAITING', 'RUNNING', 'DONE', 'ERROR'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** States a task does not leave. */
export const FINAL_TASK_STATES: readonly TaskState[] = ['DONE', 'ERROR'];

export function isFinalTaskState(state: TaskState): boolean {
  return state === 'DONE' || state === 'ERROR';
}

export interface TaskProgress {
  done: number;
  /** null while the task does not know yet how much there is. */
  total: number | null;
  /** The step now, in words: "live-migrating web-3 to compute2". */
  detail: string;
}

export interface TaskRecord {
  id: string;
  kind: string;
  /** The parsed arguments, as the handler's `parse` returned them (stored as JSON). */
  args: JsonObject;
  /** "operator:alice", "cli", "task:12" for a follow-up task. */
  requestedBy: string;
  requestedAt: string;
  /** Tasks created by one request share a batch (validate-compute: one task per host + clean-up). */
  batch: string;
  /** True for a task that starts only when every other task of its batch has ended. */
  afterBatch: boolean;
  state: TaskState;
  progress: TaskProgress;
  /** What a DONE task did (the handler's return value); also kept when it ended in ERROR half-way. */
  result: JsonValue | null;
  /** Why it is in ERROR. */
  error: string | null;
  /** Why it is WAITING (or why the worker left it untouched, e.g. the lock backend is unreachable). */
  waitingReason: string | null;
  /** Hosts the task holds `host/<host>` locks on while it runs (the balancer keeps off them). */
  hosts: string[];
  /** The handler's last saved checkpoint: where a resumed run continues. */
  checkpoint: JsonValue | null;
  /** The worker running it (RUNNING), or that ran it last. */
  owner: string | null;
  /** Set by a cancel request on a RUNNING task; the handler's signal aborts. */
  cancelRequested: boolean;
  /** How many times a worker started (or resumed) it. */
  attempts: number;
  /** Grows with every write: a decision names the version it read, so a stale one writes nothing. */
  version: number;
  startedAt: string | null;
  heartbeatAt: string | null;
  updatedAt: string;
  endedAt: string | null;
}

export interface NewTask {
  kind: string;
  args: JsonObject;
  hosts: string[];
  afterBatch: boolean;
}

export interface NewTaskBatch {
  requestedBy: string;
  requestedAt: string;
  /** Shared by the tasks of one request. */
  batch: string;
  tasks: NewTask[];
}

export interface TaskFilter {
  state?: TaskState;
  kind?: string;
  /** Tasks that lock this host. */
  host?: string;
  batch?: string;
}

/** Fields a decision or a running task changes; absent fields stay as they are. */
export interface TaskPatch {
  state?: TaskState;
  progress?: TaskProgress;
  result?: JsonValue | null;
  error?: string | null;
  waitingReason?: string | null;
  checkpoint?: JsonValue | null;
  owner?: string | null;
  cancelRequested?: boolean;
  attempts?: number;
  startedAt?: string | null;
  heartbeatAt?: string | null;
  endedAt?: string | null;
}
