// Every request and response shape of the API, declared once: Fastify validates with these, and
// the OpenAPI document is generated from them. Query objects are strict, so an unknown parameter
// is a 400 naming it rather than a silently ignored typo.
import { z } from 'zod';
import { EXECUTION_STATES, MOVE_STATES } from '../executor/journal.js';
import { DATA_HEALTH_VERDICTS } from '../store/data-health.js';
import { LOOP_MODES, MOVE_DECISIONS, PLAN_STATUSES } from '../store/plans.js';

const MAX_LIMIT = 1000;

export const isoTime = z
  .string()
  .max(64)
  .refine((s) => /^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]\d\d:?\d\d)?)?$/.test(s) && !Number.isNaN(Date.parse(s)), {
    error: 'expected an ISO 8601 time, e.g. 2026-11-30T12:00:00Z',
  })
  .meta({ format: 'date-time' });

/** Digits: the store's integer ids and the cursors of id-ordered lists. */
export const numericId = z.string().regex(/^\d{1,15}$/, { error: 'expected a numeric id' });
/** Execution ids (UUIDs), server ids: letters, digits, dot, dash, underscore, colon. */
export const opaqueId = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, { error: 'expected an id of letters, digits, ".", "_", ":" or "-"' });
/** Nova aggregate names: any printable text without "/" (it would be another path). */
const printableNoSlash = (s: string) =>
  [...s].every((c) => {
    const code = c.codePointAt(0) ?? 0;
    return code > 0x1f && code !== 0x7f && c !== '/';
  });
export const aggregateName = z
  .string()
  .min(1, { error: 'expected an aggregate name (1-255 printable characters, no "/")' })
  .max(255, { error: 'expected an aggregate name (1-255 printable characters, no "/")' })
  .refine(printableNoSlash, { error: 'expected an aggregate name (1-255 printable characters, no "/")' });

const LIMIT_ERROR = { error: `expected an integer from 1 to ${MAX_LIMIT}` };
const limit = z
  .string()
  .regex(/^\d{1,4}$/, LIMIT_ERROR)
  .pipe(z.coerce.number<string>().int().min(1, LIMIT_ERROR).max(MAX_LIMIT, LIMIT_ERROR))
  .optional()
  .describe(`rows per page, 1..${MAX_LIMIT} (default 100)`);

export const idPageQuery = {
  limit,
  cursor: numericId.optional().describe('the nextCursor of the previous page'),
};

const commaList = (values: readonly string[]) =>
  z
    .string()
    .max(500)
    .refine((s) => s.split(',').every((v) => values.includes(v)), {
      error: `expected a comma-separated list of ${values.join(', ')}`,
    });

export const errorBody = z
  .object({
    error: z.object({
      status: z.number().int(),
      code: z.string(),
      message: z.string(),
      field: z
        .string()
        .optional()
        .describe('the request field at fault: body.comment, query.limit, params.id'),
      value: z.unknown().optional(),
      requestId: z.string(),
    }),
  })
  .meta({ id: 'Error' });

const page = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

// ---- data health ----
export const dataHealthRecord = z
  .object({
    id: z.string(),
    aggregate: z.string(),
    verdict: z.enum(DATA_HEALTH_VERDICTS),
    reasons: z.array(z.string()),
    at: z.string(),
  })
  .meta({ id: 'DataHealthRecord' });
export const dataHealthQuery = z.strictObject({
  ...idPageQuery,
  aggregate: aggregateName.optional(),
  verdict: z.enum(DATA_HEALTH_VERDICTS).optional(),
  since: isoTime.optional(),
});
export const dataHealthPage = page(dataHealthRecord);

// ---- plans ----
export const planSummary = z
  .object({
    id: z.string(),
    aggregate: z.string(),
    mode: z.enum(LOOP_MODES),
    status: z.enum(PLAN_STATUSES),
    snapshotTakenAt: z.string(),
    createdAt: z.string(),
    statusChangedAt: z.string(),
    expiresAt: z.string().nullable(),
    moveCount: z.number().int(),
  })
  .meta({ id: 'PlanSummary' });
