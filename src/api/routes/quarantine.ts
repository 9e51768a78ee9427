// Quarantined servers: list, release.
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import { notFound } from '../errors.js';
import { commentBody, errorBody, page, quarantineEntry, quarantineQuery, serverParams } from '../schemas.js';

export function registerQuarantine(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/quarantine',
    {
      config: { action: 'read' },
      schema: {
        tags: ['quarantine'],
        summary: 'Quarantined servers (active by default), newest first',
        querystring: quarantineQuery,
        response: { 200: page(quarantineEntry) },
      },
    },
    async (req) => {
      const q = req.query;
      return ctx.store.quarantine.list(
        {
          ...(q.aggregate !== undefined ? { aggregate: q.aggregate } : {}),
          ...(q.serverId !== undefined ? { serverId: q.serverId } : {}),
          ...(q.state !== undefined ? { state: q.state } : {}),
        },
        { ...(q.limit !== undefined ? { limit: q.limit } : {}), cursor: q.cursor ?? null },
      );
    },
  );

  app.post(
    '/v1/quarantine/:serverId/release',
    {
      config: { action: 'quarantine.release' },
      schema: {
        tags: ['quarantine'],
        summary: 'Release a quarantined server: the loop may move it again',
        params: serverParams,
        body: commentBody.nullish(),
        response: { 200: quarantineEntry, 404: errorBody },
      },
    },
    async (req) => {
      const { serverId } = req.params;
      const who = actorOf(req);
      const at = ctx.now().toISOString();
      const released = await ctx.store.quarantine.release(serverId, who.actor, at);
      if (released === null) throw notFound(`quarantined server ${serverId}`, 'params.serverId', serverId);
      await ctx.store.audit.record({
        ...who,
        action: 'quarantine.release',
        target: `server:${serverId}`,
        detail: { comment: req.body?.comment ?? null, attempts: released.attempts, reason: released.reason },
        at,
      });
      return released;
    },
  );
}
