// Read-only records: the audit log, the data-health verdicts and prevention's ratio changes.
import type { ApiContext, ZodApp } from '../context.js';
import {
  auditEntry,
  auditQuery,
  dataHealthPage,
  dataHealthQuery,
  page,
  ratioChange,
  ratioChangesQuery,
} from '../schemas.js';

export function registerRecords(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/audit',
    {
      config: { action: 'read' },
      schema: {
        tags: ['audit'],
        summary: 'The audit log, newest first, filtered by actor, action, target and time',
        querystring: auditQuery,
        response: { 200: page(auditEntry) },
      },
    },
    async (req) => {
      const { limit, cursor, ...filter } = req.query;
      return ctx.store.audit.list(
        Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)),
        { ...(limit !== undefined ? { limit } : {}), cursor: cursor ?? null },
      );
    },
  );

  app.get(
    '/v1/data-health',
    {
      config: { action: 'read' },
      schema: {
        tags: ['data-health'],
        summary: "The data-health gate's verdicts, newest first",
        querystring: dataHealthQuery,
        response: { 200: dataHealthPage },
      },
    },
    async (req) => {
      const { limit, cursor, ...filter } = req.query;
      return ctx.store.dataHealth.list(
        Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)),
        { ...(limit !== undefined ? { limit } : {}), cursor: cursor ?? null },
      );
    },
  );

  app.get(
    '/v1/ratio-changes',
    {
      config: { action: 'read' },
      schema: {
        tags: ['prevention'],
        summary: "Prevention's allocation-ratio writes, newest first, with their reasons",
        querystring: ratioChangesQuery,
        response: { 200: page(ratioChange) },
      },
    },
    async (req) => {
      const { limit, cursor, ...filter } = req.query;
      return ctx.store.ratioChanges.list(
        Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)),
        { ...(limit !== undefined ? { limit } : {}), cursor: cursor ?? null },
      );
    },
  );
}
