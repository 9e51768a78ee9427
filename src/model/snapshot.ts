// The snapshot document of ../shared/spec/formats.md ("aicerine-snapshot/1"), as types.
// These mirror the JSON exactly; the planner builds its own indexed state from them.

export const SNAPSHOT_FORMAT = 'aicerine-snapshot/1' as const;

export const RESOURCE_CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB'] as const;
export type ResourceClass = (typeof RESOURCE_CLASSES)[number];

export const SERVER_GROUP_POLICIES = [
  'affinity',
  'anti-affinity',
  'soft-affinity',
  'soft-anti-affinity',
] as const;
export type ServerGroupPolicy = (typeof SERVER_GROUP_POLICIES)[number];

export interface Inventory {
  total: number;
  reserved: number;
  allocationRatio: number;
}

export interface ServiceState {
  state: 'up' | 'down';
  status: 'enabled' | 'disabled';
  forcedDown: boolean;
  disabledReason?: string | null;
}

/** Measured load. cpu: busy physical cores; memoryMB: MiB in use; more dimensions may be added by policy. */
export type Load = { cpu?: number; memoryMB?: number } & Record<string, number | undefined>;

export interface Host {
  name: string;
  availabilityZone: string;
  aggregates: string[];
  service: ServiceState;
  inventory: Partial<Record<ResourceClass, Inventory>> & Record<string, Inventory | undefined>;
  usage: Partial<Record<ResourceClass, number>> & Record<string, number | undefined>;
  load?: Load;
  /** Optional: per-host limit of concurrent outgoing live migrations (nova.conf max_concurrent_live_migrations). */
  maxConcurrentLiveMigrations?: number;
}

export interface Flavor {
  name: string;
  vcpus: number;
  ramMB: number;
  diskGB: number;
  extraSpecs?: Record<string, string>;
}

export interface Server {
  id: string;
  name: string;
  projectId: string;
  host: string;
  status: string;
  taskState: string | null;
  flavor: Flavor;
  sharedStorage: boolean;
  sriov?: boolean;
  metadata?: Record<string, string>;
  load?: Load;
  /** Optional: page dirty rate in MiB/s, for the migration cost model. */
  dirtyRateMBps?: number;
}

export interface ServerGroup {
  id: string;
  name: string;
  policy: ServerGroupPolicy;
  rules?: { max_server_per_host?: number };
  members: string[];
  projectId?: string;
}

export interface MigrationRecord {
  serverId: string;
  source: string;
  dest: string;
  status: string;
  ramMB: number;
  startedAt: string;
  finishedAt: string;
}

export interface Snapshot {
  format: typeof SNAPSHOT_FORMAT;
  takenAt: string;
  source: string;
  hosts: Host[];
  servers: Server[];
  serverGroups: ServerGroup[];
  migrationHistory?: MigrationRecord[];
  /** Optional extension: per-server load history reduced to a weekly shape (issue 28). */
  profiles?: LoadProfiles;
}

export const PROFILES_FORMAT = 'aicerine-profiles/1' as const;
export const PROFILE_RESOLUTIONS = ['hour-of-week', 'hour-of-day'] as const;
export type ProfileResolution = (typeof PROFILE_RESOLUTIONS)[number];

/**
 * Load history reduced to one figure per slot of a typical week, so a plan can be judged at the
 * hours that will matter (tomorrow's peak) rather than the hour it is made in.
 * Slots are counted in `timeZone` (IANA name): with `hour-of-week`, 168 slots, slot = day * 24 +
 * hour with day 0 = Monday; with `hour-of-day`, 48 slots, 0..23 weekdays and 24..47 weekends.
 */
export interface LoadProfiles {
  format: typeof PROFILES_FORMAT;
  resolution: ProfileResolution;
  /** The quantile each slot holds (0.9 = p90 of the samples that fell in that slot). */
  quantile: number;
  timeZone: string;
  /** The history window the profiles were reduced from, and when. */
  from: string;
  to: string;
  refreshedAt: string;
  /** A slot with fewer samples than this is unknown (null) and falls back to current load. */
  minSamples: number;
  /** By server id. A server absent here has no usable history. */
  servers: Record<string, ServerProfile>;
  /**
   * By aggregate: how far the profiles' forecasts were from what then happened, measured on the
   * samples that arrived after an earlier refresh. The planner plans on current load where this
   * is above the policy's limit.
   */
  errors?: Record<string, ForecastError>;
}

export interface ForecastError {
  /** Mean absolute difference between forecast and measured host utilization (0..1), over hosts and hours. */
  meanAbsolute: number;
  /**
   * The same figure for current load: each server's load when the profiles were made, held for
   * every hour compared. Absent in profiles recorded before it was kept.
   */
  currentLoadAbsolute?: number;
  /** Host-hours compared. */
  hours: number;
  from: string;
  to: string;
}

export interface ServerProfile {
  /** Busy physical cores at the quantile, per slot; null where the slot has too few samples. */
  cpu?: (number | null)[];
  /** MiB in use at the quantile, per slot; null where the slot has too few samples. */
  memoryMB?: (number | null)[];
  /** Samples that fell in each slot. */
  samples: number[];
}

export const profileSlotCount = (resolution: ProfileResolution): number =>
  resolution === 'hour-of-week' ? 168 : 48;
