// Replicas (docs/replicas.md): which replicas are live, where their APIs answer, when each last
// renewed its registration, and which aggregates each owns under which fence, as the lock
// backend shows them to the replica answering.
import type { ApiContext, ZodApp } from '../context.js';
import { replicasBody } from '../schemas.js';

export function registerReplicas(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/replicas',
    {
      config: { action: 'read' },
      schema: {
        tags: ['replicas'],
        summary: 'The live replicas, their heartbeats and the aggregates each owns',
        response: { 200: replicasBody },
      },
    },
    async () =>
      ctx.replicas === undefined
        ? { coordination: 'local' as const, replicas: [] }
        : { coordination: 'etcd' as const, replicas: await ctx.replicas.replicas() },
  );
}
