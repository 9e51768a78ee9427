// The store's tables as Kysely sees them. Every time is an integer count of milliseconds since the
// Unix epoch (UTC): one representation that sorts and compares the same way on SQLite and MariaDB,
// with no DATETIME precision or time-zone setting in between. Repositories speak ISO-8601 strings.
// JSON documents are text columns, parsed and validated by the repository that owns them.

import type { Generated } from 'kysely';

/** An auto-increment key: absent on insert, a number when read. */
type AutoId = Generated<number>;

export interface ExecutionsTable {
  id: string;
  aggregate: string;
  plan_id: string | null;
  state: string;
  started_at: number;
  ended_at: number | null;
  started_by: string;
}

export interface ExecutionMovesTable {
  execution_id: string;
  step: number;
  wave: number;
  server_id: string;
  server_name: string | null;
  from_host: string;
  to_host: string;
  /** JSON array of steps, or null when the move waits for nothing. */
  after_steps: string | null;
  estimated_seconds: number;
  state: string;
  attempt: number;
  nova_migration_id: number | null;
  issued_at: number | null;
  ended_at: number | null;
  detail: string | null;
  /** The owner's fence that wrote the move's current state (replicas); null on a single process. */
  fence: number | null;
}

export interface PlansTable {
  id: AutoId;
  aggregate: string;
  /** The control-loop mode the plan was made under (observe, assisted, active). */
  mode: string;
  status: string;
  snapshot_taken_at: number;
  created_at: number;
  status_changed_at: number;
  /** When an open (proposed or approved) plan stops being executable; null: never. */
  expires_at: number | null;
  move_count: number;
  plan_json: string;
}

export interface PlanDecisionsTable {
  plan_id: number;
  step: number;
  decision: string;
  decided_by: string;
  comment: string | null;
  decided_at: number;
}

export interface ServerCooldownsTable {
  server_id: string;
  aggregate: string;
  last_moved_at: number;
  from_host: string;
  to_host: string;
}

export interface AggregateCooldownsTable {
  aggregate: string;
  last_moved_at: number;
  server_id: string;
}

export interface QuarantineTable {
  id: AutoId;
  server_id: string;
  /** Equals server_id while the entry is unreleased, null after: a unique index on it allows one
   * unreleased entry per server on both backends (NULLs never collide), history kept. */
  active_server_id: string | null;
  aggregate: string;
  reason: string;
  nova_fault: string | null;
  since: number;
  updated_at: number;
  attempts: number;
  released_by: string | null;
  released_at: number | null;
}

export interface CostSamplesTable {
  id: AutoId;
  aggregate: string;
  server_id: string;
  ram_mb: number;
  dirty_rate_mbps: number | null;
  duration_seconds: number;
  outcome: string;
  source: string;
  /** Identifies the sample at its source (a Nova migration id) so re-imports add nothing. */
  source_key: string | null;
  at: number;
}

export interface RatioChangesTable {
  id: AutoId;
  host: string;
  resource_class: string;
  old_ratio: number;
  new_ratio: number;
  reason: string;
  generation: number;
  at: number;
  changed_by: string;
}

export interface RatioIntentsTable {
  id: AutoId;
  change_id: string;
  host: string;
  rp_uuid: string;
  aggregate: string;
  from_ratio: number;
  to_ratio: number;
  reason: string;
  state: string;
  at: number;
  detail: string | null;
}

export interface RatioPinsTable {
  host: string;
  rp_uuid: string;
  expected: number;
  found: number;
  at: number;
  reason: string;
}

export interface DataHealthTable {
  id: AutoId;
  aggregate: string;
  verdict: string;
  /** JSON array of strings. */
  reasons: string;
  at: number;
}

export interface SnapshotsTable {
  id: AutoId;
  taken_at: number;
  aggregate: string | null;
  path: string | null;
  size_bytes: number | null;
  recorded_at: number;
}

export interface AuditLogTable {
  id: AutoId;
  actor: string;
  credential: string | null;
  action: string;
  target: string;
  /** JSON document. */
  detail: string;
  at: number;
}

export interface ServicePausesTable {
  /** '' for the global pause, else the aggregate's name. */
  scope: string;
  paused_by: string;
  at: number;
  reason: string | null;
}

export interface AbortRequestsTable {
  execution_id: string;
  requested_by: string;
  at: number;
}

export interface AggregateHistoryTable {
  id: AutoId;
  aggregate: string;
  at: number;
  /** The planner's objective for the aggregate at that cycle. */
  imbalance: number;
  /** JSON: per dimension { stddev, max, mean? }. */
  dimensions: string;
  hosts: number;
  plan_moves: number;
  /** The plan the cycle stored or kept (null: none, or a point from before migration 0008). */
  plan_id: string | null;
  /** 1 when the cycle found the inputs unchanged since that plan and stored nothing. */
  unchanged: Generated<number>;
}

export interface TasksTable {
  id: AutoId;
  kind: string;
  /** JSON object. */
  args: string;
  requested_by: string;
  requested_at: number;
  batch: string;
  /** 0 or 1. */
  after_batch: number;
  state: string;
  progress_done: number;
  progress_total: number | null;
  progress_detail: string;
  /** JSON document. */
  result: string | null;
  error: string | null;
  waiting_reason: string | null;
  /** JSON array of host names. */
  hosts: string;
  /** JSON document. */
  checkpoint: string | null;
  owner: string | null;
  /** 0 or 1. */
  cancel_requested: number;
  attempts: number;
  version: number;
  started_at: number | null;
  heartbeat_at: number | null;
  updated_at: number;
  ended_at: number | null;
}

/** The newest owner of each aggregate that wrote to the store (replicas, src/store/ownership.ts). */
export interface AggregateOwnersTable {
  aggregate: string;
  fence: number;
  owner: string;
  claimed_at: number;
}

/** Rolling-maintenance campaigns (docs/maintenance.md, src/store/maintenance.ts). */
export interface MaintenanceCampaignsTable {
  id: AutoId;
  aggregate: string;
  state: string;
  requested_by: string;
  requested_at: number;
  /** JSON CampaignSettings. */
  settings: string;
  /** JSON HostProgress[]. */
  hosts: string;
  note: string | null;
  task_id: string | null;
  /** 0 or 1. */
  abort_requested: number;
  version: number;
  updated_at: number;
  ended_at: number | null;
}

/** One row per aggregate: its load profiles as a JSON document (src/store/load-profiles.ts). */
export interface LoadProfilesTable {
  aggregate: string;
  refreshed_at: number;
  document: string;
}

export interface Database {
  executions: ExecutionsTable;
  execution_moves: ExecutionMovesTable;
  plans: PlansTable;
  plan_decisions: PlanDecisionsTable;
  server_cooldowns: ServerCooldownsTable;
  aggregate_cooldowns: AggregateCooldownsTable;
  quarantine: QuarantineTable;
  cost_samples: CostSamplesTable;
  ratio_changes: RatioChangesTable;
  ratio_intents: RatioIntentsTable;
  ratio_pins: RatioPinsTable;
  data_health: DataHealthTable;
  snapshots: SnapshotsTable;
  audit_log: AuditLogTable;
  service_pauses: ServicePausesTable;
  abort_requests: AbortRequestsTable;
  aggregate_history: AggregateHistoryTable;
  tasks: TasksTable;
  aggregate_owners: AggregateOwnersTable;
  maintenance_campaigns: MaintenanceCampaignsTable;
  load_profiles: LoadProfilesTable;
}
