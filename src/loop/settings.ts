// The control loop's view of one aggregate's configuration: everything a cycle consults, already
// merged with defaults. The service configuration (src/config) is compiled into this.
import type { BudgetLimits } from '../config/budget.js';
import type { WeeklyWindow } from '../config/windows.js';
import type { Policy } from '../policy/types.js';
import type { LoopMode } from './decide.js';
import type { EmergencyRules } from './emergencies.js';
import type { HealthThresholds } from './health.js';

export interface AggregateLoopSettings {
  name: string;
  mode: LoopMode;
  paused: boolean;
  windows: WeeklyWindow[];
  budget: BudgetLimits;
  emergencyBudget: Pick<BudgetLimits, 'perCycle' | 'perDay'>;
  emergencies: EmergencyRules;
  /** The planner policy for this aggregate (its `aggregates` list is set by the loop). */
  policy: Policy;
  /** A balancing plan starts only from this imbalance up (hysteresis above the planner's target). */
  startImbalance: number;
  /** A moved server is held this long (no move back, no ping-pong). */
  serverCooldownSeconds: number;
  /** The servers of moves an aborted execution did not complete are held this long after it. */
  abortHoldSeconds: number;
  /** After an execution of the aggregate ends, no new balancing starts for this long. */
  aggregateCooldownSeconds: number;
  /** Assisted: an approval not acted on within this is void. */
  approvalExpirySeconds: number;
  health: HealthThresholds;
}

export interface LoopSettings {
  paused: boolean;
  globalBudget: BudgetLimits;
  aggregates: AggregateLoopSettings[];
}
