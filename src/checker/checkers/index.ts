// The registered checkers, one per constraint. Order only decides the order violations are listed in.
import type { PlanChecker } from '../replay.js';
import { balanceStatsChecker } from './balance-stats.js';
import { budgetChecker } from './budget.js';
import { capacityChecker } from './capacity.js';
import { concurrencyChecker } from './concurrency.js';
import { forecastChecker } from './forecast.js';
import { hygieneChecker } from './hygiene.js';
import { migratabilityChecker } from './migratability.js';
import { placementChecker } from './placement.js';
import { reasonsChecker } from './reasons.js';
import { repairOnlyChecker } from './repair-only.js';
import { sequenceChecker } from './sequence.js';
import { serverGroupChecker } from './server-groups.js';
import { worthChecker } from './worth.js';

/** Factories, since checkers keep state for one replay. */
export const CHECKERS: ReadonlyArray<() => PlanChecker> = [
  sequenceChecker,
  budgetChecker,
  placementChecker,
  migratabilityChecker,
  serverGroupChecker,
  repairOnlyChecker,
  concurrencyChecker,
  capacityChecker,
  balanceStatsChecker,
  hygieneChecker,
  worthChecker,
  reasonsChecker,
  forecastChecker,
];
