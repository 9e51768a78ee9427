// The independent plan checker: replays a plan against its snapshot and lists every way it breaks
// what formats.md says a valid plan guarantees. Shares nothing with the planner but the model types.
import type { Plan } from '../model/plan.js';
import type { Snapshot } from '../model/snapshot.js';
import { CHECKERS } from './checkers/index.js';
import { forecastObjectives } from './forecast.js';
import { type CheckOptions, resolveLimits } from './options.js';
import { replay } from './replay.js';
import type { CheckResult } from './violations.js';
import { buildWorld } from './world.js';

export { formatCheckResult } from './format.js';
export { whyNotMigratable } from './migratability.js';
export type { CheckOptions } from './options.js';
export { DEFAULT_CHECK_DIMENSIONS } from './options.js';
export type { PlanChecker } from './replay.js';
export { type AggregateOutcome, aggregateOutcome } from './stats.js';
export {
  type CheckResult,
  VIOLATION_CODES,
  type Violation,
  type ViolationCode,
  WHOLE_PLAN,
} from './violations.js';

export function checkPlan(snapshot: Snapshot, plan: Plan, options?: CheckOptions): CheckResult {
  const world = buildWorld(snapshot);
  const limits = resolveLimits(plan, options);
  const violations = replay(
    world,
    plan,
    { ...limits, objectives: forecastObjectives(world, plan, limits.dimensions) },
    CHECKERS.map((create) => create()),
  );
  return { ok: violations.length === 0, violations };
}
