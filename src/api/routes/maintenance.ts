// Rolling maintenance (docs/maintenance.md): start a campaign (checked against the cloud first:
// 400, 404, 409 and nothing created on refusal), list and show campaigns with each host's
// progress and timings, pause, resume, abort, and say a handed-over host is back.
import { z } from 'zod';
import type { MaintenanceService } from '../../maintenance/service.js';
import { CAMPAIGN_STATES, type Campaign, HOST_STATES, RETURN_WHEN } from '../../maintenance/types.js';
import { TASK_STATES } from '../../tasks/types.js';
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { errorBody, idPageQuery, numericId } from '../schemas.js';
import { answerTaskRefusal } from './task-refusal.js';

const hostName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, { error: 'expected a compute host name' });

const hostView = z
  .object({
    host: z.string(),
    state: z.enum(HOST_STATES),
    note: z.string().nullable().describe('why it waits, was refused or failed'),
    evacuateTask: z.string().nullable(),
    validateTask: z.string().nullable(),
    startedAt: z.string().nullable().describe('taken out (disabled)'),
    drainedAt: z.string().nullable().describe('empty'),
    handedOverAt: z.string().nullable().describe('ready for maintenance'),
    returnedAt: z.string().nullable().describe('back from maintenance'),
    endedAt: z.string().nullable().describe('re-admitted, or failed'),
    sawDownAt: z.string().nullable(),
    returnedBy: z.string().nullable(),
    moved: z.object({ live: z.number().int(), cold: z.number().int() }),
    cannotMove: z.array(z.object({ server: z.string(), name: z.string(), why: z.string() })),
    handover: z.object({ webhook: z.string().nullable(), command: z.string().nullable() }),
  })
  .meta({ id: 'MaintenanceHost' });

export const campaignView = z
  .object({
    id: z.string(),
    aggregate: z.string(),
    state: z.enum(CAMPAIGN_STATES),
    requestedBy: z.string(),
    requestedAt: z.string(),
    settings: z.object({
      parallel: z.number().int(),
      validate: z.boolean(),
      returnWhen: z.enum(RETURN_WHEN),
      webhook: z.string().nullable(),
      command: z.array(z.string()).nullable(),
    }),
    hosts: z.array(hostView),
    note: z.string().nullable().describe('why no further host starts now, or the last transient error'),
    taskId: z.string().nullable().describe('the maintain-aggregate task driving it'),
    driver: z
      .object({
        state: z.enum(TASK_STATES),
        waitingReason: z.string().nullable(),
        error: z.string().nullable(),
      })
      .nullable()
      .describe(
        "the driver task's state (an unfinished campaign whose driver ended needs `resume`); null when it is gone",
      ),
    abortRequested: z.boolean(),
    updatedAt: z.string(),
    endedAt: z.string().nullable(),
  })
  .meta({ id: 'MaintenanceCampaign' });

const startBody = z.strictObject({
  aggregate: z.string().min(1).max(255).describe('the Nova aggregate'),
  hosts: z
    .array(hostName)
    .min(1)
    .max(1000)
    .optional()
    .describe('the hosts, in this order (default: every host of the aggregate, by name)'),
  parallel: z.number().int().min(1).max(1000).optional().describe('hosts out at once, at most'),
  validate: z.boolean().optional().describe('validate-compute before re-admitting each host'),
  returnWhen: z.enum(RETURN_WHEN).optional().describe('done, or service-restart'),
});
const listQuery = z.strictObject({
  ...idPageQuery,
  state: z.enum(CAMPAIGN_STATES).optional(),
  aggregate: z.string().max(255).optional(),
});
const idParams = z.strictObject({ id: numericId });
const hostParams = z.strictObject({ host: hostName });

type CampaignOut = z.infer<typeof campaignView>;

/** The stored campaign with its driver task's state, as the API shows it. */
async function view(ctx: ApiContext, c: Campaign): Promise<CampaignOut> {
  const { version: _v, ...rest } = c;
  const t = c.taskId === null || ctx.tasks === undefined ? null : await ctx.tasks.get(c.taskId);
  return {
    ...rest,
    driver: t === null ? null : { state: t.state, waitingReason: t.waitingReason, error: t.error },
  };
}

function maintenanceOf(ctx: ApiContext): MaintenanceService {
  if (ctx.maintenance === undefined)
    throw new ApiError(
      503,
      'maintenance-unavailable',
      'maintenance campaigns run inside `aicerine serve`; this API has none',
    );
  return ctx.maintenance;
}

