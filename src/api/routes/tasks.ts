// Operator tasks (docs/tasks.md): create (checked against the cloud first: 400/404/409, nothing
// created on refusal), list, show, cancel, clean, and the kinds this service runs.
import { z } from 'zod';
import { TASK_STATES, type TaskRecord } from '../../tasks/types.js';
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { errorBody, idPageQuery, isoTime, numericId } from '../schemas.js';
import { answerTaskRefusal } from './task-refusal.js';

const hostName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, { error: 'expected a compute host name' });

export const taskView = z
  .object({
    id: z.string(),
    kind: z.string(),
    args: z.record(z.string(), z.unknown()),
    requestedBy: z.string(),
    requestedAt: z.string(),
    batch: z.string(),
    afterBatch: z.boolean(),
    state: z.enum(TASK_STATES),
    progress: z.object({ done: z.number(), total: z.number().nullable(), detail: z.string() }),
    result: z.unknown(),
    error: z.string().nullable(),
    waitingReason: z.string().nullable(),
    hosts: z.array(z.string()),
    owner: z.string().nullable(),
    cancelRequested: z.boolean(),
    attempts: z.number().int(),
    startedAt: z.string().nullable(),
    heartbeatAt: z.string().nullable(),
    updatedAt: z.string(),
    endedAt: z.string().nullable(),
  })
  .meta({ id: 'Task' });

export const workerView = z
  .object({
    state: z.enum(['stopped', 'running', 'stopping']),
    blocked: z.string().nullable().describe('why the worker could not decide anything on its last pass'),
    blockedSince: z.string().nullable(),
    running: z.array(z.string()),
  })
  .nullable()
  .meta({ id: 'TaskWorker' });

export const taskPage = z.object({
  items: z.array(taskView),
  nextCursor: z.string().nullable(),
  worker: workerView,
});
const taskQuery = z.strictObject({
  ...idPageQuery,
  state: z.enum(TASK_STATES).optional(),
  kind: z.string().max(64).optional(),
  host: hostName.optional(),
  batch: z.string().max(64).optional(),
});
export const taskKinds = z.object({
  kinds: z.array(z.object({ kind: z.string(), description: z.string() })),
});
export const taskCreated = z.object({ tasks: z.array(taskView) });
export const taskCreateBody = z.strictObject({
  kind: z
    .string()
    .min(1)
    .max(64)
    .describe('evacuate-compute, purge-project, validate-compute... (GET /v1/tasks/kinds)'),
  args: z.record(z.string(), z.unknown()).optional().describe("the kind's arguments (docs/tasks.md)"),
});
const taskParams = z.strictObject({ id: numericId });
const cleanBody = z.strictObject({
  before: isoTime.optional().describe('remove DONE tasks that ended before this time (default: now)'),
});

/** The stored record as the API shows it (the checkpoint is the worker's business). */
function view(t: TaskRecord): z.infer<typeof taskView> {
  const { checkpoint: _c, version: _v, ...rest } = t;
  return rest;
}

function tasksOf(ctx: ApiContext) {
  if (ctx.tasks === undefined)
    throw new ApiError(
      503,
      'tasks-unavailable',
      'operator tasks run inside `aicerine serve`; this API has none',
    );
  return ctx.tasks;
}

export function registerTasks(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/tasks',
    {
      config: { action: 'read' },
      schema: {
        tags: ['tasks'],
        summary: "Operator tasks, newest first, with this service's worker status",
        querystring: taskQuery,
        response: { 200: taskPage, 503: errorBody },
      },
    },
    async (req) => {
      const tasks = tasksOf(ctx);
      const q = req.query;
      const page = await tasks.list(
        {
          ...(q.state !== undefined ? { state: q.state } : {}),
          ...(q.kind !== undefined ? { kind: q.kind } : {}),
          ...(q.host !== undefined ? { host: q.host } : {}),
          ...(q.batch !== undefined ? { batch: q.batch } : {}),
        },
        { ...(q.limit !== undefined ? { limit: q.limit } : {}), cursor: q.cursor ?? null },
      );
      return { items: page.items.map(view), nextCursor: page.nextCursor, worker: tasks.workerStatus() };
    },
  );

  app.get(
    '/v1/tasks/kinds',
    {
      config: { action: 'read' },
      schema: {
        tags: ['tasks'],
        summary: 'The task kinds an operator may request here',
        response: {
          200: taskKinds,
        },
      },
    },
    async () => ({
      kinds: tasksOf(ctx)
        .registry.requestable()
        .map((h) => ({ kind: h.kind, description: h.description })),
    }),
  );

  app.post(
    '/v1/tasks',
    {
      config: { action: 'task.create' },
      schema: {
        tags: ['tasks'],
        summary: 'Request a task: checked against the cloud first (400, 404, 409: nothing created)',
        body: taskCreateBody,
        response: {
          201: taskCreated,
          400: errorBody,
          404: errorBody,
          409: errorBody,
          503: errorBody,
        },
      },
    },
    async (req, reply) => {
      const who = actorOf(req);
      const created = await tasksOf(ctx)
        .create(req.body.kind, req.body.args ?? {}, who.actor)
        .catch(answerTaskRefusal);
      for (const t of created)
        await ctx.store.audit.record({
          ...who,
          action: 'task.create',
          target: `task:${t.id}`,
          detail: { kind: t.kind, args: t.args, hosts: t.hosts, batch: t.batch },
          at: ctx.now().toISOString(),
        });
      reply.code(201);
      return { tasks: created.map(view) };
    },
  );

  app.get(
    '/v1/tasks/:id',
    {
      config: { action: 'read' },
      schema: {
        tags: ['tasks'],
        summary: 'One task: state, progress, result or error, why it waits',
        params: taskParams,
        response: { 200: taskView, 404: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const t = await tasksOf(ctx).get(req.params.id);
      if (t === null) throw notFound(`task ${req.params.id}`, 'params.id', req.params.id);
      return view(t);
    },
  );

  app.post(
    '/v1/tasks/:id/cancel',
    {
      config: { action: 'task.cancel' },
      schema: {
        tags: ['tasks'],
        summary: 'Cancel: a waiting task ends now, a running one at its next safe point',
        params: taskParams,
        response: { 200: taskView, 404: errorBody, 409: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const who = actorOf(req);
      const t = await tasksOf(ctx).cancel(req.params.id, who.actor).catch(answerTaskRefusal);
      await ctx.store.audit.record({
        ...who,
        action: 'task.cancel',
        target: `task:${t.id}`,
        detail: { state: t.state },
        at: ctx.now().toISOString(),
      });
      return view(t);
    },
  );

  app.post(
    '/v1/tasks/clean',
    {
      config: { action: 'task.clean' },
      schema: {
        tags: ['tasks'],
        summary: 'Remove DONE tasks (never other states)',
        body: cleanBody.nullish(),
        response: { 200: z.object({ deleted: z.number().int() }), 503: errorBody },
      },
    },
    async (req) => {
      const who = actorOf(req);
      const deleted = await tasksOf(ctx)
        .clean(req.body?.before !== undefined ? new Date(req.body.before).toISOString() : null)
        .catch(answerTaskRefusal);
      await ctx.store.audit.record({
        ...who,
        action: 'task.clean',
        target: 'tasks',
        detail: { deleted, before: req.body?.before ?? null },
        at: ctx.now().toISOString(),
      });
      return { deleted };
    },
  );
}
