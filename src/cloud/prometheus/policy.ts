// The metrics policy: which PromQL query gives which load dimension, per host or per server,
// and how a sample's label names the host or server it measures.
import { z } from 'zod';
import { InputError } from '../../errors.js';
import { toInputIssues } from '../../formats/schema-helpers.js';

export type LabelKind = 'host' | 'instance-uuid' | 'libvirt-domain';

export interface MetricRule {
  /** Load key it fills ("cpu" in busy cores, "memoryMB" in MiB, or a custom dimension). */
  dimension: string;
  scope: 'host' | 'server';
  query: string;
  /** Label that names the host or server. */
  label: string;
  labelKind: LabelKind;
  /** Regex with one capture group applied to the label value ("^([^:]+)" drops a :port). */
  labelPattern?: string;
  /** Multiplier applied to each value (1/1048576 for bytes to MiB). */
  scale?: number;
}

export interface MetricsPolicy {
  rules: MetricRule[];
  /** A sample older than this is stale: the caller should not act on it. */
  maxAgeSeconds: number;
}

const MiB = 1 / 1048576;

/**
 * Defaults for the usual exporters: node_exporter on every compute host (label `instance`,
 * host:port) and a libvirt exporter labelling domains by name (`domain`, instance-0000xxxx).
 */
export const DEFAULT_METRICS_POLICY: MetricsPolicy = {
  maxAgeSeconds: 120,
  rules: [
    {
      dimension: 'cpu',
      scope: 'host',
      query: 'sum by (instance) (rate(node_cpu_seconds_total{mode!~"idle|iowait|steal"}[5m]))',
      label: 'instance',
      labelKind: 'host',
      labelPattern: '^([^:]+)',
    },
    {
      dimension: 'memoryMB',
      scope: 'host',
      query: 'node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes',
      label: 'instance',
      labelKind: 'host',
      labelPattern: '^([^:]+)',
      scale: MiB,
    },
    {
      dimension: 'cpu',
      scope: 'server',
      query: 'sum by (domain) (rate(libvirt_domain_info_cpu_time_seconds_total[5m]))',
      label: 'domain',
      labelKind: 'libvirt-domain',
    },
    {
      dimension: 'memoryMB',
      scope: 'server',
      query: 'libvirt_domain_info_memory_usage_bytes',
      label: 'domain',
      labelKind: 'libvirt-domain',
      scale: MiB,
    },
  ],
};

const ruleSchema = z.object({
  dimension: z.string().min(1, 'expected a dimension name'),
  scope: z.enum(['host', 'server'], { error: 'expected "host" or "server"' }),
  query: z.string().min(1, 'expected a PromQL expression'),
  label: z.string().min(1, 'expected a label name'),
  labelKind: z.enum(['host', 'instance-uuid', 'libvirt-domain'], {
    error: 'expected "host", "instance-uuid" or "libvirt-domain"',
  }),
  labelPattern: z
    .string()
    .refine((p) => {
      try {
        new RegExp(p);
        return true;
      } catch {
        return false;
      }
    }, 'expected a valid regular expression')
    .optional(),
  scale: z.number().positive('expected a positive number').optional(),
});

const policySchema = z.object({
  maxAgeSeconds: z.number().positive('expected a positive number of seconds').optional(),
  rules: z.array(ruleSchema).min(1, 'expected at least one rule'),
});

export function parseMetricsPolicy(doc: unknown, file?: string): MetricsPolicy {
  const r = policySchema.safeParse(doc);
  if (!r.success) throw new InputError(toInputIssues(r.error, doc, file));
  const rules: MetricRule[] = r.data.rules.map((x) => {
    const rule: MetricRule = {
      dimension: x.dimension,
      scope: x.scope,
      query: x.query,
      label: x.label,
      labelKind: x.labelKind,
    };
    if (x.labelPattern !== undefined) rule.labelPattern = x.labelPattern;
    if (x.scale !== undefined) rule.scale = x.scale;
    return rule;
  });
  return { rules, maxAgeSeconds: r.data.maxAgeSeconds ?? DEFAULT_METRICS_POLICY.maxAgeSeconds };
}
