// Pre-copy live-migration time model. Pure: used by the planner to predict, by the simulator
// to decide how long a migration runs, and by the learner that fits coefficients from history.
import type { CostModelPolicy } from '../policy/types.js';

export interface MigrationSubject {
  ramMB: number;
  /** Page dirty rate, MiB/s; undefined: the policy default. */
  dirtyRateMBps?: number | undefined;
}

/**
 * Seconds a live migration takes. Pre-copy sends all RAM, then repeatedly the pages dirtied
 * during the previous round; each round is shorter by the factor dirty/bandwidth. When the
 * dirty rate is at or above the bandwidth it never converges and we charge the iteration cap.
 */
export function estimateMigrationSeconds(subject: MigrationSubject, model: CostModelPolicy): number {
  const dirty = subject.dirtyRateMBps ?? model.defaultDirtyRateMBps;
  if (model.learned) {
    const { intercept, secondsPerGiB, secondsPerGiBPerDirtyMBps } = model.learned;
    const s = intercept + (subject.ramMB / 1024) * (secondsPerGiB + (secondsPerGiBPerDirtyMBps ?? 0) * dirty);
    return roundSeconds(Math.max(model.overheadSeconds, s));
  }
  const bw = model.bandwidthMBps;
  let remaining = subject.ramMB;
  let seconds = 0;
  for (let i = 0; i < model.maxIterations; i++) {
    const round = remaining / bw;
    seconds += round;
    remaining = Math.min(subject.ramMB, dirty * round);
    if (remaining <= model.stopCopyThresholdMB) break;
  }
  seconds += remaining / bw;
  return roundSeconds(seconds + model.overheadSeconds);
}

function roundSeconds(s: number): number {
  return Math.round(s * 10) / 10;
}
