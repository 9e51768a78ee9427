// Guarantee 5: servers out of live-migration scope are never moved.
import { whyNotMigratable } from '../migratability.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';

export function migratabilityChecker(): PlanChecker {
  return {
    constraint: 'migratability',
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      const reasons = whyNotMigratable(m.server);
      if (reasons.length === 0) return;
      ctx.report({
        code: 'not-migratable',
        aggregate: m.aggregate,
        step: m.move.step,
        wave: m.move.wave,
        server: m.server.id,
        host: m.from.name,
        detail: `server ${m.server.name} (${m.server.id}) must not be moved: ${reasons.join('; ')}`,
      });
    },
  };
}
