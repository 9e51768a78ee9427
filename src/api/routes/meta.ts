// Health, version and (for admins) the configuration summary.
import { readFileSync } from 'node:fs';
import { formatConfigSummary } from '../../config/summary.js';
import type { ApiContext, ZodApp } from '../context.js';
import { configBody, healthBody, versionBody } from '../schemas.js';

export const API_VERSION = 'v1';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? 'unknown';
}

export function registerMeta(app: ZodApp, ctx: ApiContext): void {
  const version = packageVersion();
  app.get(
    '/v1/health',
    {
      schema: {
        tags: ['meta'],
        summary: 'Whether the API and its store answer (no token needed)',
        response: { 200: healthBody, 503: healthBody },
      },
    },
    async (_req, reply) => {
      try {
        await ctx.store.audit.list({}, { limit: 1 });
        return { status: 'ok' as const, store: 'ok' as const };
      } catch {
        return reply.code(503).send({ status: 'degraded' as const, store: 'unreachable' as const });
      }
    },
  );
  app.get(
    '/v1/version',
    {
      schema: {
        tags: ['meta'],
        summary: 'Aicerine version (no token needed)',
        response: { 200: versionBody },
      },
    },
    async () => ({ name: 'aicerine', version, api: API_VERSION }),
  );
  app.get(
    '/v1/config',
    {
      config: { action: 'config.read' },
      schema: {
        tags: ['meta'],
        summary: 'The configuration the service runs with, summarised (no secrets)',
        response: { 200: configBody },
      },
    },
    async () => ({ file: ctx.config.file ?? null, summary: formatConfigSummary(ctx.config, ctx.now()) }),
  );
}
