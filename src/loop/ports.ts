// What the control loop needs from the rest of the service, as narrow ports: a reader of the
// cloud, the store, the executor and a clock. The loop itself decides; these only remember and act.
import type { Move, Plan } from '../model/plan.js';
import type { MigrationRecord, Snapshot } from '../model/snapshot.js';
import type { HealthVerdict, ReadProblems } from './health.js';
import type { Cooldown, ServerHold } from './holds.js';

export interface CloudRead {
  snapshot: Snapshot;
  problems: ReadProblems;
  /** Live migrations the cloud made recently (os-migrations), for the shadow report. */
  migrations: MigrationRecord[];
}

export interface CloudReader {
  read(): Promise<CloudRead>;
}

export type StoredPlanStatus =
  /** Observe mode, or nothing may start: kept for reading. */
  | 'observed'
  /** Assisted mode: waits for an operator. */
  | 'proposed'
  /** Some of its moves were handed to the executor. */
  | 'executing'
  /** Assisted: the approval window passed. */
  | 'expired'
  /** A newer plan replaced it before anything ran. */
  | 'superseded';

export interface StoredPlanView {
  id: string;
  aggregate: string;
  createdAt: string;
  status: StoredPlanStatus;
  /** When the plan (or the operator's approval of it) stops being executable; null: never. */
  expiresAt: string | null;
  /** The single-aggregate plan document as made. */
  plan: Plan;
}

export interface PlanProgress {
  rejected: Set<number>;
  started: Set<number>;
  completed: Set<number>;
}

export interface StartedMove {
  at: Date;
  emergency: boolean;
}

/** The aggregate's last execution that ended, with the moves it issued. */
export interface LastExecution {
  id: string;
  planId: string | null;
  state: 'finished' | 'aborted';
  endedAt: Date;
  /** Moves sent to Nova (any outcome), with when each ended. */
  moves: { serverId: string; from: string; to: string; state: string; endedAt: string | null }[];
}

/** A move an aborted execution did not complete: its server is held for a while. */
export interface AbortedMove {
  serverId: string;
  executionId: string;
  from: string;
  to: string;
  /** When its execution ended (aborted). */
  abortedAt: string;
}

export interface LoopStore {
  recordVerdict(verdict: HealthVerdict): Promise<void>;
  storePlan(entry: {
    aggregate: string;
    plan: Plan;
    status: StoredPlanStatus;
    decision: string;
    at: string;
  }): Promise<string>;
  setPlanStatus(planId: string, status: StoredPlanStatus, at: string): Promise<void>;
  /**
   * The aggregate's newest stored plan, whatever its status: `observed` or `proposed` as the
   * loop stored it, `other` once it was decided on, executed, expired or superseded.
   */
  latestPlan(
    aggregate: string,
  ): Promise<{ id: string; status: StoredPlanStatus | 'other'; plan: Plan } | null>;
  /** The newest plan of the aggregate still waiting for an operator (status proposed), if any. */
  pendingPlan(aggregate: string): Promise<StoredPlanView | null>;
  /** Steps of the plan approved and not rejected (approval expiry is the loop's business). */
  approvedSteps(planId: string): Promise<Set<number>>;
  /**
   * What became of a plan's moves so far: rejected by an operator, handed to an execution (any
   * outcome), and completed. A plan approved in part runs in part and stays open for the rest.
   */
  planProgress(planId: string): Promise<PlanProgress>;
  /** Server moves recent enough to still matter for cooldowns. */
  cooldowns(since: Date): Promise<Cooldown[]>;
  quarantined(): Promise<ServerHold[]>;
  /** Moves started in the aggregate since the given time (budgets). */
  startedMoves(aggregate: string, since: Date): Promise<StartedMove[]>;
  /** Moves started anywhere since the given time (global budget). */
  startedMovesEverywhere(since: Date): Promise<StartedMove[]>;
  /** When the aggregate's last execution ended (aggregate cooldown), or null. */
  lastExecutionEnded(aggregate: string): Promise<Date | null>;
  /** The aggregate's last execution that ended, or null. */
  lastExecution(aggregate: string): Promise<LastExecution | null>;
  /** Moves not completed by executions (of any aggregate) that ended aborted since the given time. */
  abortedMoves(since: Date): Promise<AbortedMove[]>;
  audit(entry: {
    actor: string;
    action: string;
    target: string;
    detail: Record<string, unknown>;
    at: string;
  }): Promise<void>;
}

export interface ExecutionRequest {
  aggregate: string;
  planId: string;
  moves: Move[];
  emergency: boolean;
  /** When the window closes: in-flight migrations are aborted then. Null: no deadline (emergencies, always-open). */
  deadline: Date | null;
  startedBy: string;
}

export interface ExecutorPort {
  /** Whether an execution of the aggregate is still running (the loop then leaves it alone). */
  isRunning(aggregate: string): boolean;
  /** Servers and hosts Aicerine is migrating right now. */
  inFlight(): { servers: ReadonlySet<string>; hosts: ReadonlySet<string> };
  /** Starts an execution in the background; its progress is the executor's and the store's business. */
  start(request: ExecutionRequest): Promise<void>;
}
