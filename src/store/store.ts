// The store: one object that the service opens once and passes around. It is the executor's
// journal and carries one repository per kind of record. The ports it implements (the journal,
// the task table, the campaign records, prevention's sink) are declared beside the domains that
// use them; the store implements them by shape, never importing those domains, and the service
// hands each domain its part (src/service).

import type { ProfileStore } from '../cloud/profiles/port.js';
import { type AuditLogRepository, createAuditLogRepository } from './audit.js';
import type { StoreBackend } from './backend.js';
import { connect, type StoreOptions } from './connect.js';
import { type CooldownRepository, createCooldownRepository } from './cooldowns.js';
import { type CostSampleRepository, createCostSampleRepository } from './cost-samples.js';
import { createDataHealthRepository, type DataHealthRepository } from './data-health.js';
import { createExecutionRepository, type ExecutionRepository } from './executions.js';
import { createJournal, type FenceOf, type SqlJournal } from './journal.js';
import { createProfileStore } from './load-profiles.js';
import { createCampaignRepository, type SqlCampaignTable } from './maintenance.js';
import { migrateToLatest } from './migrations.js';
import { createOwnershipRepository, type OwnershipRepository } from './ownership.js';
import { createPlanRepository, type PlanRepository } from './plans.js';
import { createQuarantineRepository, type QuarantineRepository } from './quarantine.js';
import { createRatioChangeRepository, type RatioChangeRepository } from './ratio-changes.js';
import { createRatioChangeSink, type SqlRatioChangeSink } from './ratio-sink.js';
import { createRetention, type RetentionRepository } from './retention.js';
import {
  type AbortRequestRepository,
  createAbortRequestRepository,
  createHistoryRepository,
  createPauseRepository,
  type HistoryRepository,
  type PauseRepository,
} from './service-state.js';
import { createSnapshotRepository, type SnapshotRepository } from './snapshots.js';
import { createTaskRepository, type SqlTaskTable } from './tasks.js';

export interface Store extends SqlJournal {
  readonly backend: StoreBackend;
  readonly executions: ExecutionRepository;
  readonly plans: PlanRepository;
  readonly cooldowns: CooldownRepository;
  readonly quarantine: QuarantineRepository;
  readonly costSamples: CostSampleRepository;
  readonly ratioChanges: RatioChangeRepository;
  /** Prevention's intents, outcomes and pinned hosts. */
  readonly ratioSink: SqlRatioChangeSink;
  readonly dataHealth: DataHealthRepository;
  readonly snapshots: SnapshotRepository;
  readonly audit: AuditLogRepository;
  /** Run-time pauses made by operators (durable: they survive a restart). */
  readonly pauses: PauseRepository;
  /** Replicas: aborts asked of one replica for executions another runs. */
  readonly abortRequests: AbortRequestRepository;
  /** Each cycle's imbalance per aggregate and dimension. */
  readonly history: HistoryRepository;
  readonly retention: RetentionRepository;
  /** Replicas: the newest owner's fence per aggregate. */
  readonly ownership: OwnershipRepository;
  /**
   * The journal as one replica among several writes it: every write checks, in its transaction,
   * that the fence `fenceOf` gives for the execution's aggregate is not older than the recorded one.
   */
  fencedJournal(fenceOf: FenceOf): SqlJournal;
  /** Operator tasks (docs/tasks.md). */
  readonly tasks: SqlTaskTable;
  /** Rolling-maintenance campaigns (docs/maintenance.md). */
  readonly maintenance: SqlCampaignTable;
  /** Each aggregate's load profiles between daily refreshes (src/cloud/profiles). */
  readonly profiles: ProfileStore;
  /** Closes the database (the pool on MariaDB); the store is unusable after. */
  close(): Promise<void>;
}

/** Opens (creating if needed) the store and migrates its schema to the latest version. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const ctx = connect(options);
  try {
    await migrateToLatest(ctx.db, ctx.backend);
  } catch (err) {
    await ctx.db.destroy();
    throw err;
  }
  return {
    backend: ctx.backend,
    ...createJournal(ctx),
    executions: createExecutionRepository(ctx),
    plans: createPlanRepository(ctx),
    cooldowns: createCooldownRepository(ctx),
    quarantine: createQuarantineRepository(ctx),
    costSamples: createCostSampleRepository(ctx),
    ratioChanges: createRatioChangeRepository(ctx),
    ratioSink: createRatioChangeSink(ctx),
    dataHealth: createDataHealthRepository(ctx),
    snapshots: createSnapshotRepository(ctx),
    audit: createAuditLogRepository(ctx),
    pauses: createPauseRepository(ctx),
    abortRequests: createAbortRequestRepository(ctx),
    history: createHistoryRepository(ctx),
    retention: createRetention(ctx),
    ownership: createOwnershipRepository(ctx),
    fencedJournal: (fenceOf) => createJournal(ctx, fenceOf),
    tasks: createTaskRepository(ctx),
    maintenance: createCampaignRepository(ctx),
    profiles: createProfileStore(ctx),
    close: () => ctx.db.destroy(),
  };
}