const errors = { 404: errorBody, 409: errorBody, 503: errorBody };

export function registerMaintenance(app: ZodApp, ctx: ApiContext): void {
  const audit = async (
    who: { actor: string; credential: string },
    action: string,
    target: string,
    detail: Record<string, string | number | boolean | null>,
  ) => ctx.store.audit.record({ ...who, action, target, detail, at: ctx.now().toISOString() });

  app.get(
    '/v1/maintenance',
    {
      config: { action: 'read' },
      schema: {
        tags: ['maintenance'],
        summary: 'Maintenance campaigns, newest first',
        querystring: listQuery,
        response: {
          200: z.object({ items: z.array(campaignView), nextCursor: z.string().nullable() }),
          503: errorBody,
        },
      },
    },
    async (req) => {
      const q = req.query;
      const page = await maintenanceOf(ctx).list(
        {
          ...(q.state !== undefined ? { state: q.state } : {}),
          ...(q.aggregate !== undefined ? { aggregate: q.aggregate } : {}),
        },
        { ...(q.limit !== undefined ? { limit: q.limit } : {}), cursor: q.cursor ?? null },
      );
      return { items: await Promise.all(page.items.map((c) => view(ctx, c))), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/v1/maintenance',
    {
      config: { action: 'maintenance.start' },
      schema: {
        tags: ['maintenance'],
        summary: 'Start a campaign: checked against the cloud first (400, 404, 409: nothing created)',
        body: startBody,
        response: { 201: campaignView, 400: errorBody, ...errors },
      },
    },
    async (req, reply) => {
      const who = actorOf(req);
      const b = req.body;
      const c = await maintenanceOf(ctx)
        .start(
          {
            aggregate: b.aggregate,
            ...(b.hosts !== undefined ? { hosts: b.hosts } : {}),
            ...(b.parallel !== undefined ? { parallel: b.parallel } : {}),
            ...(b.validate !== undefined ? { validate: b.validate } : {}),
            ...(b.returnWhen !== undefined ? { returnWhen: b.returnWhen } : {}),
          },
          who.actor,
        )
        .catch(answerTaskRefusal);
      await audit(who, 'maintenance.start', `maintenance:${c.id}`, {
        aggregate: c.aggregate,
        hosts: c.hosts.map((h) => h.host).join(','),
        parallel: c.settings.parallel,
        validate: c.settings.validate,
        returnWhen: c.settings.returnWhen,
      });
      reply.code(201);
      return view(ctx, c);
    },
  );

  app.get(
    '/v1/maintenance/:id',
    {
      config: { action: 'read' },
      schema: {
        tags: ['maintenance'],
        summary: "One campaign: each host's state, progress and timings",
        params: idParams,
        response: { 200: campaignView, 404: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const c = await maintenanceOf(ctx).get(req.params.id);
      if (c === null) throw notFound(`maintenance campaign ${req.params.id}`, 'params.id', req.params.id);
      return view(ctx, c);
    },
  );

  for (const [verb, summary] of [
    ['pause', 'Pause: no host is taken out, validated or re-admitted until resumed; what runs finishes'],
    ['resume', 'Resume a paused campaign (or restart the driver of one whose driver task ended)'],
    ['abort', 'Abort: running evacuations and validations are cancelled; hosts are left as they are'],
  ] as const) {
    app.post(
      `/v1/maintenance/:id/${verb}`,
      {
        config: { action: 'maintenance.control' },
        schema: {
          tags: ['maintenance'],
          summary,
          params: idParams,
          response: { 200: campaignView, ...errors },
        },
      },
      async (req) => {
        const who = actorOf(req);
        const m = maintenanceOf(ctx);
        const c = await m[verb](req.params.id, who.actor).catch(answerTaskRefusal);
        await audit(who, `maintenance.${verb}`, `maintenance:${c.id}`, { state: c.state });
        return view(ctx, c);
      },
    );
  }

  app.post(
    '/v1/maintenance/hosts/:host/done',
    {
      config: { action: 'maintenance.control' },
      schema: {
        tags: ['maintenance'],
        summary: 'A host handed over for maintenance is back: its campaign validates or re-admits it',
        params: hostParams,
        response: { 200: campaignView, ...errors },
      },
    },
    async (req) => {
      const who = actorOf(req);
      const c = await maintenanceOf(ctx).done(req.params.host, who.actor).catch(answerTaskRefusal);
      await audit(who, 'maintenance.done', `host:${req.params.host}`, { campaign: c.id });
      return view(ctx, c);
    },
  );
}
