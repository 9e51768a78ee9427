// The plan document of ../shared/spec/formats.md ("aicerine-plan/1"), as types.

export const PLAN_FORMAT = 'aicerine-plan/1' as const;

// Exactly the spec's enumerations: outside tools read plans, so ours say more only in added
// fields (Move.softGroup, Plan.repairOnly), never in new values here.
export const PLAN_MODES = ['spread', 'pack'] as const;
export type PlanMode = (typeof PLAN_MODES)[number];

export const MOVE_PHASES = ['evacuate', 'affinity', 'spread', 'pack'] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

export interface Move {
  step: number;
  wave: number;
  server: string;
  /** The server's name, for people (the id is what executors use). */
  serverName?: string;
  from: string;
  to: string;
  phase: MovePhase;
  /**
   * Phase affinity, made for a soft (anti-)affinity group: optional like spread and pack (the
   * loop's hysteresis holds it back), where a hard group's repair is not. Absent when false.
   */
  softGroup?: boolean;
  reason: string;
  estimatedSeconds: number;
  /** Objective improvement this move buys (imbalance units; for pack and evacuate, see docs). */
  gain?: number;
  /** Moves (by step) that must finish before this one can start, because they free its room. */
  after?: number[];
  /**
   * Why this move is exempt from the worth threshold: it is demanded by a rule (a disabled host
   * to evacuate, a hard server group to repair), not bought for balance. Absent on optional moves.
   */
  mandatory?: MandatoryKind;
  /**
   * The threshold test of an optional balance move (spread, soft group), in imbalance units:
   * `worth` (the gain, plus a soft group's credit) against `bar`, what its cost asks for
   * (docs/policy.md, "threshold"). Absent on mandatory and pack moves.
   */
  threshold?: { worth: number; bar: number };
  /** The other half of an exchange: two servers trading hosts, which pays only as a pair. */
  exchangeWith?: number;
  /** The later step this move makes room for; the two pay only together. */
  makesRoomFor?: number;
}

export const MANDATORY_KINDS = ['evacuation', 'hard-group'] as const;
export type MandatoryKind = (typeof MANDATORY_KINDS)[number];

export interface DimensionStats {
  stddev: number;
  max: number;
  mean?: number;
}

export interface BalanceStats {
  imbalance: number;
  dimensions: Record<string, DimensionStats>;
}

export interface AggregatePlan {
  name: string;
  moves: Move[];
  before: BalanceStats;
  after: BalanceStats;
  hostsFreed: string[];
  unresolved: string[];
  /** Pack: empty hosts kept as spares (pack.spareHosts), not to be powered off. */
  spareHosts?: string[];
  /**
   * Pack: hosts drained of every server that can move, left with only servers that cannot
   * (pack.partialDrainMaxPinned); each is freed once those go.
   */
  hostsPartlyDrained?: string[];
  /** Present when the policy asked for `load: forecast` (docs/planner.md, "Planning on a forecast"). */
  forecast?: AggregateForecast;
}

/** A forecast peak the objective weighed: the slot of the profiles and the hour it stands for. */
export interface ForecastPeak {
  /** Profile slot (hour-of-week or hour-of-day, per snapshot.profiles.resolution). */
  slot: number;
  /** "Tue 11:00" on the profiles' wall clock, as reasons quote it. */
  label: string;
  /** The first hour of the horizon in that slot, ISO UTC. */
  at: string;
  /** Weighted forecast load of the whole aggregate then (total load over total capacity). */
  pressure: number;
}

export interface AggregateForecast {
  /** What the aggregate's objective balanced: the forecast at its peaks, or current load. */
  load: 'forecast' | 'current';
  /** Why it planned on current load although the policy asked for the forecast. */
  fallback?: string;
  horizonHours: number;
  /** The policy's forecast.peakSlots: the objective's dimensions are repeated this many times. */
  peakSlots: number;
  /**
   * The horizon's worst slots, in time order: peak k is what the objective's dimensions
   * `<name>@k` measure (moves' reasons quote them). Empty on current load.
   */
  peaks: ForecastPeak[];
  /** Servers of the aggregate without a profile figure at some peak: they count at current load. */
  serversOnCurrentLoad: number;
  /** snapshot.profiles.errors[aggregate].meanAbsolute, when measured. */
  error?: number;
  /** The policy's forecast.maxError the error was held to. */
  maxError: number;
  /** The objective (mean of the peaks' imbalances) before and after the plan; current-load imbalance on fallback. */
  imbalanceBefore: number;
  imbalanceAfter: number;
}

export interface PlanStats {
  planningMs: number;
  [key: string]: number;
}

export interface Plan {
  format: typeof PLAN_FORMAT;
  snapshotTakenAt: string;
  mode: PlanMode;
  /**
   * Made under a repair-only policy (mode is then spread): only what the rules demand, which our
   * checker holds it to. Absent when false.
   */
  repairOnly?: boolean;
  aggregates: AggregatePlan[];
  stats: PlanStats;
  /** Limits the plan was made under, so a checker can verify guarantees 4 and 6 without the policy. */
  limits?: {
    maxMoves: number;
    perHostOutgoing: number;
    globalConcurrent: number;
    /** The worth threshold optional moves were held to, so a checker can recompute each bar. */
    threshold?: PlanThreshold;
    /** Utilization (0..1) at or above which a host "runs hot" in a reason. */
    hotThreshold?: number;
  };
  policyHash?: string;
}

/**
 * The bar an optional move must clear, in objective units (imbalance × hosts counted, as minGain):
 * the larger of `minGain + migrationCostPerSecond × seconds` and
 * `perMove + perMinute × seconds / 60 + perGiB × memory GiB`; divided by the hosts counted, it is
 * the move's `threshold.bar`. `mandatoryOnly` (level 1): no optional move at all.
 */
export interface PlanThreshold {
  level: number | null;
  mandatoryOnly: boolean;
  perMove: number;
  perMinute: number;
  perGiB: number;
  minGain: number;
  migrationCostPerSecond: number;
  /** Objective units per soft group violation: a soft-group move's worth counts what it removes. */
  softGroupPenalty: number;
}

/** How `aicerine plan` and the dashboard show a soft-group move: a server-group move, not a repair. */
export const SOFT_GROUP_PHASE_LABEL = 'affinity (soft)';

/** The phase as people read it. */
export function phaseLabel(m: Pick<Move, 'phase' | 'softGroup'>): string {
  return m.softGroup ? SOFT_GROUP_PHASE_LABEL : m.phase;
}
