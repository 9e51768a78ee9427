// The executor's other ports, beside the journal: the cloud it reads and acts on, the clock, and
// the sinks the store implements later (quarantine, cost samples, audit). Plain types only, so
// an adapter on OpenStack, the store or a test can implement each one without the executor.

import type { ExecutionRecord, MoveRecord } from './journal.js';

/** Time as the executor sees it: epoch milliseconds, and a way to wait. Injected for tests. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock running `speed` times faster than the wall, from `startMs`: the simulator's virtual
 * clock seen from outside its process. Waits are shortened by the same factor.
 */
export function scaledClock(startMs: number, speed: number, wallMs: () => number = Date.now): Clock {
  if (!(speed > 0) || !Number.isFinite(speed)) {
    throw new RangeError(`clock speed: expected a finite number > 0, got ${speed}`);
  }
  const wall0 = wallMs();
  return {
    now: () => startMs + (wallMs() - wall0) * speed,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms / speed))),
  };
}

/** A server as pre-flight, following and reconciliation need it. */
export interface ServerView {
  id: string;
  /** Nova's status: ACTIVE, MIGRATING, ERROR... */
  status: string;
  taskState: string | null;
  /** The nova-compute host it runs on (null for a server that never started). */
  host: string | null;
  /** Nova's fault message when the server has one (a server in ERROR). */
  fault: string | null;
  /**
   * Its flavor's vCPUs and RAM (Nova 2.47+ embeds them): pre-flight checks a Placement
   * allocation read earlier against them. Absent when the reader does not know.
   */
  flavor?: { vcpus: number; ramMB: number };
}

/** One live-migration record, from os-migrations. */
export interface LiveMigrationView {
  id: number;
  serverId: string;
  status: string;
  source: string | null;
  dest: string | null;
  /** Epoch ms, Nova's clock. */
  createdAt: number;
  updatedAt: number | null;
}

/** Live-migration records changed since a time, from one listing of os-migrations. */
export interface LiveMigrationChanges {
  records: LiveMigrationView[];
  /**
   * The newest updated_at (Nova's clock) on the listing's first page, or null when it was empty:
   * a record created after that page was read has an updated_at at or after it, so the next
   * listing can start from here (less an overlap) without missing it.
   */
  newestOnFirstPage: number | null;
}

export interface ComputeServiceView {
  host: string;
  up: boolean;
  enabled: boolean;
  forcedDown: boolean;
  disabledReason: string | null;
}

export interface InventoryView {
  total: number;
  reserved: number;
  allocationRatio: number;
}

/** A host's Placement inventories and usages, read now. */
export interface HostRoomView {
  inventories: Record<string, InventoryView>;
  usages: Record<string, number>;
}

/** Why an actuator call did not do what was asked. */
export type ActuatorFailureKind =
  /** Nova answered with a refusal (4xx): nothing was started. */
  | 'refused'
  /** 409: the server or migration is not in a state that allows the call; nothing was started. */
  | 'conflict'
  /** No answer, a 5xx, or a request never sent: whether Nova acted must be read from its records. */
  | 'unknown';

export class ActuatorError extends Error {
  constructor(
    readonly kind: ActuatorFailureKind,
    message: string,
    readonly status: number | undefined = undefined,
  ) {
    super(message);
    this.name = 'ActuatorError';
  }
}

/**
 * The cloud, as narrow as the executor needs it. Reads throw on failure (the executor treats a
 * failed read as "ask again later"); actions throw ActuatorError.
 */
