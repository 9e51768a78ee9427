// The words a forecast plan adds to each move's reason: the forecast peak at which the move's
// source host is busiest, in the dimension it is busiest in, before and after the move
// ("forecast peak Tue 11:00: cpu 92% → 71%"), taken on the replay in step order like the rest
// of the reason (finalize.ts), so the checker can recompute it from the snapshot's profiles.
import type { ForecastPeak } from '../../model/plan.js';
import { pct } from '../describe.js';
import type { FinalMove } from '../finalize.js';
import type { ClusterState } from '../state.js';

/**
 * Appends the forecast-peak clause to the reasons of one aggregate's moves (in step order).
 * `state` holds none of the aggregate's moves on entry and on return; its dimensions are the
 * forecast objective's, K copies of `baseNames` in peak order.
 */
export function addForecastPeakWords(
  state: ClusterState,
  moves: FinalMove[],
  peaks: readonly ForecastPeak[],
  baseNames: readonly string[],
): void {
  const D = baseNames.length;
  const K = state.D / D;
  for (const m of moves) {
    let best = -1;
    let bestUtil = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < K && k < peaks.length; k++)
      for (let d = 0; d < D; d++) {
        const u = state.util(m.from, k * D + d);
        if (u > bestUtil) {
          bestUtil = u;
          best = k * D + d;
        }
      }
    state.apply(m.server, m.to);
    if (best < 0) continue;
    const peak = peaks[Math.floor(best / D)]!;
    const after = state.util(m.from, best);
    m.reason = `${m.reason}; forecast peak ${peak.label}: ${baseNames[best % D]} ${pct(bestUtil)} → ${pct(after)}`;
  }
  state.undo(moves.length);
}
