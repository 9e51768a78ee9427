// Prometheus HTTP API: instant and range queries.
import { CloudError } from '../errors.js';
import type { HttpTransport } from '../http/transport.js';

export interface Sample {
  labels: Record<string, string>;
  value: number;
  /** Sample time, seconds since the epoch. */
  timestamp: number;
}

export interface InstantResult {
  /** Evaluation time, seconds since the epoch. */
  time: number;
  samples: Sample[];
}

/** One series of a range query: its labels and its points in time order. */
export interface RangeSeries {
  labels: Record<string, string>;
  /** Epoch seconds and values; NaN and infinite values are left out. */
  points: { t: number; value: number }[];
}

export class PrometheusClient {
  readonly url: string;

  constructor(
    url: string,
    private readonly http: HttpTransport,
    private readonly headers: Record<string, string> = {},
  ) {
    this.url = url.replace(/\/+$/, '');
  }

  /** GETs an API path with parameters; the `data` of a successful answer, or a CloudError saying why not. */
  async get(path: string, params: Record<string, string>): Promise<unknown> {
    const u = new URL(`${this.url}${path}`);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    const res = await this.http.send({
      method: 'GET',
      url: u.toString(),
      service: 'prometheus',
      headers: this.headers,
    });
    const body = res.body as { status?: unknown; data?: unknown; error?: unknown } | undefined;
    if (res.status !== 200 || !body || body.status !== 'success') {
      throw new CloudError(
        'http',
        `Prometheus at ${this.url} refused ${path} ${JSON.stringify(params.query ?? '')} (${res.status}): ${describeError(body?.error ?? res.body)}`,
        { fix: 'Check the PromQL in the metrics policy and the --prometheus URL' },
      );
    }
    return body.data;
  }

  /** Evaluates a PromQL expression at `time` (default: now); vector or scalar results. */
  async query(expr: string, time?: Date): Promise<InstantResult> {
    const samples: Sample[] = [];
    const at = await this.forEach(expr, time, (labels, value, timestamp) =>
      samples.push({ labels, value, timestamp }),
    );
    return { time: at, samples };
  }

  /**
   * The same, handing each sample to `visit` as the answer is walked, so a large answer (a
   * series per server) is not copied into a second array first. Returns the evaluation time.
   */
  async forEach(
    expr: string,
    time: Date | undefined,
    visit: (labels: Record<string, string>, value: number, timestamp: number) => void,
  ): Promise<number> {
    const u = new URL(`${this.url}/api/v1/query`);
    u.searchParams.set('query', expr);
    if (time) u.searchParams.set('time', String(time.getTime() / 1000));
    const res = await this.http.send({
      method: 'GET',
      url: u.toString(),
      service: 'prometheus',
      headers: this.headers,
    });
    const body = res.body as { status?: unknown; data?: unknown; error?: unknown } | undefined;
    if (res.status !== 200 || !body || body.status !== 'success') {
      throw new CloudError(
        'http',
        `Prometheus at ${this.url} refused query ${JSON.stringify(expr)} (${res.status}): ${describeError(body?.error ?? res.body)}`,
        { fix: 'Check the PromQL in the metrics policy and the --prometheus URL' },
      );
    }
    const data = body.data as { resultType?: unknown; result?: unknown };
    const now = (time ?? new Date()).getTime() / 1000;
    if (data.resultType === 'scalar' && Array.isArray(data.result)) {
      const [ts, v] = data.result as [number, string];
      visit({}, Number(v), ts);
      return now;
    }
    if (data.resultType !== 'vector' || !Array.isArray(data.result)) {
      throw new CloudError(
        'protocol',
        `Prometheus query ${JSON.stringify(expr)} gave a ${String(data.resultType)}, not an instant vector`,
        {
          fix: 'Use an expression that yields an instant vector (no range selector at the top level)',
        },
      );
    }
    const none: Record<string, string> = {};
    for (const r of data.result as { metric?: Record<string, string>; value?: [number, string] }[]) {
      if (!r.value) continue;
      const value = Number(r.value[1]);
      if (!Number.isFinite(value)) continue;
      visit(r.metric ?? none, value, r.value[0]);
    }
    return now;
  }
}

/**
 * Evaluates a PromQL expression at every `stepSeconds` from `start` to `end` (query_range): one
 * call for every series the expression gives, however many there are.
 */
export async function queryRange(
  prom: PrometheusClient,
  expr: string,
  range: { start: Date; end: Date; stepSeconds: number },
): Promise<RangeSeries[]> {
  const body = await prom.get('/api/v1/query_range', {
    query: expr,
    start: String(range.start.getTime() / 1000),
    end: String(range.end.getTime() / 1000),
    step: String(range.stepSeconds),
  });
  const data = body as { resultType?: unknown; result?: unknown };
  if (data.resultType !== 'matrix' || !Array.isArray(data.result)) {
    throw new CloudError(
      'protocol',
      `Prometheus range query ${JSON.stringify(expr)} gave a ${String(data.resultType)}, not a matrix`,
      { fix: 'Use an expression that yields an instant vector' },
    );
  }
  const out: RangeSeries[] = [];
  for (const r of data.result as { metric?: Record<string, string>; values?: [number, string][] }[]) {
    const points: { t: number; value: number }[] = [];
    for (const [t, v] of r.values ?? []) {
      const value = Number(v);
      if (Number.isFinite(value) && Number.isFinite(t)) points.push({ t, value });
    }
    out.push({ labels: r.metric ?? {}, points });
  }
  return out;
}

/** Prometheus says why in a string; anything else in front of it (a proxy, a fault) is shown as JSON, not "[object Object]". */
function describeError(e: unknown): string {
  if (typeof e === 'string') return e;
  const json = JSON.stringify(e);
  return json === undefined ? String(e) : json.length > 300 ? `${json.slice(0, 300)}…` : json;
}
