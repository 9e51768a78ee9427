// Plans: list, show (with the operator's per-move decisions), approve or reject whole or per move.
import type { MoveDecisionKind, PlanStatus } from '../../store/plans.js';
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import { notFound } from '../errors.js';
import {
  decisionBody,
  errorBody,
  page,
  planParams,
  planSummary,
  plansQuery,
  storedPlan,
} from '../schemas.js';

export function registerPlans(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/plans',
    {
      config: { action: 'read' },
      schema: {
        tags: ['plans'],
        summary: 'Plans, newest first',
        querystring: plansQuery,
        response: { 200: page(planSummary) },
      },
    },
    async (req) => {
      const q = req.query;
      return ctx.store.plans.list(
        {
          ...(q.aggregate !== undefined ? { aggregate: q.aggregate } : {}),
          ...(q.status !== undefined ? { statuses: q.status.split(',') as PlanStatus[] } : {}),
          ...(q.mode !== undefined ? { mode: q.mode } : {}),
          ...(q.createdFrom !== undefined ? { createdFrom: q.createdFrom } : {}),
          ...(q.createdBefore !== undefined ? { createdBefore: q.createdBefore } : {}),
        },
        { ...(q.limit !== undefined ? { limit: q.limit } : {}), cursor: q.cursor ?? null },
      );
    },
  );

  app.get(
    '/v1/plans/:id',
    {
      config: { action: 'read' },
      schema: {
        tags: ['plans'],
        summary: 'A plan with its document and the decisions taken on its moves',
        params: planParams,
        response: { 200: storedPlan, 404: errorBody },
      },
    },
    async (req) => {
      const plan = await ctx.store.plans.get(req.params.id);
      if (plan === null) throw notFound(`plan ${req.params.id}`, 'params.id', req.params.id);
      return { ...plan, decisions: await ctx.store.plans.decisions(plan.id) };
    },
  );

  for (const decision of ['approved', 'rejected'] as const satisfies readonly MoveDecisionKind[]) {
    const verb = decision === 'approved' ? 'approve' : 'reject';
    app.post(
      `/v1/plans/:id/${verb}`,
      {
        config: { action: `plan.${verb}` },
        schema: {
          tags: ['plans'],
          summary: `${verb === 'approve' ? 'Approve' : 'Reject'} the whole plan, or the moves listed in steps`,
          description:
            'Refused (409) when the plan is no longer open (executed, superseded, expired, rejected) or past its expiry.',
          params: planParams,
          body: decisionBody.nullish(),
          response: { 200: planSummary, 404: errorBody, 409: errorBody },
        },
      },
      async (req) => {
        const { id } = req.params;
        const body = req.body ?? {};
        const who = actorOf(req);
        if ((await ctx.store.plans.get(id)) === null) throw notFound(`plan ${id}`, 'params.id', id);
        const at = ctx.now().toISOString();
        const summary = await ctx.store.plans.decide(id, {
          steps: body.steps ?? 'all',
          decision,
          by: who.actor,
          comment: body.comment ?? null,
          at,
        });
        await ctx.store.audit.record({
          ...who,
          action: `plan.${verb}`,
          target: `plan:${id}`,
          detail: { steps: body.steps ?? 'all', comment: body.comment ?? null, status: summary.status },
          at,
        });
        return summary;
      },
    );
  }
}
