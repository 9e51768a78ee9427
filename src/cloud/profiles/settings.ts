// How load profiles are recorded (config: prometheus.profiles; docs/openstack.md, "Load profiles").
import type { ProfileResolution } from '../../model/snapshot.js';

export interface ProfileSettings {
  /** Days of history read at each refresh, 7..28. */
  historyDays: number;
  /** How often an aggregate's profiles are read again. */
  refreshMs: number;
  resolution: ProfileResolution;
  quantile: number;
  timeZone: string;
  minSamples: number;
}

/** Hourly points: the resolution of a profile slot. */
export const PROFILE_STEP_SECONDS = 3600;

export const DEFAULT_PROFILE_SETTINGS: ProfileSettings = {
  historyDays: 14,
  refreshMs: 86_400_000,
  resolution: 'hour-of-week',
  quantile: 0.9,
  timeZone: 'UTC',
  // Two weeks give two samples per hour-of-week slot: both must be there.
  minSamples: 2,
};
