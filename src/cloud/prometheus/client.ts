// Prometheus HTTP API: instant queries.
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

export class PrometheusClient {
  readonly url: string;

  constructor(
    url: string,
    private readonly http: HttpTransport,
    private readonly headers: Record<string, string> = {},
  ) {
    this.url = url.replace(/\/+$/, '');
  }

  /** Evaluates a PromQL expression at `time` (default: now); vector or scalar results. */
  async query(expr: string, time?: Date): Promise<InstantResult> {
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
      return { time: now, samples: [{ labels: {}, value: Number(v), timestamp: ts }] };
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
    const samples: Sample[] = [];
    for (const r of data.result as { metric?: Record<string, string>; value?: [number, string] }[]) {
      if (!r.value) continue;
      const value = Number(r.value[1]);
      if (!Number.isFinite(value)) continue;
      samples.push({ labels: r.metric ?? {}, value, timestamp: r.value[0] });
    }
    return { time: now, samples };
  }
}

/** Prometheus says why in a string; anything else in front of it (a proxy, a fault) is shown as JSON, not "[object Object]". */
function describeError(e: unknown): string {
  if (typeof e === 'string') return e;
  const json = JSON.stringify(e);
  return json === undefined ? String(e) : json.length > 300 ? `${json.slice(0, 300)}…` : json;
}
