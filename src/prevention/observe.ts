// The hosts' ratio state as the decision function wants it, from a recorded snapshot (Placement
// inventory and usage, Prometheus load) and the map of hosts to resource providers.
import type { Host } from '../model/snapshot.js';
import type { HostRatioState } from './decide.js';

export interface ObserveOptions {
  /** Load key of the host's stolen CPU share (0..1), when the metrics policy records one. */
  stealKey?: string | undefined;
}

/**
 * Utilization is the host's busy cores (load `cpu`) over its VCPU total: the cores the guests
 * share, which is what contention is about. A host without a VCPU inventory or a provider is
 * left out; one without a cpu measurement gets no load and is left alone by the decision.
 */
export function hostRatioStates(
  hosts: readonly Host[],
  rpUuidOf: (host: string) => string | undefined,
  opts: ObserveOptions = {},
): HostRatioState[] {
  const out: HostRatioState[] = [];
  for (const h of hosts) {
    const inv = h.inventory.VCPU;
    const rpUuid = rpUuidOf(h.name);
    if (!inv || !rpUuid || !(inv.total > 0)) continue;
    const cpu = h.load?.cpu;
    const steal = opts.stealKey ? h.load?.[opts.stealKey] : undefined;
    out.push({
      host: h.name,
      rpUuid,
      ratio: inv.allocationRatio,
      total: inv.total,
      reserved: inv.reserved,
      used: h.usage.VCPU ?? 0,
      load:
        cpu === undefined
          ? undefined
          : { utilization: cpu / inv.total, ...(steal !== undefined ? { steal } : {}) },
    });
  }
  return out;
}
