// The vocabulary of the plan checker: every way a plan can break a guarantee of formats.md.
// Codes are stable strings so that scripts and tests can match on them; `detail` is for people.

export const VIOLATION_CODES = [
  // references (the plan names things the snapshot does not have)
  'unknown-server',
  'unknown-host',
  // sequence (numbering and ordering of steps and waves)
  'duplicate-aggregate',
  'steps-not-ordered',
  'wave-order',
  'moved-twice-in-wave',
  'bad-dependency',
  // guarantee 1: placement of each move
  'server-not-on-source',
  'source-down',
  'destination-not-up',
  'destination-disabled',
  'destination-forced-down',
  'destination-is-source',
  'zone-mismatch',
  'aggregate-mismatch',
  'host-in-wrong-aggregate',
  'aggregates-overlap',
  // guarantee 2: Placement capacity, in-flight claims included
  'capacity-exceeded',
  // guarantee 3: hard server groups
  'anti-affinity-worse',
  'affinity-worse',
  // mode repair-only: only servers that break a rule move
  'repair-only-needless-move',
  // guarantee 4: concurrency per wave
  'per-host-concurrency',
  'global-concurrency',
  // guarantee 5: servers out of live-migration scope
  'not-migratable',
  // guarantee 6: move budget
  'budget-exceeded',
  // reported numbers
  'stats-mismatch',
  'hosts-freed-mismatch',
  // hygiene: what an operator reads as churn (no server twice, no host both sending and receiving)
  'server-moved-twice',
  'wave-send-receive',
  'host-send-receive',
  'hot-not-first',
  // worth: each optional move buys what it costs
  'exchange-unpaid',
  'nonpositive-gain',
  'below-threshold',
  'mandatory-mislabelled',
  // reasons: every figure and word a reason quotes is true in step order
  'reason-mismatch',
  // forecast (load: forecast): peaks, fallbacks and the figures reasons quote, from the profiles
  'forecast-mismatch',
] as const;

export type ViolationCode = (typeof VIOLATION_CODES)[number];

/** Aggregate name used for violations about the plan as a whole (budget, duplicate aggregates). */
export const WHOLE_PLAN = '*';

export interface Violation {
  code: ViolationCode;
  /** The checker that found it: references, sequence, placement, capacity, server-groups, repair-only, concurrency, migratability, budget, stats, hygiene, worth, reasons, forecast. */
  constraint: string;
  /** Aggregate the offending move or numbers are listed under; WHOLE_PLAN for plan-wide ones. */
  aggregate: string;
  step?: number;
  wave?: number;
  server?: string;
  host?: string;
  detail: string;
}

export interface CheckResult {
  ok: boolean;
  violations: Violation[];
}