export const moveDecision = z
  .object({
    planId: z.string(),
    step: z.number().int(),
    decision: z.enum(MOVE_DECISIONS),
    decidedBy: z.string(),
    comment: z.string().nullable(),
    decidedAt: z.string(),
  })
  .meta({ id: 'MoveDecision' });
export const storedPlan = planSummary
  .extend({
    plan: z.unknown().describe('the aicerine-plan/1 document (docs/formats.md)'),
    decisions: z.array(moveDecision),
  })
  .meta({ id: 'Plan' });
export const plansQuery = z.strictObject({
  ...idPageQuery,
  aggregate: aggregateName.optional(),
  status: commaList(PLAN_STATUSES).optional().describe('one or more statuses, comma-separated'),
  mode: z.enum(LOOP_MODES).optional(),
  createdFrom: isoTime.optional(),
  createdBefore: isoTime.optional(),
});
export const planParams = z.strictObject({ id: numericId });
export const decisionBody = z
  .strictObject({
    steps: z
      .array(z.number().int().min(0).max(1_000_000))
      .min(1)
      .max(10_000)
      .optional()
      .describe('the moves decided on (by step); absent: the whole plan'),
    comment: z.string().max(2000).optional(),
  })
  .meta({ id: 'Decision' });

// ---- executions ----
export const executionRecord = z
  .object({
    id: z.string(),
    aggregate: z.string(),
    planId: z.string().nullable(),
    state: z.enum(EXECUTION_STATES),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    startedBy: z.string(),
  })
  .meta({ id: 'Execution' });
export const moveRecord = z
  .object({
    executionId: z.string(),
    step: z.number().int(),
    wave: z.number().int(),
    serverId: z.string(),
    serverName: z.string().optional(),
    from: z.string(),
    to: z.string(),
    after: z.array(z.number().int()).optional(),
    estimatedSeconds: z.number(),
    state: z.enum(MOVE_STATES),
    attempt: z.number().int(),
    novaMigrationId: z.number().nullable(),
    issuedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    detail: z.string().nullable(),
  })
  .meta({ id: 'Move' });
export const executionWithMoves = executionRecord
  .extend({ moves: z.array(moveRecord) })
  .meta({ id: 'ExecutionDetail' });
export const executionsQuery = z.strictObject({
  limit,
  cursor: z
    .string()
    .regex(/^\d{1,15}:[A-Za-z0-9._:-]{1,128}$/, { error: 'expected the nextCursor of the previous page' })
    .optional(),
  aggregate: aggregateName.optional(),
  state: z.enum(EXECUTION_STATES).optional(),
  planId: numericId.optional(),
  startedFrom: isoTime.optional(),
});
export const executionParams = z.strictObject({ id: opaqueId });
export const abortResult = z.object({
  outcome: z.enum(['aborting']),
  executionId: z.string(),
});

// ---- quarantine ----
export const quarantineEntry = z
  .object({
    id: z.string(),
    serverId: z.string(),
    aggregate: z.string(),
    reason: z.string(),
    novaFault: z.string().nullable(),
    since: z.string(),
    updatedAt: z.string(),
    attempts: z.number().int(),
    releasedBy: z.string().nullable(),
    releasedAt: z.string().nullable(),
  })
  .meta({ id: 'QuarantineEntry' });
export const quarantineQuery = z.strictObject({
  ...idPageQuery,
  aggregate: aggregateName.optional(),
  serverId: opaqueId.optional(),
  state: z.enum(['active', 'released', 'all']).optional().describe('default active'),
});
export const serverParams = z.strictObject({ serverId: opaqueId });
export const commentBody = z.strictObject({ comment: z.string().max(2000).optional() });

// ---- pauses ----
export const pauseEntry = z.object({ by: z.string(), at: z.string(), reason: z.string().nullable() });
export const pauseView = z
  .object({
    global: z.object({ configured: z.boolean(), runtime: pauseEntry.nullable() }),
    aggregates: z.array(
      z.object({ name: z.string(), configured: z.boolean(), runtime: pauseEntry.nullable() }),
    ),
  })
  .meta({ id: 'Pauses' });
