// Prometheus' instant- and range-query API over the simulator's metrics (see src/sim/metrics.ts).
import { metricsSource } from '../metrics.js';
import type { SimCloud } from '../model.js';
import { evaluate, PromQLError, type SeriesSource } from '../promql.js';
import { queryRange } from './prometheus-range.js';
import { type Ctx, type Route, route, sendJson } from './respond.js';

export const PROMETHEUS_PREFIX = '/prometheus';

export function prometheusRoutes(cloud: SimCloud): Route[] {
  // Queries of one scrape instant share their load cache (a query and its timestamp() twin).
  let shared: { t: number; source: SeriesSource } | null = null;
  const sourceAt = (t: number): SeriesSource => {
    if (!shared || shared.t !== t) shared = { t, source: metricsSource(cloud) };
    return shared.source;
  };
  const query = (ctx: Ctx, params: URLSearchParams): void => {
    const expr = params.get('query');
    if (!expr) {
      sendJson(ctx, 400, {
        status: 'error',
        errorType: 'bad_data',
        error: 'invalid parameter "query": unknown query',
      });
      return;
    }
    const timeParam = params.get('time');
    const ts = timeParam === null ? Date.now() / 1000 : Number(timeParam);
    if (!Number.isFinite(ts)) {
      sendJson(ctx, 400, {
        status: 'error',
        errorType: 'bad_data',
        error: `invalid parameter "time": cannot parse "${timeParam}" to a valid timestamp`,
      });
      return;
    }
    cloud.sync();
    // Loads are the simulated cloud's now; the sample time is the caller's clock, as a real
    // Prometheus evaluating "now" would stamp it.
    try {
      const t = Math.round(cloud.clock.nowSeconds());
      const v = evaluate(expr, sourceAt(t), t, ts);
      const data =
        v.kind === 'scalar'
          ? { resultType: 'scalar', result: [ts, String(v.value)] }
          : {
              resultType: 'vector',
              result: v.samples.map((s) => ({ metric: s.labels, value: [ts, String(s.value)] })),
            };
      sendJson(ctx, 200, { status: 'success', data });
    } catch (e) {
      if (e instanceof PromQLError || e instanceof SyntaxError) {
        sendJson(ctx, 400, { status: 'error', errorType: 'bad_data', error: e.message });
        return;
      }
      throw e;
    }
  };
  return [
    route('GET', '/api/v1/query', (ctx) => query(ctx, ctx.query)),
    route('POST', '/api/v1/query', (ctx) => {
      const form = typeof ctx.body === 'string' ? new URLSearchParams(ctx.body) : ctx.query;
      query(ctx, form);
    }),
    route('GET', '/api/v1/query_range', (ctx) => queryRange(cloud, ctx, ctx.query)),
    route('POST', '/api/v1/query_range', (ctx) => {
      const form = typeof ctx.body === 'string' ? new URLSearchParams(ctx.body) : ctx.query;
      queryRange(cloud, ctx, form);
    }),
    route('GET', '/-/ready', (ctx) => sendJson(ctx, 200, 'Prometheus Server is Ready.')),
  ];
}
