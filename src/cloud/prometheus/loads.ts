// Turns metric samples into per-host and per-server loads, and says how trustworthy they are:
// hosts or servers with no sample, samples too old, samples that name nothing we know.
import type { Load } from '../../model/snapshot.js';
import type { PrometheusClient } from './client.js';
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

export function extract(rule: MetricRule, labels: Record<string, string>): string | undefined {
  const raw = labels[rule.label];
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
export function resolver(rule: MetricRule, targets: LoadTargets): (v: string) => string | undefined {
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

export type MetricScope = MetricRule['scope'];
const ALL_SCOPES: ReadonlySet<MetricScope> = new Set(['host', 'server']);

/** Queries the policy's rules of these scopes (default: all) and measures what they name. */
export async function loadMetrics(
  prom: PrometheusClient,
  policy: MetricsPolicy,
  targets: LoadTargets,
  at: Date = new Date(),
  scopes: ReadonlySet<MetricScope> = ALL_SCOPES,
): Promise<LoadedMetrics> {
  const hostLoads = new Map<string, Load>();
  const serverLoads = new Map<string, Load>();
  const rules: RuleHealth[] = [];
  const problems: string[] = [];
  const oldest = at.getTime() / 1000 - policy.maxAgeSeconds;
  const wanted = policy.rules.filter((r) => scopes.has(r.scope));

  // All rules' queries at once: they are independent, and Prometheus answers them in parallel.
  // Each answer is folded into the figures as it is walked, never copied into samples first.
  const folded = await Promise.all(
    wanted.map(async (rule) => {
      const resolve = resolver(rule, targets);
      const stampOf = new Map<string, number>();
      const seen = new Set<string>();
      const unmatched: string[] = [];
      const into = rule.scope === 'host' ? hostLoads : serverLoads;
      const scale = rule.scale ?? 1;
      await Promise.all([
        prom.forEach(rule.query, at, (labels, value) => {
          const key = extract(rule, labels);
          const id = key === undefined ? undefined : resolve(key);
          if (id === undefined) {
            unmatched.push(key ?? `(no ${rule.label} label)`);
            return;
          }
          let load = into.get(id);
          if (load === undefined) {
            load = {};
            into.set(id, load);
          }
          load[rule.dimension] = (load[rule.dimension] ?? 0) + value * scale;
          seen.add(id);
        }),
        // timestamp() gives each series' own sample time; for computed series it is the
        // evaluation time, where Prometheus's lookback already bounds staleness.
        prom.forEach(`timestamp(${rule.query})`, at, (labels, value) => {
          const key = extract(rule, labels);
          const id = key === undefined ? undefined : resolve(key);
          if (id !== undefined) stampOf.set(id, Math.max(stampOf.get(id) ?? 0, value));
        }),
      ]);
      return { stampOf, seen, unmatched };
    }),
  );
  for (const [r, rule] of wanted.entries()) {
    const { stampOf, seen, unmatched } = folded[r]!;
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

/**
 * This read's host figures with the server figures of an earlier read (read on a slower
 * cadence, docs/openstack.md): the server rules' health is that read's, judged when it was made.
 */
export function withServerMetrics(fresh: LoadedMetrics, earlier: LoadedMetrics): LoadedMetrics {
  const rules = [
    ...fresh.health.rules.filter((r) => r.scope === 'host'),
    ...earlier.health.rules.filter((r) => r.scope === 'server'),
  ];
  const problems = [
    ...fresh.health.problems.filter((p) => !p.startsWith('server ')),
    ...earlier.health.problems.filter((p) => p.startsWith('server ')),
  ];
  return {
    hostLoads: fresh.hostLoads,
    serverLoads: earlier.serverLoads,
    health: { ok: problems.length === 0, rules, problems },
  };
}
