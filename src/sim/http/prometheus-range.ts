// Prometheus' range-query API (/api/v1/query_range) over the simulator's metrics: the load
// history a recorder reduces to profiles (issue 28). The load models are functions of time, so
// the past is as available as the present; points after the simulated now are left out, as a
// real Prometheus has no samples from the future.
import { metricsSource } from '../metrics.js';
import type { SimCloud } from '../model.js';
import { evaluate, PromQLError } from '../promql.js';
import type { Ctx } from './respond.js';
import { sendJson } from './respond.js';

/** Prometheus refuses more points per series than this (its own limit and message). */
export const MAX_RANGE_POINTS = 11_000;

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

// Prometheus accepts a Unix time with decimals or an RFC 3339 time.
function parseTime(name: string, raw: string | null): Parsed<number> {
  const text = raw ?? '';
  const n = Number(text);
  if (text.trim() !== '' && Number.isFinite(n)) return { ok: true, value: n };
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isFinite(ms)) return { ok: true, value: ms / 1000 };
  return { ok: false, error: `invalid parameter "${name}": cannot parse "${text}" to a valid timestamp` };
}

const UNIT_SECONDS: Record<string, number> = {
  ms: 0.001,
  s: 1,
  m: 60,
  h: 3600,
  d: 86400,
  w: 604800,
  y: 31536000,
};

// Seconds with decimals, or a Prometheus duration ("1h", "1h30m").
function parseStep(raw: string | null): Parsed<number> {
  const text = raw ?? '';
  const n = Number(text);
  if (text.trim() !== '' && Number.isFinite(n)) return { ok: true, value: n };
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (text !== '' && parts.map((p) => p[0]).join('') === text) {
    let s = 0;
    for (const p of parts) s += Number(p[1]) * (UNIT_SECONDS[p[2] as string] as number);
    return { ok: true, value: s };
  }
  return { ok: false, error: `invalid parameter "step": cannot parse "${text}" to a valid duration` };
}

const badData = (ctx: Ctx, error: string): void =>
  sendJson(ctx, 400, { status: 'error', errorType: 'bad_data', error });

interface MatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

interface RangeParams {
  expr: string;
  start: number;
  end: number;
  step: number;
}

/** The request's parameters, or the error Prometheus gives for the first bad one. */
function parseRange(params: URLSearchParams): Parsed<RangeParams> {
  const expr = params.get('query');
  if (!expr) return { ok: false, error: 'invalid parameter "query": unknown query' };
  const start = parseTime('start', params.get('start'));
  if (!start.ok) return start;
  const end = parseTime('end', params.get('end'));
  if (!end.ok) return end;
  if (end.value < start.value) return { ok: false, error: 'end timestamp must not be before start time' };
  const step = parseStep(params.get('step'));
  if (!step.ok) return step;
  if (step.value <= 0)
    return {
      ok: false,
      error: 'zero or negative query resolution step widths are not accepted. Try a positive integer',
    };
  if ((end.value - start.value) / step.value > MAX_RANGE_POINTS)
    return {
      ok: false,
      error:
        'exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)',
    };
  return { ok: true, value: { expr, start: start.value, end: end.value, step: step.value } };
}

/** Answers one query_range request (GET query string or POST form). */
export function queryRange(cloud: SimCloud, ctx: Ctx, params: URLSearchParams): void {
  const parsed = parseRange(params);
  if (!parsed.ok) {
    badData(ctx, parsed.error);
    return;
  }
  const { expr, start, end, step } = parsed.value;
  cloud.sync();
  const now = cloud.clock.nowSeconds();
  // One source for the whole range: it memoizes loads per time, and points share servers.
  const source = metricsSource(cloud);
  const bySeries = new Map<string, MatrixSeries>();
  try {
    for (let i = 0; ; i++) {
      const t = start + i * step;
      if (t > end || t > now) break;
      const v = evaluate(expr, source, Math.round(t), t);
      const samples = v.kind === 'scalar' ? [{ labels: {}, value: v.value }] : v.samples;
      for (const s of samples) {
        const key = JSON.stringify(Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : 1)));
        let series = bySeries.get(key);
        if (!series) {
          series = { metric: s.labels, values: [] };
          bySeries.set(key, series);
        }
        series.values.push([t, String(s.value)]);
      }
    }
  } catch (e) {
    if (!(e instanceof PromQLError || e instanceof SyntaxError)) throw e;
    badData(ctx, e.message);
    return;
  }
  const result = [...bySeries.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  sendJson(ctx, 200, { status: 'success', data: { resultType: 'matrix', result } });
}
