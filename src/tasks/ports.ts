// The task table, as the worker and the task service use it: the port the store implements
// (src/store/tasks.ts). Every state switch is a compare-and-set on the record's version.

import type { NewTaskBatch, TaskFilter, TaskPatch, TaskRecord } from '../records/tasks.js';
import type { Page, PageRequest } from '../store/paging.js';

export type { NewTask, NewTaskBatch, TaskFilter, TaskPatch } from '../records/tasks.js';

export interface TaskRepository {
  /** Creates the tasks of one request in one transaction, SCHEDULED, in the given order. */
  create(batch: NewTaskBatch): Promise<TaskRecord[]>;
  get(id: string): Promise<TaskRecord | null>;
  /** Newest first. */
  list(filter?: TaskFilter, page?: PageRequest): Promise<Page<TaskRecord>>;
  /** SCHEDULED, WAITING and RUNNING tasks, oldest first (the order a worker considers them). */
  unfinished(): Promise<TaskRecord[]>;
  /**
   * Applies `patch` if the row is still at `version` (and bumps it). Returns the new record, or
   * null when the task changed meanwhile or no longer exists: then nothing was written.
   */
  update(id: string, version: number, patch: TaskPatch, at: string): Promise<TaskRecord | null>;
  /**
   * A running task's own writes (progress, checkpoint, heartbeat): applied only while the task
   * is RUNNING under `owner`. Returns the new record, or null when it is not (adopted by another
   * worker, cancelled and ended): the run must stop.
   */
  updateRunning(id: string, owner: string, patch: TaskPatch, at: string): Promise<TaskRecord | null>;
  /** Deletes DONE tasks that ended before `before`; other states are never deleted. */
  deleteDone(before: string): Promise<number>;
}
