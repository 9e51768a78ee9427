// Guarantee 6: the whole plan, all aggregates together, stays within the move budget.
import type { PlanChecker, ReplayContext } from '../replay.js';
import { WHOLE_PLAN } from '../violations.js';

export function budgetChecker(): PlanChecker {
  return {
    constraint: 'budget',
    startsWith(ctx: ReplayContext): void {
      const budget = ctx.limits.maxMoves;
      if (budget === undefined) return;
      const moves = ctx.plan.aggregates.reduce((sum, a) => sum + a.moves.length, 0);
      if (moves > budget) {
        ctx.report({
          code: 'budget-exceeded',
          aggregate: WHOLE_PLAN,
          detail: `plan has ${moves} moves, budget ${budget}`,
        });
      }
    },
  };
}
