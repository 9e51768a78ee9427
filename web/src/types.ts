// The API's shapes as the dashboard reads them: inferred from the zod schemas the service
// validates and serializes with (src/api/schemas.ts), so a change there fails this typecheck.
import type { z } from 'zod';
import type {
  aggregateView,
  dataHealthRecord,
  executionRecord,
  executionWithMoves,
  moveDecision,
  moveRecord,
  pauseView,
  planSummary,
  quarantineEntry,
  ratioChange,
  storedPlan,
} from '../../src/api/schemas.js';
import type { ShadowReport } from '../../src/loop/shadow.js';
import type { Move, Plan } from '../../src/model/plan.js';

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
export type { Plan, ShadowReport };

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

type PerDimension = Record<string, number>;
interface Balance {
  imbalance: number;
  dimensions: Record<string, { stddev: number; max: number; mean?: number }>;
}
export interface HostView {
  name: string;
  availabilityZone: string;
  enabled: boolean;
  up: boolean;
  forcedDown: boolean;
  disabledReason: string | null;
  servers: number;
  vcpuAllocationRatio: number | null;
  utilization: PerDimension;
  allocation: Record<string, { used: number; capacity: number }>;
}
export interface HostsPage extends Page<HostView> {
  asOf: string;
  dimensions: string[];
}
export interface HistoryPoint {
  id: string;
  aggregate: string;
  at: string;
  imbalance: number;
  dimensions: Balance['dimensions'];
  hosts: number;
  planMoves: number;
}
export interface BeforeAfterHost {
  name: string;
  before: PerDimension;
  after: PerDimension;
  serversBefore: number;
  serversAfter: number;
}
export interface PlanHosts {
  planId: string;
  aggregate: string;
  asOf: string;
  dimensions: string[];
  hosts: BeforeAfterHost[];
  skippedSteps: number[];
}
export interface ShadowReportEntry {
  id: string;
  aggregate: string;
  at: string;
  report: unknown;
}
export interface WhatIfBody {
  aggregate: string;
  drainHosts?: string[];
  addHosts?: { like: string; count: number };
  policy?: Record<string, unknown>;
}
export interface WhatIfResult {
  aggregate: string;
  asOf: string;
  changes: { drained: string[]; added: string[] };
  plan: unknown;
  before: Balance;
  after: Balance;
  dimensions: string[];
  hosts: BeforeAfterHost[];
}
export interface WhoAmI {
  authenticated: boolean;
  mode: 'keystone' | 'no-auth';
  user: string;
  userId: string;
  project: string | null;
  roles: string[];
  actions: string[];
  expiresAt: string;
}
export interface LoginBody {
  username: string;
  password: string;
  project: string;
  userDomain?: string;
  projectDomain?: string;
}
export type LoginResult = WhoAmI & { token: string };
