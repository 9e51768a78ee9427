// Observe mode's shadow reports (what Aicerine would have done against what the cloud did), as
// the loop writes them to the audit log once a day per observe-mode aggregate.
import type { ApiContext, ZodApp } from '../context.js';
import { page, shadowReportEntry, shadowReportsQuery } from '../schemas.js';

export function registerShadowReports(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/shadow-reports',
    {
      config: { action: 'read' },
      schema: {
        tags: ['shadow-reports'],
        summary: "Observe mode's daily shadow reports, newest first",
        querystring: shadowReportsQuery,
        response: { 200: page(shadowReportEntry) },
      },
    },
    async (req) => {
      const q = req.query;
      const p = await ctx.store.audit.list(
        {
          action: 'shadow.report',
          ...(q.aggregate !== undefined ? { target: `aggregate:${q.aggregate}` } : {}),
          ...(q.since !== undefined ? { from: q.since } : {}),
        },
        { ...(q.limit !== undefined ? { limit: q.limit } : {}), cursor: q.cursor ?? null },
      );
      return {
        items: p.items.map((e) => ({
          id: e.id,
          aggregate: e.target.replace(/^aggregate:/, ''),
          at: e.at,
          report: e.detail,
        })),
        nextCursor: p.nextCursor,
      };
    },
  );
}
