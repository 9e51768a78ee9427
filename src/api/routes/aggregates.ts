// Aggregates as the loop sees them (the configured ones and those it plans with the defaults): mode and pauses from the configuration and the control port,
// the window state, the latest data-health verdict and plan, the imbalance measured at the
// latest cycle (not a stored plan's figure) and the loop's latest decision (why it is not acting).
import { aggregateConfig } from '../../config/aggregate.js';
import { windowState } from '../../config/windows.js';
import { snapshotAggregates } from '../../policy/aggregate-scope.js';
import { own } from '../../util/maps.js';
import type { ApiContext, ZodApp } from '../context.js';
import { notFound } from '../errors.js';
import { aggregateParams, aggregatesQuery, aggregateView, errorBody, page } from '../schemas.js';
import { aggregateForecast } from '../views/forecast.js';
import { inAggregate } from '../views/utilization.js';

export function registerAggregates(app: ZodApp, ctx: ApiContext): void {
  /** The configured aggregates, and those the loop plans with the defaults (in its latest snapshot). */
  const known = () => {
    const latest = ctx.snapshots?.latest() ?? null;
    return [
      ...new Set([...Object.keys(ctx.config.aggregates), ...(latest ? snapshotAggregates(latest) : [])]),
    ];
  };

  /** Replicas: who holds each aggregate now (the lock backend's answer). */
  const ownersNow = async () =>
    (await ctx.replicas?.owners()) ?? new Map<string, { replica: string; fence: number }>();

  async function view(name: string, owners: Map<string, { replica: string; fence: number }>) {
    const agg = aggregateConfig(ctx.config, name);
    const pauses = await ctx.control.pauses();
    const now = ctx.now();
    const w = windowState(agg.windows, now);
    const latest = (await ctx.store.plans.list({ aggregate: name }, { limit: 1 })).items[0] ?? null;
    const measured = (await ctx.store.history.list({ aggregate: name }, { limit: 1 })).items[0] ?? null;
    const latestSnap = ctx.snapshots?.latest() ?? null;
    return {
      name,
      mode: agg.mode,
      paused:
        ctx.config.paused ||
        agg.paused ||
        pauses.global !== null ||
        own(pauses.aggregates, name) !== undefined,
      window: {
        open: w.open,
        closesAt: w.open ? (w.closesAt?.toISOString() ?? null) : null,
        nextOpensAt: w.nextOpensAt?.toISOString() ?? null,
      },
      dataHealth: await ctx.store.dataHealth.latest(name),
      latestPlan: latest,
      owner: owners.get(name) ?? null,
      imbalance:
        measured === null
          ? null
          : { overall: measured.imbalance, dimensions: measured.dimensions, asOf: measured.at },
      lastDecision: ctx.snapshots?.lastDecision?.(name) ?? null,
      forecast: latestSnap ? aggregateForecast(latestSnap, name, inAggregate(name)) : null,
    };
  }

  app.get(
    '/v1/aggregates',
    {
      config: { action: 'read' },
      schema: {
        tags: ['aggregates'],
        summary: 'The configured aggregates and those the loop plans with the defaults, by name',
        querystring: aggregatesQuery,
        response: { 200: page(aggregateView) },
      },
    },
    async (req) => {
      const limit = req.query.limit ?? 100;
      const after = req.query.cursor;
      const names = known()
        .sort()
        .filter((n) => after === undefined || n > after);
      const kept = names.slice(0, limit);
      const owners = ownersNow();
      return {
        items: await Promise.all(kept.map(async (n) => view(n, await owners))),
        nextCursor: names.length > limit ? kept[kept.length - 1]! : null,
      };
    },
  );

  app.get(
    '/v1/aggregates/:name',
    {
      config: { action: 'read' },
      schema: {
        tags: ['aggregates'],
        summary: 'One aggregate (configured, or planned with the defaults)',
        params: aggregateParams,
        response: { 200: aggregateView, 404: errorBody },
      },
    },
    async (req) => {
      const { name } = req.params;
      if (!known().includes(name))
        throw notFound(
          `aggregate ${name} (neither configured nor in the latest snapshot)`,
          'params.name',
          name,
        );
      return view(name, await ownersNow());
    },
  );
}
