// The clouds `aicerine demo` starts. The plan-only demo: a few aggregates of a few dozen hosts,
// over a thousand servers, one host disabled for maintenance and some server groups already
// violated. The running demo: three aggregates (one per mode), the second with a hot host that
// stands out on the dashboard's heatmap and that its plan evens out once approved.
import type { Snapshot } from '../model/snapshot.js';
import { type SynthOptions, synthesizeSnapshot } from '../snapshot/synth.js';

export const DEMO_CLOUD: SynthOptions = {
  hosts: 48,
  servers: 1400,
  groups: 40,
  seed: 2026,
  aggregates: 4,
  disabled: 1,
};

/** The running demo's cloud: agg-1 (active), agg-2 (assisted, with the hot host), agg-3 (observe). */
export const SERVICE_DEMO_CLOUD: SynthOptions = {
  hosts: 24,
  servers: 480,
  groups: 12,
  seed: 2026,
  aggregates: 3,
  disabled: 0,
};

export function demoSynthSpec(c: SynthOptions = DEMO_CLOUD): string {
  return [c.hosts, c.servers, c.groups, c.seed, c.aggregates ?? 0, c.disabled ?? 0].join(',');
}

/** How full the hot host's memory gets (of what Placement allows). */
const HOT_FILL = 0.9;

/**
 * Makes the first enabled host of `aggregate` hot: servers outside any server group move onto it
 * from the aggregate's other hosts (usage and measured load follow) until its memory or VCPU
 * allocation reaches HOT_FILL of capacity, and its guests get busy. Returns the host's name.
 * Deterministic.
 */
export function heatHost(snapshot: Snapshot, aggregate: string): string {
  const hosts = snapshot.hosts
    .filter((h) => h.aggregates.includes(aggregate) && h.service.status === 'enabled')
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const hot = hosts[0];
  if (hot === undefined) throw new Error(`demo: aggregate ${aggregate} has no enabled host to heat`);
  const grouped = new Set(snapshot.serverGroups.flatMap((g) => g.members));
  const cap = (rc: 'VCPU' | 'MEMORY_MB') => {
    const inv = hot.inventory[rc]!;
    return (inv.total - inv.reserved) * inv.allocationRatio * HOT_FILL;
  };
  const others = new Set(hosts.slice(1).map((h) => h.name));
  const byName = new Map(snapshot.hosts.map((h) => [h.name, h]));
  for (const s of snapshot.servers) {
    if (!others.has(s.host) || grouped.has(s.id) || s.status !== 'ACTIVE') continue;
    const vcpu = (hot.usage.VCPU ?? 0) + s.flavor.vcpus;
    const mem = (hot.usage.MEMORY_MB ?? 0) + s.flavor.ramMB;
    if (vcpu > cap('VCPU') || mem > cap('MEMORY_MB')) continue;
    const from = byName.get(s.host)!;
    for (const [rc, n] of [
      ['VCPU', s.flavor.vcpus],
      ['MEMORY_MB', s.flavor.ramMB],
      ['DISK_GB', s.flavor.diskGB],
    ] as const) {
      from.usage[rc] = (from.usage[rc] ?? 0) - n;
      hot.usage[rc] = (hot.usage[rc] ?? 0) + n;
    }
    if (from.load && hot.load && s.load) {
      for (const k of ['cpu', 'memoryMB'] as const) {
        from.load[k] = Math.max(0, (from.load[k] ?? 0) - (s.load[k] ?? 0));
        hot.load[k] = (hot.load[k] ?? 0) + (s.load[k] ?? 0);
      }
    }
    s.host = hot.name;
  }
  // And its guests busy: CPU near 90% of the physical cores, memory near 95% of what they have.
  // Their load moves with them, so the host cools as the plan moves them away.
  const mine = snapshot.servers.filter((s) => s.host === hot.name);
  const vcpus = mine.reduce((n, s) => n + s.flavor.vcpus, 0);
  const cores = hot.inventory.VCPU!.total - hot.inventory.VCPU!.reserved;
  const perVcpu = vcpus > 0 ? (0.9 * cores) / vcpus : 0;
  for (const s of mine)
    s.load = { ...s.load, cpu: s.flavor.vcpus * perVcpu, memoryMB: s.flavor.ramMB * 0.95 };
  hot.load = {
    ...hot.load,
    cpu: mine.reduce((n, s) => n + (s.load?.cpu ?? 0), 0),
    memoryMB: mine.reduce((n, s) => n + (s.load?.memoryMB ?? 0), 0),
  };
  return hot.name;
}

/** The running demo's snapshot and the name of its hot host (in agg-2). */
export function serviceDemoSnapshot(c: SynthOptions = SERVICE_DEMO_CLOUD): {
  snapshot: Snapshot;
  hotHost: string;
} {
  const snapshot = synthesizeSnapshot(c);
  return { snapshot, hotHost: heatHost(snapshot, 'agg-2') };
}
