// Guarantee 4: a wave never runs more outgoing live migrations from one host than that host allows
// (its max_concurrent_live_migrations, else the plan's per-host limit), nor more in total than the
// global limit. Both apply per aggregate, since aggregates execute independently.
import { type PlanChecker, type ReplayContext, stepsByHost, type WaveRun } from '../replay.js';

export function concurrencyChecker(): PlanChecker {
  return {
    constraint: 'concurrency',
    onWaveStart(ctx: ReplayContext, wave: WaveRun): void {
      for (const { host, steps } of stepsByHost(wave, 'from')) {
        const limit = ctx.limits.perHostOutgoing(host);
        if (steps.length > limit) {
          ctx.report({
            code: 'per-host-concurrency',
            aggregate: wave.aggregate,
            wave: wave.wave,
            host: host.name,
            detail: `wave ${wave.wave} has ${steps.length} outgoing migrations from ${host.name} (steps ${steps.join(', ')}), limit ${limit}`,
          });
        }
      }
      const global = ctx.limits.globalConcurrent;
      if (global !== undefined && wave.moves.length > global) {
        ctx.report({
          code: 'global-concurrency',
          aggregate: wave.aggregate,
          wave: wave.wave,
          detail: `wave ${wave.wave} has ${wave.moves.length} migrations in flight, limit ${global}`,
        });
      }
    },
  };
}
