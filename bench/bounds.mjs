// Lower bounds printed by the benchmark, computed from the snapshot alone.
import { ClusterState } from '../dist/planner/state.js';

/** Hosts needed: per aggregate, the fewest largest hosts whose capacity covers the usage, per resource class. */
export function packLowerBound(snapshot) {
  const byAgg = new Map();
  for (const h of snapshot.hosts) {
    const key = h.aggregates[0] ?? '_unassigned_';
    if (!byAgg.has(key)) byAgg.set(key, []);
    byAgg.get(key).push(h);
  }
  const pinned = new Set(
    snapshot.servers
      .filter((s) => s.sharedStorage === false || s.metadata?.['aicerine:exclude'] === 'true')
      .map((s) => s.host),
  );
  let total = 0;
  for (const hosts of byAgg.values()) {
    let need = hosts.filter((h) => pinned.has(h.name)).length;
    for (const rc of ['VCPU', 'MEMORY_MB']) {
      const used = hosts.reduce((s, h) => s + (h.usage[rc] ?? 0), 0);
      const caps = hosts
        .map((h) => {
          const inv = h.inventory[rc];
          return inv ? (inv.total - inv.reserved) * inv.allocationRatio : 0;
        })
        .sort((a, b) => b - a);
      let k = 0;
      let sum = 0;
      while (sum < used && k < caps.length) sum += caps[k++];
      need = Math.max(need, k);
    }
    total += need;
  }
  return total;
}

/**
 * Migrations needed to bring each dimension's sum of squared deviations from its value before
 * to its value after the plan: one move of a server of relative size x between hosts whose
 * utilizations differ by at most R (the initial range) removes at most 2xR - 2x^2. Plus the
 * evacuations, which are mandatory. (Bound assumes utilizations stay within the initial range.)
 */
export function spreadLowerBound(snapshot, plan, policy) {
  const state = new ClusterState(snapshot, policy);
  let total = 0;
  for (const aggPlan of plan.aggregates) {
    const agg = state.aggregates.find((a) => a.name === aggPlan.name);
    const n = agg.counted.length;
    if (n === 0) continue;
    let need = 0;
    policy.dimensions.forEach((dim, d) => {
      const utils = agg.counted.map((h) => state.util(h, d));
      const range = Math.max(...utils) - Math.min(...utils);
      const minPhys = Math.min(...agg.counted.map((h) => state.hosts[h].phys[d]).filter((p) => p > 0));
      let best = 0;
      for (const h of agg.hosts) {
        for (const s of state.on[h]) {
          const sv = state.servers[s];
          if (sv.immovable !== null) continue;
          const x = Math.min(sv.load[d] / minPhys, range / 2);
          best = Math.max(best, 2 * x * range - 2 * x * x);
        }
      }
      const before = aggPlan.before.dimensions[dim.name];
      const after = aggPlan.after.dimensions[dim.name];
      const drop = n * (before.stddev ** 2 - after.stddev ** 2);
      if (drop > 0 && best > 0) need = Math.max(need, Math.ceil(drop / best));
    });
    total += need + aggPlan.moves.filter((m) => m.phase === 'evacuate').length;
  }
  return total;
}