export const pauseBody = z.strictObject({ reason: z.string().max(2000).optional() });
export const aggregateParams = z.strictObject({ name: aggregateName });

// ---- aggregates ----
export const aggregateView = z
  .object({
    name: z.string(),
    mode: z.enum(LOOP_MODES),
    paused: z
      .boolean()
      .describe('paused globally or for this aggregate, in the configuration or at run time'),
    window: z.object({
      open: z.boolean(),
      closesAt: z.string().nullable(),
      nextOpensAt: z.string().nullable(),
    }),
    dataHealth: dataHealthRecord.nullable(),
    latestPlan: planSummary.nullable(),
    owner: z
      .object({ replica: z.string(), fence: z.number().int() })
      .nullable()
      .describe(
        'replicas: the replica that owns the aggregate now and its fence; null when no replica holds it (or one process runs everything)',
      ),
    imbalance: z
      .object({
        overall: z.number(),
        dimensions: z.record(
          z.string(),
          z.object({ stddev: z.number(), max: z.number(), mean: z.number().optional() }),
        ),
        asOf: z.string(),
      })
      .nullable()
      .describe('the imbalance measured at the latest cycle (its history point), not a stored plan figure'),
    lastDecision: z
      .object({ at: z.string(), started: z.number().int(), summary: z.string() })
      .nullable()
      .describe(
        "the loop's latest decision: moves started, or why none did (cooldown, data-health gate, window, budget, ...)",
      ),
    forecast: z
      .object({
        error: z
          .object({
            meanAbsolute: z
              .number()
              .describe('mean absolute difference of forecast and measured host utilization, 0..1'),
            currentLoadAbsolute: z
              .number()
              .optional()
              .describe(
                'the same for current load (each server held at its load when the profiles were made); the forecast is used only when it did better',
              ),
            hours: z.number().int().describe('host-hours compared'),
            from: z.string(),
            to: z.string(),
          })
          .nullable()
          .describe(
            "the previous refresh's forecasts against what then happened; null until a second refresh",
          ),
        refreshedAt: z.string().describe('when the profiles were read (the oldest aggregate refresh)'),
        profiledServers: z.number().int().describe('servers of the aggregate with a load profile'),
        servers: z.number().int(),
      })
      .nullable()
      .describe(
        'load profiles of the latest snapshot (docs/openstack.md, "Load profiles"); null without them',
      ),
  })
  .meta({ id: 'Aggregate' });
export const aggregatesQuery = z.strictObject({
  limit,
  cursor: aggregateName.optional().describe('the nextCursor of the previous page'),
});

// ---- audit ----
export const auditEntry = z
  .object({
    id: z.string(),
    actor: z.string(),
    credential: z.string().nullable(),
    action: z.string(),
    target: z.string(),
    detail: z.unknown(),
    at: z.string(),
  })
  .meta({ id: 'AuditEntry' });
const auditText = z.string().min(1).max(300);
export const auditQuery = z.strictObject({
  ...idPageQuery,
  actor: auditText.optional(),
  action: auditText.optional(),
  target: auditText.optional(),
  from: isoTime.optional(),
  before: isoTime.optional(),
});

// ---- ratio changes ----
export const ratioChange = z
  .object({
    id: z.string(),
    host: z.string(),
    resourceClass: z.string(),
    oldRatio: z.number(),
    newRatio: z.number(),
    reason: z.string(),
    generation: z.number().int(),
    at: z.string(),
    by: z.string(),
  })
  .meta({ id: 'RatioChange' });
export const ratioChangesQuery = z.strictObject({
  ...idPageQuery,
  host: z.string().min(1).max(255).optional(),
  resourceClass: z
    .string()
    .regex(/^[A-Z0-9_]{1,255}$/, { error: 'expected a Placement resource class, e.g. VCPU' })
    .optional(),
  since: isoTime.optional(),
});

