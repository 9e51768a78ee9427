// Executions: list, show with their moves, abort (through the service's control port).
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import {
  abortResult,
  commentBody,
  errorBody,
  executionParams,
  executionRecord,
  executionsQuery,
  executionWithMoves,
  page,
} from '../schemas.js';

export function registerExecutions(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/executions',
    {
      config: { action: 'read' },
      schema: {
        tags: ['executions'],
        summary: 'Executions, newest first',
        querystring: executionsQuery,
        response: { 200: page(executionRecord) },
      },
    },
    async (req) => {
      const q = req.query;
      return ctx.store.executions.list(
        {
          ...(q.aggregate !== undefined ? { aggregate: q.aggregate } : {}),
          ...(q.state !== undefined ? { state: q.state } : {}),
          ...(q.planId !== undefined ? { planId: q.planId } : {}),
          ...(q.startedFrom !== undefined ? { startedFrom: q.startedFrom } : {}),
        },
        { ...(q.limit !== undefined ? { limit: q.limit } : {}), cursor: q.cursor ?? null },
      );
    },
  );

  app.get(
    '/v1/executions/:id',
    {
      config: { action: 'read' },
      schema: {
        tags: ['executions'],
        summary: 'An execution and every move of it',
        params: executionParams,
        response: { 200: executionWithMoves, 404: errorBody },
      },
    },
    async (req) => {
      const execution = await ctx.store.getExecution(req.params.id);
      if (execution === null) throw notFound(`execution ${req.params.id}`, 'params.id', req.params.id);
      return { ...execution, moves: await ctx.store.listMoves(execution.id) };
    },
  );

  app.post(
    '/v1/executions/:id/abort',
    {
      config: { action: 'execution.abort' },
      schema: {
        tags: ['executions'],
        summary: 'Abort a running execution',
        description: 'Moves not yet started are skipped; migrations in flight are aborted in Nova.',
        params: executionParams,
        body: commentBody.nullish(),
        response: { 200: abortResult, 404: errorBody, 409: errorBody },
      },
    },
    async (req) => {
      const { id } = req.params;
      const who = actorOf(req);
      const result = await ctx.control.abortExecution(id, who.actor);
      if (result.outcome === 'not-found') throw notFound(`execution ${id}`, 'params.id', id);
      if (result.outcome === 'not-running')
        throw new ApiError(409, 'conflict', `execution ${id} is ${result.state}, not running`);
      await ctx.store.audit.record({
        ...who,
        action: 'execution.abort',
        target: `execution:${id}`,
        detail: { comment: req.body?.comment ?? null },
        at: ctx.now().toISOString(),
      });
      return result;
    },
  );
}
