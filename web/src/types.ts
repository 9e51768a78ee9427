// The API's shapes as the dashboard reads them: inferred from the zod schemas the service
// validates and serializes with (src/api/schemas.ts), so a change there fails this typecheck.
import type { z } from 'zod';
import type { campaignView } from '../../src/api/routes/maintenance.js';
import type {
  taskCreateBody,
  taskCreated,
  taskKinds,
  taskPage,
  taskView,
} from '../../src/api/routes/tasks.js';
import type {
  aggregateView,
  dataHealthRecord,
  executionRecord,
  executionWithMoves,
  historyPoint,
  hostsPage,
  hostView,
  loginBody,
  loginResult,
  moveDecision,
  moveRecord,
  pauseView,
  planHosts,
  planSummary,
  quarantineEntry,
  ratioChange,
  shadowReportEntry,
  storedPlan,
  whatIfBody,
  whatIfResult,
  whoami,
} from '../../src/api/schemas.js';
import type { ShadowReport } from '../../src/loop/shadow.js';
import type { Move, Plan } from '../../src/model/plan.js';
import type { EvacuateResult } from '../../src/tasks/kinds/evacuate-compute.js';
import type { PurgeItem, PurgeResult } from '../../src/tasks/kinds/purge-project.js';
import type { BatchCleanupResult } from '../../src/validation/cleanup.js';
import type { HostValidationResult } from '../../src/validation/validate-host.js';

export type Aggregate = z.infer<typeof aggregateView>;
export type DataHealth = z.infer<typeof dataHealthRecord>;
export type PlanSummary = z.infer<typeof planSummary>;
export type StoredPlan = Omit<z.infer<typeof storedPlan>, 'plan'> & { plan: Plan };
export type MoveDecision = z.infer<typeof moveDecision>;
export type Execution = z.infer<typeof executionRecord>;
export type ExecutionDetail = z.infer<typeof executionWithMoves>;
export type ExecutionMove = z.infer<typeof moveRecord>;
export type Pauses = z.infer<typeof pauseView>;
export type QuarantineEntry = z.infer<typeof quarantineEntry>;
export type RatioChange = z.infer<typeof ratioChange>;
export type PlanMove = Move;
/** One aggregate's part of a plan: its moves, balance, and (pack) the hosts it frees or leaves partly drained. */
export type PlanAggregate = Plan['aggregates'][number];
export type { Plan, ShadowReport };

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type HostView = z.infer<typeof hostView>;
export type HostsPage = z.infer<typeof hostsPage>;
export type HistoryPoint = z.infer<typeof historyPoint>;
export type PlanHosts = z.infer<typeof planHosts>;
export type BeforeAfterHost = PlanHosts['hosts'][number];
export type ShadowReportEntry = z.infer<typeof shadowReportEntry>;
export type WhatIfBody = z.input<typeof whatIfBody>;
export type WhatIfResult = z.infer<typeof whatIfResult>;
export type WhoAmI = z.infer<typeof whoami>;
export type Campaign = z.infer<typeof campaignView>;
export type CampaignHost = Campaign['hosts'][number];
export type LoginBody = z.input<typeof loginBody>;
export type LoginResult = z.infer<typeof loginResult>;
export type Task = z.infer<typeof taskView>;
export type TaskPage = z.infer<typeof taskPage>;
export type TaskWorker = TaskPage['worker'];
export type TaskKinds = z.infer<typeof taskKinds>;
export type TaskCreateBody = z.input<typeof taskCreateBody>;
export type TaskCreated = z.infer<typeof taskCreated>;
export type { BatchCleanupResult, EvacuateResult, HostValidationResult, PurgeItem, PurgeResult };
