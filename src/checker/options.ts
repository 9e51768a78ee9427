// What the checker holds a plan to: limits from the caller, else those the plan says it was made under.
import type { Plan, PlanThreshold } from '../model/plan.js';
import type { Host } from '../model/snapshot.js';
import type { DimensionDef } from '../policy/types.js';
import type { Objective } from './forecast.js';

export interface CheckOptions {
  /** Guarantee 6. Default: plan.limits.maxMoves; without either the budget is not checked. */
  maxMoves?: number;
  /** Guarantee 4, per source host and wave. Default: plan.limits.perHostOutgoing, else 1. A host's own
   *  maxConcurrentLiveMigrations (its nova.conf) replaces this for that host. */
  perHostOutgoing?: number;
  /** Guarantee 4, per aggregate and wave. Default: plan.limits.globalConcurrent; else not checked. */
  globalConcurrent?: number;
  /** Dimensions for recomputing before/after. Default: cpu and memory weighted 0.5 each (formats.md). */
  dimensions?: DimensionDef[];
  /** Allowed difference between reported and recomputed numbers: |a - b| <= tolerance * max(1, |a|, |b|). */
  tolerance?: number;
}

/** The dimensions formats.md defines the default imbalance with. Declared here, not imported from the
 *  policy defaults, so that a change there cannot silently change what the checker expects. */
export const DEFAULT_CHECK_DIMENSIONS: readonly DimensionDef[] = [
  { name: 'cpu', weight: 0.5, load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' },
  { name: 'memory', weight: 0.5, load: 'memoryMB', capacity: 'MEMORY_MB', missingServerLoad: 'flavor-ram' },
];

export const DEFAULT_TOLERANCE = 1e-6;

/** formats.md: the utilization at or above which a host runs hot when the plan does not say. Declared
 *  here, not imported from the policy, for the same reason as the dimensions. */
export const DEFAULT_HOT_THRESHOLD = 0.85;

export interface Limits {
  maxMoves: number | undefined;
  perHostOutgoing(host: Host): number;
  globalConcurrent: number | undefined;
  dimensions: readonly DimensionDef[];
  tolerance: number;
  /** The worth threshold the plan says its optional moves were held to; undefined: not checked. */
  threshold: PlanThreshold | undefined;
  hotThreshold: number;
  /**
   * Aggregates the plan says it balanced on the forecast, with the objective recomputed from the
   * snapshot's profiles (src/checker/forecast.ts); the others are judged on current load.
   */
  objectives: ReadonlyMap<string, Objective>;
}

export function resolveLimits(plan: Plan, options: CheckOptions = {}): Limits {
  const perHost = options.perHostOutgoing ?? plan.limits?.perHostOutgoing ?? 1;
  return {
    maxMoves: options.maxMoves ?? plan.limits?.maxMoves,
    perHostOutgoing: (host) => host.maxConcurrentLiveMigrations ?? perHost,
    globalConcurrent: options.globalConcurrent ?? plan.limits?.globalConcurrent,
    dimensions: options.dimensions ?? DEFAULT_CHECK_DIMENSIONS,
    tolerance: options.tolerance ?? DEFAULT_TOLERANCE,
    threshold: plan.limits?.threshold,
    hotThreshold: plan.limits?.hotThreshold ?? DEFAULT_HOT_THRESHOLD,
    objectives: new Map(),
  };
}