// ---- meta ----
export const healthBody = z.object({
  status: z.enum(['ok', 'degraded']),
  store: z.enum(['ok', 'unreachable']),
});
export const versionBody = z.object({ name: z.string(), version: z.string(), api: z.string() });
export const configBody = z.object({ file: z.string().nullable(), summary: z.string() });

export { page };

// ---- hosts of an aggregate (from the latest snapshot) ----
const perDimension = z.record(z.string(), z.number()).describe('per policy dimension (cpu, memory, ...)');
export const hostView = z
  .object({
    name: z.string(),
    availabilityZone: z.string(),
    enabled: z.boolean(),
    up: z.boolean(),
    forcedDown: z.boolean(),
    disabledReason: z.string().nullable(),
    servers: z.number().int(),
    vcpuAllocationRatio: z.number().nullable(),
    utilization: perDimension.describe(
      'load over physical capacity per policy dimension, 0..1 (above 1 when overcommitted)',
    ),
    allocation: z
      .record(z.string(), z.object({ used: z.number(), capacity: z.number() }))
      .describe('Placement usage and capacity ((total - reserved) * allocation ratio) per resource class'),
    forecast: z
      .object({
        cpu: z.number().describe('forecast cpu utilization at the peak hour, 0..1'),
        memory: z.number().describe('forecast memory utilization at the peak hour, 0..1'),
        at: z.string().describe('start of the peak hour, UTC'),
        label: z
          .string()
          .describe('the peak hour on the profiles\' clock, as reasons print it ("Tue 11:00")'),
        fellBack: z
          .number()
          .int()
          .describe('servers on the host without a profile for that hour (current load)'),
      })
      .nullable()
      .describe(
        'the highest forecast hour of the next 24 hours, from the load profiles; null without profiles',
      ),
  })
  .meta({ id: 'Host' });
export const hostsPage = z
  .object({
    items: z.array(hostView),
    nextCursor: z.string().nullable(),
    asOf: z.string().describe('when the snapshot the figures come from was taken'),
    dimensions: z.array(z.string()),
  })
  .meta({ id: 'HostsPage' });
export const hostsQuery = z.strictObject({
  limit,
  cursor: z.string().min(1).max(255).optional().describe('the nextCursor of the previous page (a host name)'),
});

// ---- imbalance history ----
export const historyPoint = z
  .object({
    id: z.string(),
    aggregate: z.string(),
    at: z.string(),
    imbalance: z.number().describe("the planner's objective (weighted standard deviation of utilization)"),
    dimensions: z.record(
      z.string(),
      z.object({ stddev: z.number(), max: z.number(), mean: z.number().optional() }),
    ),
    hosts: z.number().int(),
    planMoves: z.number().int().describe("moves in the cycle's plan"),
    planId: z
      .string()
      .nullable()
      .optional()
      .describe('the plan the cycle stored, or kept because nothing changed (null: none)'),
    unchanged: z
      .boolean()
      .optional()
      .describe(
        'the planning inputs were those of planId (loads within the tolerance): the cycle planned, checked and stored nothing ("unchanged since plan N")',
      ),
  })
  .meta({ id: 'HistoryPoint' });
export const historyQuery = z.strictObject({ ...idPageQuery, since: isoTime.optional() });

// ---- a plan's per-host chart ----
const beforeAfterHost = z.object({
  name: z.string(),
  before: perDimension,
  after: perDimension,
  serversBefore: z.number().int(),
  serversAfter: z.number().int(),
});
const balance = z.object({
  imbalance: z.number(),
  dimensions: z.record(
    z.string(),
    z.object({ stddev: z.number(), max: z.number(), mean: z.number().optional() }),
  ),
});
export const planHosts = z
  .object({
    planId: z.string(),
    aggregate: z.string(),
    asOf: z.string().describe('the snapshot whose loads the figures use (the latest)'),
    dimensions: z.array(z.string()),
    hosts: z.array(beforeAfterHost),
    skippedSteps: z
      .array(z.number().int())
      .describe('moves whose server is on neither end in that snapshot, left out of the figures'),
  })
  .meta({ id: 'PlanHosts' });

