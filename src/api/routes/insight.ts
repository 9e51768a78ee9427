// What the dashboard draws: an aggregate's hosts with their utilization (from the snapshot the
// loop planned on last), its imbalance over time (what the loop stored each cycle), and a plan's
// per-host utilization before and after its moves.
import { aggregateConfig } from '../../config/aggregate.js';
import type { Snapshot } from '../../model/snapshot.js';
import { own } from '../../util/maps.js';
import type { ApiContext, ZodApp } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import {
  aggregateParams,
  errorBody,
  historyPoint,
  historyQuery,
  hostsPage,
  hostsQuery,
  page,
  planHosts,
  planParams,
} from '../schemas.js';
import { hostForecastPeaks } from '../views/forecast.js';
import { aggregateState, beforeAfter, hostViews, inAggregate } from '../views/utilization.js';

/** The snapshot the loop planned on last, or a 503 saying why there is none. */
export function latestSnapshot(ctx: ApiContext): Snapshot {
  if (ctx.snapshots === null)
    throw new ApiError(
      503,
      'no-snapshot',
      'this API runs without the control loop: host figures come from `aicerine serve`',
    );
  const snap = ctx.snapshots.latest();
  if (snap === null)
    throw new ApiError(
      503,
      'no-snapshot',
      'the service has not read the cloud yet: try again after its first cycle',
    );
  return snap;
}

/** 404 unless the aggregate is configured or has hosts in the snapshot. */
export function knownAggregate(
  ctx: ApiContext,
  name: string,
  snap: Snapshot | null,
  field = 'params.name',
): void {
  if (own(ctx.config.aggregates, name) !== undefined) return;
  if (snap?.hosts.some(inAggregate(name))) return;
  throw notFound(`aggregate ${name} (neither configured nor in the latest snapshot)`, field, name);
}

export function registerInsight(app: ZodApp, ctx: ApiContext): void {
  app.get(
    '/v1/aggregates/:name/hosts',
    {
      config: { action: 'read' },
      schema: {
        tags: ['aggregates'],
        summary: "The aggregate's hosts, by name, with utilization per dimension, state and VCPU ratio",
        description:
          'From the snapshot the loop planned on last (asOf). 503 before the first cycle, or when the API runs without the loop.',
        params: aggregateParams,
        querystring: hostsQuery,
        response: { 200: hostsPage, 404: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const { name } = req.params;
      const snap = latestSnapshot(ctx);
      knownAggregate(ctx, name, snap);
      const policy = aggregateConfig(ctx.config, name).policy;
      const all = hostViews(snap, policy, name);
      const limit = req.query.limit ?? 100;
      const after = req.query.cursor;
      const rest = after === undefined ? all : all.filter((h) => h.name > after);
      const kept = rest.slice(0, limit);
      const peaks = hostForecastPeaks(
        snap,
        kept.map((h) => h.name),
        ctx.now(),
      );
      return {
        items: kept.map((h) => ({ ...h, forecast: peaks.get(h.name) ?? null })),
        nextCursor: rest.length > limit ? kept[kept.length - 1]!.name : null,
        asOf: snap.takenAt,
        dimensions: policy.dimensions.map((d) => d.name),
      };
    },
  );

  app.get(
    '/v1/aggregates/:name/history',
    {
      config: { action: 'read' },
      schema: {
        tags: ['aggregates'],
        summary: "The aggregate's imbalance per dimension at every cycle, newest first",
        params: aggregateParams,
        querystring: historyQuery,
        response: { 200: page(historyPoint), 404: errorBody },
      },
    },
    async (req) => {
      const { name } = req.params;
      const points = await ctx.store.history.list(
        { aggregate: name, ...(req.query.since !== undefined ? { since: req.query.since } : {}) },
        {
          ...(req.query.limit !== undefined ? { limit: req.query.limit } : {}),
          cursor: req.query.cursor ?? null,
        },
      );
      if (points.items.length === 0 && req.query.cursor === undefined)
        knownAggregate(ctx, name, ctx.snapshots?.latest() ?? null);
      return points;
    },
  );

  app.get(
    '/v1/plans/:id/hosts',
    {
      config: { action: 'read' },
      schema: {
        tags: ['plans'],
        summary: "Per-host utilization before and after the plan's moves, for a chart",
        description:
          "On the latest snapshot's loads: a server already on its move's destination is put back on the source for `before`; `after` has every move applied.",
        params: planParams,
        response: { 200: planHosts, 404: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const stored = await ctx.store.plans.get(req.params.id);
      if (stored === null) throw notFound(`plan ${req.params.id}`, 'params.id', req.params.id);
      const snap = latestSnapshot(ctx);
      const agg = stored.plan.aggregates.find((a) => a.name === stored.aggregate);
      const state = aggregateState(
        snap,
        aggregateConfig(ctx.config, stored.aggregate).policy,
        stored.aggregate,
      );
      if (agg === undefined || state === null)
        throw new ApiError(
          409,
          'conflict',
          `aggregate ${stored.aggregate} of plan ${stored.id} has no host in the latest snapshot`,
        );
      return {
        planId: stored.id,
        aggregate: stored.aggregate,
        asOf: snap.takenAt,
        ...beforeAfter(state, agg.moves),
      };
    },
  );
}
