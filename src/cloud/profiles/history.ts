// Reads servers' load history from Prometheus with range queries: one query per profiled metric
// (cpu, memoryMB) whatever the number of servers, at hourly steps, each series resolved to a
// server id the way the instant loads are (src/cloud/prometheus/loads.ts).
import type { Sample, ServerSeries } from '../../forecast/reduce.js';
import { type PrometheusClient, queryRange } from '../prometheus/client.js';
import { extract, type LoadTargets, resolver } from '../prometheus/loads.js';
import type { MetricRule, MetricsPolicy } from '../prometheus/policy.js';
import { PROFILE_STEP_SECONDS } from './settings.js';

const PROFILED = ['cpu', 'memoryMB'] as const;

export interface ServerHistory {
  /** By server id. */
  series: Map<string, ServerSeries>;
  /** Range queries sent. */
  calls: number;
  /** Label values that named no known server, per metric (a sign the policy's labels are off). */
  unmatched: Record<string, number>;
}

/** The metrics policy's server rules for the profiled dimensions. */
export function profileRules(policy: MetricsPolicy): MetricRule[] {
  return policy.rules.filter(
    (r) => r.scope === 'server' && (PROFILED as readonly string[]).includes(r.dimension),
  );
}

export async function readServerHistory(
  prom: PrometheusClient,
  policy: MetricsPolicy,
  targets: Pick<LoadTargets, 'servers'>,
  window: { from: Date; to: Date },
): Promise<ServerHistory> {
  const rules = profileRules(policy);
  // Points every hour back from the window's end (its newest is now): every server's samples
  // fall on the same instants, so a host's hour is the sum of its servers' points there.
  const step = PROFILE_STEP_SECONDS;
  const endSeconds = Math.floor(window.to.getTime() / 1000);
  // Whole seconds at both ends: a window of exactly N days keeps its oldest hour (a fraction of a
  // second short of N days would drop it, and with it a sample of the current hour's slot).
  const steps = Math.floor((endSeconds - Math.floor(window.from.getTime() / 1000)) / step);
  const start = new Date((endSeconds - steps * step) * 1000);
  const end = new Date(endSeconds * 1000);
  const answers = await Promise.all(
    rules.map((rule) => queryRange(prom, rule.query, { start, end, stepSeconds: step })),
  );
  const series = new Map<string, ServerSeries>();
  const unmatched: Record<string, number> = {};
  const scoped = { hosts: [], servers: targets.servers };
  rules.forEach((rule, i) => {
    const resolve = resolver(rule, scoped);
    const key = rule.dimension as (typeof PROFILED)[number];
    // Several series may name one server (a rule summing by a label the policy did not): add
    // them per instant, as the instant loads do.
    const byServer = new Map<string, Map<number, number>>();
    for (const s of answers[i] ?? []) {
      const label = extract(rule, s.labels);
      const id = label === undefined ? undefined : resolve(label);
      if (id === undefined) {
        unmatched[rule.dimension] = (unmatched[rule.dimension] ?? 0) + 1;
        continue;
      }
      let points = byServer.get(id);
      if (!points) {
        points = new Map();
        byServer.set(id, points);
      }
      for (const p of s.points) points.set(p.t, (points.get(p.t) ?? 0) + p.value * (rule.scale ?? 1));
    }
    for (const [id, points] of byServer) {
      const samples: Sample[] = [...points].map(([t, value]) => ({ t, value }));
      const entry = series.get(id) ?? {};
      entry[key] = samples;
      series.set(id, entry);
    }
  });
  return { series, calls: rules.length, unmatched };
}
