// The compiled planning policy. A user's YAML policy is validated and merged over the
// defaults (src/policy/defaults.ts) before the planner sees it.
import { PLAN_MODES } from '../model/plan.js';
import type { Threshold } from './threshold.js';

// The policy format is ours, so it may have a mode the plan format lacks: a repair-only plan is
// written as a spread plan with repairOnly (src/model/plan.ts).
export const POLICY_MODES = [...PLAN_MODES, 'repair-only'] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];

/** One dimension of imbalance: a measured load key divided by a host's physical capacity of a resource class. */
export interface DimensionDef {
  /** Name shown in plans ("cpu", "memory", ...). */
  name: string;
  /** Weight in the imbalance sum. */
  weight: number;
  /** Key in host and server `load` ("cpu", "memoryMB", or a custom one). */
  load: string;
  /** Resource class whose `total - reserved` is the physical capacity ("VCPU", "MEMORY_MB", ...). */
  capacity: string;
  /**
   * What a server without a measured value for this key counts as: "zero", or "flavor-vcpus",
   * "flavor-ram", "flavor-disk" (its flavor size). formats.md: memory defaults to the flavor, cpu to zero.
   */
  missingServerLoad: 'zero' | 'flavor-vcpus' | 'flavor-ram' | 'flavor-disk';
}

/** What the objective weighs: the load measured now, or the forecast from load profiles (issue 28). */
export const LOAD_SOURCES = ['current', 'forecast'] as const;
export type LoadSource = (typeof LOAD_SOURCES)[number];

export interface ForecastPolicy {
  /** The hours after the snapshot the forecast looks at. */
  horizonHours: number;
  /** How many of the horizon's worst slots (highest forecast aggregate load) the objective weighs. */
  peakSlots: number;
  /**
   * Largest forecast error (mean absolute, in host-utilization points 0..1, snapshot
   * profiles.errors) an aggregate may have and still plan on the forecast.
   */
  maxError: number;
}

export interface CostModelPolicy {
  /** Usable live-migration bandwidth per migration, MiB/s. */
  bandwidthMBps: number;
  /** Dirty rate assumed when a server has none measured, MiB/s. */
  defaultDirtyRateMBps: number;
  /** Fixed per-migration overhead (scheduling, pre/post live-migration RPCs), seconds. */
  overheadSeconds: number;
  /** Pre-copy stops when the remaining dirty set is below this, MiB (then one stop-and-copy). */
  stopCopyThresholdMB: number;
  /** Pre-copy iterations before it gives up converging (Nova/libvirt would then pause or post-copy). */
  maxIterations: number;
  /**
   * Learned coefficients (src/costs): seconds = a + ramGiB * (b + c * dirtyMBps), c optional, the
   * dirty rate defaulting to defaultDirtyRateMBps; when given they replace the pre-copy estimate.
   */
  learned?:
    | { intercept: number; secondsPerGiB: number; secondsPerGiBPerDirtyMBps?: number | undefined }
    | undefined;
}

export interface Policy {
  mode: PolicyMode;
  dimensions: DimensionDef[];
  /** Aggregates to plan (empty: all, plus `_unassigned_`). */
  aggregates: string[];
  budget: {
    /** Maximum number of moves in the whole plan. */
    maxMoves: number;
  };
  concurrency: {
    /** Outgoing live migrations per source host per wave (Nova's max_concurrent_live_migrations). */
    perHostOutgoing: number;
    /** Live migrations in flight per aggregate per wave. */
    global: number;
  };
  spread: {
    /** Stop when the aggregate's imbalance is at or below this. */
    targetImbalance: number;
  };
  pack: {
    /** Empty hosts to keep on top of those already empty (spares for failures and bursts). */
    spareHosts: number;
    /** A host counts as fully used for packing at this fraction of its Placement capacity. */
    maxFill: number;
    /**
     * A host kept by servers that cannot move is drained of the others when those servers take
     * at most this share of it (VCPU and memory); 0 turns such partial drains off.
     */
    partialDrainMaxPinned: number;
  };
  /**
   * A move must improve the objective by at least this much, after its cost. Objective units
   * are imbalance times the number of hosts in the aggregate's imbalance (see docs/policy.md).
   */
  minGain: number;
  /** Objective units charged per second of estimated migration time. */
  migrationCostPerSecond: number;
  /**
   * The worth threshold optional moves must clear (src/policy/threshold.ts): a level 1..5 or
   * explicit figures. Mandatory moves (evacuations, hard-group repairs) are exempt.
   */
  threshold: Threshold;
  /**
   * current: balance the load measured now. forecast: balance the forecast at the horizon's
   * worst slots (docs/planner.md); capacity checks stay on current usage either way.
   */
  load: LoadSource;
  forecast: ForecastPolicy;
  /** Utilization (0..1) at or above which a host runs hot: reasons, hot-spots-first, the dashboard. */
  hotThreshold: number;
  /** Objective units per soft server-group violation. */
  softGroupPenalty: number;
  planner: {
    /**
     * Upper bound on the improvement stage, as a deterministic work budget: the stage may score
     * timeLimitMs × IMPROVE_EVALUATIONS_PER_MS moves (docs/policy.md). Results depend only on
     * the inputs, never on the clock. 0: no improvement stage.
     */
    timeLimitMs: number;
  };
  costModel: CostModelPolicy;
}
