// Where the recorder keeps each aggregate's load profiles between refreshes, so a restart does not
// read two weeks of history again (src/store implements it; tests may keep it in memory).
import type { ForecastError, ServerProfile } from '../../model/snapshot.js';
import type { ProfileSettings } from './settings.js';

export interface StoredAggregateProfiles {
  aggregate: string;
  refreshedAt: string;
  /** The history window read. */
  from: string;
  to: string;
  /** The reduction they were made with: a change of settings makes them due at once. */
  settings: Pick<ProfileSettings, 'resolution' | 'quantile' | 'timeZone' | 'minSamples' | 'historyDays'>;
  /** By server id: servers of the aggregate that had history. */
  servers: Record<string, ServerProfile>;
  /** The previous refresh's forecasts against what then happened; null on a first refresh. */
  error: ForecastError | null;
}

export interface ProfileStore {
  list(): Promise<StoredAggregateProfiles[]>;
  /** Replaces the aggregate's profiles. */
  put(profiles: StoredAggregateProfiles): Promise<void>;
}

/** A ProfileStore in memory: for one-off records and tests. */
export function memoryProfileStore(): ProfileStore & { rows: Map<string, StoredAggregateProfiles> } {
  const rows = new Map<string, StoredAggregateProfiles>();
  return {
    rows,
    async list() {
      return [...rows.values()].map((r) => structuredClone(r));
    },
    async put(p) {
      rows.set(p.aggregate, structuredClone(p));
    },
  };
}
