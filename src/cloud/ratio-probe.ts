// Finds out, by experiment, whether nova-compute owns a host's VCPU allocation ratio
// (cpu_allocation_ratio set in nova.conf): no API shows the setting, but its effect is
// visible, since nova-compute writes the configured ratio back to Placement on its
// periodic update. The probe nudges the ratio by an amount too small to change what fits,
// waits past one periodic interval, reads it back and restores the original.
import type { PlacementClient } from './openstack/placement.js';

export interface RatioProbeResult {
  host: string;
  original: number;
  probe: number;
  /** What Placement held after the wait. */
  observed: number;
  /** true: something (nova-compute) rewrote the ratio during the wait. */
  pinned: boolean;
  waitedMs: number;
}

export interface RatioProbeOptions {
  /** Longer than nova-compute's periodic update (60 s by default). */
  waitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A nudge that keeps floor((total - reserved) * ratio) unchanged, so the scheduler never sees
 * an extra whole vCPU while the probe runs.
 */
export function probeRatio(original: number, usable: number): number {
  const room = (Math.floor(usable * original) + 1 - usable * original) / Math.max(usable, 1);
  return original + Math.min(0.0001, room / 2);
}

export async function probeRatioOwner(
  placement: PlacementClient,
  host: string,
  rpUuid: string,
  opts: RatioProbeOptions = {},
): Promise<RatioProbeResult> {
  const waitMs = opts.waitMs ?? 75_000;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let original = 0;
  let probe = 0;
  await placement.updateInventory(rpUuid, 'VCPU', (inv) => {
    original = inv.allocationRatio;
    probe = probeRatio(inv.allocationRatio, inv.total - inv.reserved);
    return { ...inv, allocationRatio: probe };
  });
  try {
    await sleep(waitMs);
    const observed = (await placement.getInventories(rpUuid)).inventories.VCPU?.allocationRatio ?? Number.NaN;
    return { host, original, probe, observed, pinned: Math.abs(observed - probe) > 1e-9, waitedMs: waitMs };
  } finally {
    // Put back the original only if the probe value is still there: a rewrite by nova-compute
    // (or by an operator meanwhile) is theirs to keep.
    await placement.updateInventory(rpUuid, 'VCPU', (inv) =>
      Math.abs(inv.allocationRatio - probe) <= 1e-9 ? { ...inv, allocationRatio: original } : inv,
    );
  }
}
