// Turns metric samples into per-host and per-server loads, and says how trustworthy they are:
// hosts or servers with no sample, samples too old, samples that name nothing we know.
import type { Load } from '../../model/snapshot.js';
import type { PrometheusClient, Sample } from './client.js';
import type { MetricRule, MetricsPolicy } from './policy.js';

export interface LoadTargets {
  hosts: string[];
  servers: { id: string; instanceName: string | null; host: string }[];
}

export interface RuleHealth {
  dimension: string;
  scope: 'host' | 'server';
  query: string;
  matched: number;
  /** Hosts or server ids with no sample. */
  missing: string[];
  /** Hosts or server ids whose newest sample is older than maxAgeSeconds. */
  stale: string[];
  /** Label values that name no known host or server. */
  unmatched: string[];
  /** The newest sample's time (epoch seconds) per host or server id that has one. */
  sampledAt: Record<string, number>;
}

export interface MetricsHealth {
  /** True when every host and server has a fresh sample for every rule. */
  ok: boolean;
  rules: RuleHealth[];
  /** One line per problem, for an operator. */
  problems: string[];
}

export interface LoadedMetrics {
  hostLoads: Map<string, Load>;
  serverLoads: Map<string, Load>;
  health: MetricsHealth;
}

// Compiled once per rule: a record of a large cloud extracts hundreds of thousands of labels.
const patterns = new WeakMap<MetricRule, RegExp>();

function extract(rule: MetricRule, s: Sample): string | undefined {
  const raw = s.labels[rule.label];
  if (raw === undefined) return undefined;
  if (!rule.labelPattern) return raw;
  let re = patterns.get(rule);
  if (re === undefined) {
    re = new RegExp(rule.labelPattern);
    patterns.set(rule, re);
  }
  const m = re.exec(raw);
  return m ? (m[1] ?? m[0]) : undefined;
}

const shortName = (h: string) => h.split('.')[0] ?? h;

/** Resolves a label value to a host name (exact, then short names) or a server id. */
function resolver(rule: MetricRule, targets: LoadTargets): (v: string) => string | undefined {
  if (rule.scope === 'host') {
    const exact = new Set(targets.hosts);
    const short = new Map(targets.hosts.map((h) => [shortName(h), h]));
    return (v) => (exact.has(v) ? v : short.get(shortName(v)));
  }
  if (rule.labelKind === 'libvirt-domain') {
    // Domain names are unique per hypervisor only; instance_name is unique per cell in practice.
    const byDomain = new Map<string, string>();
    for (const s of targets.servers) if (s.instanceName) byDomain.set(s.instanceName, s.id);
    return (v) => byDomain.get(v);
  }
  const ids = new Set(targets.servers.map((s) => s.id));
  return (v) => (ids.has(v) ? v : undefined);
}

export async function loadMetrics(
  prom: PrometheusClient,
  policy: MetricsPolicy,
  targets: LoadTargets,
  at: Date = new Date(),
): Promise<LoadedMetrics> {
  const hostLoads = new Map<string, Load>();
  const serverLoads = new Map<string, Load>();
  const rules: RuleHealth[] = [];
  const problems: string[] = [];
  const oldest = at.getTime() / 1000 - policy.maxAgeSeconds;

  // All rules' queries at once: they are independent, and Prometheus answers them in parallel.
  const answers = await Promise.all(
    policy.rules.map((rule) =>
      Promise.all([
        prom.query(rule.query, at),
        // timestamp() gives each series' own sample time; for computed series it is the
        // evaluation time, where Prometheus's lookback already bounds staleness.
        prom.query(`timestamp(${rule.query})`, at),
      ]),
    ),
  );
  for (const [r, rule] of policy.rules.entries()) {
    const [values, stamps] = answers[r]!;
    const resolve = resolver(rule, targets);
    const stampOf = new Map<string, number>();
    for (const s of stamps.samples) {
      const key = extract(rule, s);
      const id = key === undefined ? undefined : resolve(key);
      if (id !== undefined) stampOf.set(id, Math.max(stampOf.get(id) ?? 0, s.value));
    }
    const seen = new Set<string>();
    const unmatched: string[] = [];
    const into = rule.scope === 'host' ? hostLoads : serverLoads;
    for (const s of values.samples) {
      const key = extract(rule, s);
      const id = key === undefined ? undefined : resolve(key);
      if (id === undefined) {
        unmatched.push(key ?? `(no ${rule.label} label)`);
        continue;
      }
      const load = into.get(id) ?? {};
      load[rule.dimension] = (load[rule.dimension] ?? 0) + s.value * (rule.scale ?? 1);
      into.set(id, load);
      seen.add(id);
    }
    const expected = rule.scope === 'host' ? targets.hosts : targets.servers.map((s) => s.id);
    const missing = expected.filter((id) => !seen.has(id));
    const stale = [...seen].filter((id) => (stampOf.get(id) ?? at.getTime() / 1000) < oldest);
    rules.push({
      dimension: rule.dimension,
      scope: rule.scope,
      query: rule.query,
      matched: seen.size,
      missing,
      stale,
      unmatched,
      sampledAt: Object.fromEntries(stampOf),
    });
    const what = `${rule.scope} ${rule.dimension}`;
    if (missing.length)
      problems.push(
        `${what}: no sample for ${missing.length} of ${expected.length} ${rule.scope}s (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''})`,
      );
    if (stale.length)
      problems.push(
        `${what}: ${stale.length} samples older than ${policy.maxAgeSeconds} s (${stale.slice(0, 5).join(', ')})`,
      );
  }
  return { hostLoads, serverLoads, health: { ok: problems.length === 0, rules, problems } };
}
