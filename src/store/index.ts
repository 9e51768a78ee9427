// The store's public surface.

export type { AuditEntry, AuditFilter, AuditLogRepository, NewAuditEntry } from './audit.js';
export { STORE_BACKENDS, type StoreBackend } from './backend.js';
export {
  type MysqlStoreOptions,
  SQLITE_SYNCHRONOUS,
  type SqliteStoreOptions,
  type SqliteSynchronous,
  type StoreOptions,
} from './connect.js';
export type {
  AggregateCooldown,
  CooldownRepository,
  ServerCooldown,
  ServerCooldownFilter,
} from './cooldowns.js';
export {
  COST_SAMPLE_OUTCOMES,
  COST_SAMPLE_SOURCES,
  type CostSample,
  type CostSampleFilter,
  type CostSampleOutcome,
  type CostSampleRepository,
  type CostSampleSource,
  type NewCostSample,
} from './cost-samples.js';
export {
  DATA_HEALTH_VERDICTS,
  type DataHealthFilter,
  type DataHealthRecord,
  type DataHealthRepository,
  type DataHealthVerdict,
  type NewDataHealthRecord,
} from './data-health.js';
export { StoreError } from './errors.js';
export type { ExecutionFilter, ExecutionRepository } from './executions.js';
export type { FenceOf, SqlJournal } from './journal.js';
export type { JsonValue } from './json.js';
export type { SqlCampaignTable } from './maintenance.js';
export { MIGRATION_TABLE, storeMigrations } from './migrations.js';
export {
  type AggregateOwnerRecord,
  FencedOutError,
  type OwnerFence,
  type OwnershipRepository,
} from './ownership.js';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type Page, type PageRequest } from './paging.js';
export {
  type DecisionInput,
  LOOP_MODES,
  type LoopMode,
  MOVE_DECISIONS,
  type MoveDecision,
  type MoveDecisionKind,
  type NewPlan,
  OPEN_PLAN_STATUSES,
  PLAN_STATUSES,
  type PlanFilter,
  type PlanRepository,
  type PlanStatus,
  type PlanSummary,
  type StoredPlan,
} from './plans.js';
export type {
  QuarantineEntry,
  QuarantineFilter,
  QuarantineInput,
  QuarantineRepository,
} from './quarantine.js';
export type {
  NewRatioChange,
  RatioChange,
  RatioChangeFilter,
  RatioChangeRepository,
} from './ratio-changes.js';
export type { SqlRatioChangeSink } from './ratio-sink.js';
export {
  type PurgeCounts,
  RETAINED_RECORDS,
  type RetainedRecord,
  type RetentionPolicy,
  type RetentionRepository,
} from './retention.js';
export type {
  DimensionStats,
  HistoryPoint,
  HistoryRepository,
  NewHistoryPoint,
  PauseRepository,
  StoredPause,
} from './service-state.js';
export type { NewSnapshotRecord, SnapshotRecord, SnapshotRepository } from './snapshots.js';
export { openStore, type Store } from './store.js';
export type { SqlTaskTable } from './tasks.js';