export interface ExecutorCloud {
  /**
   * Optional: what the first reads and calls would each wait for, done at once (microversions
   * negotiated, the hosts' resource providers known). Asked while a new execution is stored.
   */
  prepare?(): Promise<void>;
  /** null when the server no longer exists. */
  getServer(serverId: string): Promise<ServerView | null>;
  /**
   * Every server of every project whose updated_at is at or after `sinceMs` (Nova's clock;
   * `changes-since`), all pages, deleted ones with status DELETED: the servers whose migrations
   * just ended, in one listing.
   */
  listServersChangedSince(sinceMs: number): Promise<ServerView[]>;
  /** Every live-migration record of the server, newest first. */
  listLiveMigrations(serverId: string): Promise<LiveMigrationView[]>;
  /**
   * Every live-migration record of any server whose updated_at is at or after `sinceMs` (Nova's
   * `changes-since`; a record never saved since its creation has none and is not listed), all
   * pages. One call per page: how the executor follows all its migrations at once.
   */
  listLiveMigrationsChangedSince(sinceMs: number): Promise<LiveMigrationChanges>;
  /** The nova-compute service of a host; null when there is none. */
  getComputeService(host: string): Promise<ComputeServiceView | null>;
  /** Every nova-compute service, in one call. */
  listComputeServices(): Promise<ComputeServiceView[]>;
  /** null when the host has no resource provider. */
  getHostRoom(host: string): Promise<HostRoomView | null>;
  /** The host's Placement inventories; null when the host has no resource provider. */
  getHostInventories(host: string): Promise<HostRoomView['inventories'] | null>;
  /** The host's Placement usages now; null when the host has no resource provider. */
  getHostUsages(host: string): Promise<HostRoomView['usages'] | null>;
  /**
   * What each consumer (server, migration record) holds on the host's own resource provider,
   * by resource class, in one read; null when the host has no resource provider.
   */
  listHostAllocations(host: string): Promise<Map<string, Record<string, number>> | null>;
  /** What the server holds in Placement (the amounts a destination must take), by resource class. */
  getServerAllocation(serverId: string): Promise<Record<string, number>>;
  /** os-migrateLive to a named host, `block_migration: auto`, never forced. */
  liveMigrate(serverId: string, host: string): Promise<void>;
  /** DELETE /servers/{id}/migrations/{mid}. */
  abortLiveMigration(serverId: string, migrationId: number): Promise<void>;
}

/** A server taken out of automatic moves until an operator releases it. */
export interface QuarantineEntry {
  serverId: string;
  serverName?: string;
  aggregate: string;
  executionId: string;
  step: number;
  at: string;
  /** What happened, in words (attempts, statuses). */
  reason: string;
  /** Migration attempts that failed. */
  attempts: number;
  /** Nova's own words: the server's fault, a refusal message, the migration's final status. */
  novaFault: string | null;
}

export interface QuarantineSink {
  quarantine(entry: QuarantineEntry): Promise<void>;
}

/** One completed live migration, for the learned duration model. */
export interface CostSample {
  serverId: string;
  aggregate: string;
  source: string;
  dest: string;
  novaMigrationId: number;
  /** MEMORY_MB the server holds in Placement; null when it could not be read. */
  ramMB: number | null;
  /** From Nova's record: created_at to updated_at of the completed migration. */
  seconds: number;
  at: string;
}

export interface CostSampleSink {
  record(sample: CostSample): Promise<void>;
}

/** A server this executor moved: the start of its cooldown (the store's cooldown repository). */
export interface MovedServer {
  serverId: string;
  aggregate: string;
  lastMovedAt: string;
  from: string;
  to: string;
}

export interface CooldownSink {
  recordMove(move: MovedServer): Promise<void>;
}

/**
 * Before a later wave of an execution starts, what its moves are worth on a fresh reading: the
 * steps that no longer pay, each with why. Earlier waves changed the aggregate, and time passed
 * since the plan was made (issue 24). A failed reading throws: the wave waits for the next try.
 */
export type WaveGainCheck = (input: {
  execution: ExecutionRecord;
  wave: number;
  /** The wave's moves not yet sent to Nova (pending, first attempt). */
  moves: readonly MoveRecord[];
}) => Promise<{ step: number; why: string }[]>;

export const AUDIT_ACTIONS = [
  'execution-started',
  'execution-ended',
  'preflight-refused',
  'live-migrate',
  'migration-found',
  'abort',
  'move-completed',
  'move-failed',
  'retry-scheduled',
  'quarantined',
  'reconciled',
  'gain-dropped',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  at: string;
  /** Who or what acted: the execution's startedBy. */
  actor: string;
  action: AuditAction;
  executionId: string;
  step: number | null;
  serverId: string | null;
  detail: string;
}

export interface AuditSink {
  record(entry: AuditEntry): Promise<void>;
}
