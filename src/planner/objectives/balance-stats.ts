import type { BalanceStats } from '../../model/plan.js';
import type { ClusterState } from '../state.js';

/** before/after figures of formats.md, over the aggregate's counted (up, enabled) hosts. */
export function balanceStats(state: ClusterState, agg: number): BalanceStats {
  const hosts = state.aggregates[agg]!.counted;
  const dimensions: BalanceStats['dimensions'] = {};
  let imbalance = 0;
  state.dims.forEach((dim, d) => {
    let sum = 0;
    let sq = 0;
    let max = 0;
    for (const h of hosts) {
      const u = state.util(h, d);
      sum += u;
      sq += u * u;
      max = Math.max(max, u);
    }
    const n = hosts.length;
    const mean = n > 0 ? sum / n : 0;
    const stddev = n > 0 ? Math.sqrt(Math.max(0, sq / n - mean * mean)) : 0;
    imbalance += dim.weight * stddev;
    dimensions[dim.name] = { stddev: round(stddev), max: round(max), mean: round(mean) };
  });
  return { imbalance: round(imbalance), dimensions };
}

export function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