// ---- snapshots ----
export const snapshotRecord = z
  .object({
    id: z.string(),
    takenAt: z.string(),
    aggregate: z.string().nullable(),
    sizeBytes: z.number().int().nullable(),
    recordedAt: z.string(),
  })
  .meta({ id: 'Snapshot' });
export const snapshotsQuery = z.strictObject({ ...idPageQuery });
export const snapshotParams = z.strictObject({ id: numericId });
export const snapshotBody = z.strictObject({
  comment: z.string().max(2000).optional().describe('why, for the audit log'),
});

// ---- shadow reports ----
export const shadowReportsQuery = z.strictObject({
  ...idPageQuery,
  aggregate: aggregateName.optional(),
  since: isoTime.optional(),
});
export const shadowReportEntry = z
  .object({
    id: z.string(),
    aggregate: z.string(),
    at: z.string(),
    report: z
      .unknown()
      .describe('what Aicerine would have done in observe mode over the period (docs/control-loop.md)'),
  })
  .meta({ id: 'ShadowReport' });

// ---- what-if ----
const hostName = z
  .string()
  .min(1)
  .max(255)
  .refine(printableNoSlash, { error: 'expected a host name (printable characters, no "/")' });
export const whatIfBody = z
  .strictObject({
    aggregate: aggregateName,
    drainHosts: z.array(hostName).max(1000).optional().describe('hosts to empty (planned as disabled)'),
    addHosts: z
      .strictObject({
        like: hostName.describe('an existing host of the aggregate to copy (inventory, zone)'),
        count: z.number().int().min(1).max(1000),
      })
      .optional()
      .describe('empty hosts to add, each a copy of `like`'),
    policy: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("policy keys (docs/policy.md) over the aggregate's policy"),
  })
  .meta({ id: 'WhatIf' });
export const whatIfResult = z
  .object({
    aggregate: z.string(),
    asOf: z.string(),
    changes: z.object({ drained: z.array(z.string()), added: z.array(z.string()) }),
    plan: z
      .unknown()
      .describe('the aicerine-plan/1 document (docs/formats.md); never stored, never executed'),
    before: balance,
    after: balance,
    dimensions: z.array(z.string()),
    hosts: z.array(beforeAfterHost),
  })
  .meta({ id: 'WhatIfResult' });

// ---- auth ----
export const loginBody = z
  .strictObject({
    username: z.string().min(1).max(255),
    password: z.string().min(1).max(4096),
    project: z.string().min(1).max(255),
    userDomain: z.string().min(1).max(255).optional().describe('default "Default"'),
    projectDomain: z.string().min(1).max(255).optional().describe('default "Default"'),
  })
  .meta({ id: 'Login' });
export const whoami = z
  .object({
    authenticated: z.boolean().describe('false in the no-auth loopback mode'),
    mode: z.enum(['keystone', 'no-auth']),
    user: z.string(),
    userId: z.string(),
    project: z.string().nullable(),
    roles: z.array(z.string()),
    actions: z.array(z.string()).describe('the API actions these roles may take (docs/api.md)'),
    readRoles: z
      .array(z.string())
      .describe(
        'the roles that read the cloud (the read action); system:ROLE is ROLE in a system-scoped token',
      ),
    expiresAt: z.string(),
  })
  .meta({ id: 'WhoAmI' });
export const loginResult = whoami
  .extend({ token: z.string().describe('send as X-Auth-Token') })
  .meta({ id: 'LoginResult' });

export const replicaView = z
  .object({
    id: z.string(),
    address: z.string().nullable().describe('its API address, as it registered it'),
    since: z.string().describe('when it registered'),
    lastHeartbeat: z.string().nullable().describe('when it last renewed its registration lease'),
    aggregates: z.array(z.object({ aggregate: z.string(), fence: z.number().int() })),
    self: z.boolean().describe('the replica answering this request'),
  })
  .meta({ id: 'Replica' });

export const replicasBody = z.object({
  coordination: z
    .enum(['local', 'etcd'])
    .describe('local: one process owns every aggregate (no replicas to list)'),
  replicas: z.array(replicaView),
});
