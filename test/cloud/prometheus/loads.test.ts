import { afterEach, describe, expect, it } from 'vitest';
import { HttpTransport } from '../../../src/cloud/http/transport.js';
import { PrometheusClient } from '../../../src/cloud/prometheus/client.js';
import { loadMetrics } from '../../../src/cloud/prometheus/loads.js';
import {
  DEFAULT_METRICS_POLICY,
  type MetricsPolicy,
  parseMetricsPolicy,
} from '../../../src/cloud/prometheus/policy.js';
import { InputError } from '../../../src/errors.js';
import { type FakeServer, startFake } from '../fake-server.js';

let fake: FakeServer;

const AT = new Date('2026-11-29T12:00:00Z');
const T = AT.getTime() / 1000;

type Series = { metric: Record<string, string>; value: number; ts?: number };

/** A Prometheus that answers each query from a table; timestamp(q) gives each series' sample time. */
async function prometheus(table: Record<string, Series[]>): Promise<PrometheusClient> {
  fake = await startFake({
    'GET /api/v1/query': (req) => {
      const q = req.query.get('query') ?? '';
      const stamp = /^timestamp\((.*)\)$/.exec(q);
      const series = table[stamp ? (stamp[1] ?? '') : q];
      if (!series)
        return { status: 400, body: { status: 'error', errorType: 'bad_data', error: `unknown ${q}` } };
      const result = series.map((s) => ({
        metric: s.metric,
        value: [T, String(stamp ? (s.ts ?? T) : s.value)],
      }));
      return { body: { status: 'success', data: { resultType: 'vector', result } } };
    },
  });
  return new PrometheusClient(`${fake.url}/`, new HttpTransport());
}

const policy: MetricsPolicy = {
  maxAgeSeconds: 60,
  rules: [
    {
      dimension: 'cpu',
      scope: 'host',
      query: 'host_cpu',
      label: 'instance',
      labelKind: 'host',
      labelPattern: '^([^:]+)',
    },
    {
      dimension: 'memoryMB',
      scope: 'host',
      query: 'host_mem',
      label: 'host',
      labelKind: 'host',
      scale: 1 / 1024,
    },
    { dimension: 'cpu', scope: 'server', query: 'dom_cpu', label: 'domain', labelKind: 'libvirt-domain' },
    { dimension: 'memoryMB', scope: 'server', query: 'vm_mem', label: 'uuid', labelKind: 'instance-uuid' },
  ],
};

const targets = {
  hosts: ['compute1', 'compute2'],
  servers: [
    { id: 'u1', instanceName: 'instance-00000001', host: 'compute1' },
    { id: 'u2', instanceName: 'instance-00000002', host: 'compute2' },
  ],
};

describe('loadMetrics', () => {
  // Each test here starts its own fake Prometheus; the policy files' tests start none.
  afterEach(async () => {
    await fake.close();
  });

  it('maps samples to hosts (label pattern, short names) and servers (domain names, uuids)', async () => {
    const prom = await prometheus({
      host_cpu: [
        { metric: { instance: 'compute1:9100' }, value: 3 },
        { metric: { instance: 'compute2.example.org:9100' }, value: 1.5 },
      ],
      host_mem: [
        { metric: { host: 'compute1' }, value: 2048 },
        { metric: { host: 'compute2' }, value: 1024 },
      ],
      dom_cpu: [
        { metric: { domain: 'instance-00000001' }, value: 0.25 },
        { metric: { domain: 'instance-00000002' }, value: 0.5 },
      ],
      vm_mem: [
        { metric: { uuid: 'u1' }, value: 100 },
        { metric: { uuid: 'u2' }, value: 200 },
      ],
    });
    const r = await loadMetrics(prom, policy, targets, AT);
    expect(Object.fromEntries(r.hostLoads)).toEqual({
      compute1: { cpu: 3, memoryMB: 2 },
      compute2: { cpu: 1.5, memoryMB: 1 },
    });
    expect(Object.fromEntries(r.serverLoads)).toEqual({
      u1: { cpu: 0.25, memoryMB: 100 },
      u2: { cpu: 0.5, memoryMB: 200 },
    });
    expect(r.health).toMatchObject({ ok: true, problems: [] });
    // Each rule is one value query and one timestamp query, whatever the number of hosts.
    expect(fake.requests).toHaveLength(8);
    expect(fake.requests[0]?.query.get('time')).toBe(String(T));
  });

  it('reports missing hosts and servers, stale samples and labels naming nothing', async () => {
    const prom = await prometheus({
      host_cpu: [{ metric: { instance: 'compute1:9100' }, value: 3, ts: T - 600 }],
      host_mem: [
        { metric: { host: 'compute1' }, value: 1 },
        { metric: { host: 'compute2' }, value: 1 },
      ],
      dom_cpu: [
        { metric: { domain: 'instance-00000001' }, value: 1 },
        { metric: { domain: 'instance-000000ff' }, value: 1 },
        { metric: {}, value: 1 },
      ],
      vm_mem: [],
    });
    const r = await loadMetrics(prom, policy, targets, AT);
    expect(r.health.ok).toBe(false);
    const [hostCpu, , domCpu, vmMem] = r.health.rules;
    expect(hostCpu).toMatchObject({ missing: ['compute2'], stale: ['compute1'], matched: 1 });
    expect(domCpu).toMatchObject({ missing: ['u2'], unmatched: ['instance-000000ff', '(no domain label)'] });
    expect(vmMem?.missing).toEqual(['u1', 'u2']);
    expect(r.health.problems).toEqual([
      'host cpu: no sample for 1 of 2 hosts (compute2)',
      'host cpu: 1 samples older than 60 s (compute1)',
      'server cpu: no sample for 1 of 2 servers (u2)',
      'server memoryMB: no sample for 2 of 2 servers (u1, u2)',
    ]);
  });

  it('says which query Prometheus refused', async () => {
    const prom = await prometheus({});
    await expect(prom.query('rate(x[')).rejects.toThrow(
      /Prometheus at http:\/\/127\.0\.0\.1:\d+ refused query "rate\(x\[" \(400\): unknown rate\(x\[/,
    );
  });
});

describe('metrics policy files', () => {
  it('accept a valid policy and default the age limit', () => {
    const p = parseMetricsPolicy({
      rules: [{ dimension: 'cpu', scope: 'host', query: 'q', label: 'h', labelKind: 'host' }],
    });
    expect(p.maxAgeSeconds).toBe(DEFAULT_METRICS_POLICY.maxAgeSeconds);
    expect(p.rules[0]).toEqual({
      dimension: 'cpu',
      scope: 'host',
      query: 'q',
      label: 'h',
      labelKind: 'host',
    });
  });

  it('refuse a bad policy naming the file, field and value', () => {
    const doc = {
      rules: [
        { dimension: 'cpu', scope: 'rack', query: 'q', label: 'h', labelKind: 'host', labelPattern: '([' },
      ],
    };
    try {
      parseMetricsPolicy(doc, 'metrics.yaml');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      const msg = (e as InputError).message;
      expect(msg).toContain('metrics.yaml: rules[0].scope: expected one of "host", "server", got "rack"');
      expect(msg).toContain(
        'metrics.yaml: rules[0].labelPattern: expected a valid regular expression, got "(["',
      );
    }
  });
});
