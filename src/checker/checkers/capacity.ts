// Guarantee 2: Placement capacity holds at every moment. While a wave is in flight each migrating
// server is claimed on both its source and its destination, so the moment all of a wave's claims are
// in place is the worst one; releasing the sources at wave end only lowers usage, so checking that
// moment on every host that received a claim covers the whole wave.
import type { Host } from '../../model/snapshot.js';
import {
  CLAIMED_CLASSES,
  type PlanChecker,
  type ReplayContext,
  stepsByHost,
  type WaveRun,
} from '../replay.js';

/** Placement's limit for a resource class: (total - reserved) * allocation_ratio. */
function capacityOf(host: Host, rc: string): number | undefined {
  const inv = host.inventory[rc];
  return inv ? (inv.total - inv.reserved) * inv.allocationRatio : undefined;
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(3);
}

export function capacityChecker(): PlanChecker {
  return {
    constraint: 'capacity',
    onWaveEnd(ctx: ReplayContext, wave: WaveRun): void {
      for (const { host, steps } of stepsByHost(wave, 'to')) {
        for (const rc of CLAIMED_CLASSES) {
          const capacity = capacityOf(host, rc);
          const used = ctx.state.usageOf(host.name, rc);
          const by = `step${steps.length > 1 ? 's' : ''} ${steps.join(', ')}`;
          if (capacity === undefined) {
            ctx.report({
              code: 'capacity-exceeded',
              aggregate: wave.aggregate,
              wave: wave.wave,
              host: host.name,
              detail: `${host.name} has no ${rc} inventory, yet ${by} claim ${rc} on it`,
            });
          } else if (used > capacity + 1e-9 * Math.max(1, capacity)) {
            ctx.report({
              code: 'capacity-exceeded',
              aggregate: wave.aggregate,
              wave: wave.wave,
              host: host.name,
              detail: `${host.name} ${rc}: usage with wave ${wave.wave} in flight (${by}) is ${formatNumber(used)}, capacity ${formatNumber(capacity)}`,
            });
          }
        }
      }
    },
  };
}
