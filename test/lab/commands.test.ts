// The record, check and credentials commands, run in-process against the lab, with
// Prometheus fed through the lab exporter.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register as registerCheck } from '../../src/cli/commands/check.js';
import { register as registerCredentials } from '../../src/cli/commands/credentials.js';
import { register as registerRecord } from '../../src/cli/commands/record.js';
import { runChecks } from '../../src/cloud/check.js';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { PrometheusClient } from '../../src/cloud/prometheus/client.js';
import { loadMetrics } from '../../src/cloud/prometheus/loads.js';
import { parseMetricsPolicy } from '../../src/cloud/prometheus/policy.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { parseSiteDeclarations } from '../../src/cloud/site.js';
import { readSnapshot } from '../../src/formats/snapshot-file.js';
import {
  adminSession,
  bootServers,
  cleanupLab,
  createAggregate,
  labEnv,
  uniqueName,
  waitFor,
  writeMetrics,
} from './lab.js';

const P = uniqueName('cmd');
const METRICS_FILE = `${P}.prom`;
let s: CloudSession;
let dir: string;
let servers: NovaServer[];

const metricsPolicy = {
  maxAgeSeconds: 120,
  rules: [
    {
      dimension: 'cpu',
      scope: 'host',
      query: `${P.replace(/-/g, '_')}_host_busy_cores`,
      label: 'host',
      labelKind: 'host',
    },
    {
      dimension: 'memoryMB',
      scope: 'host',
      query: `${P.replace(/-/g, '_')}_host_used_bytes`,
      // The lab's scrape job owns `instance`, so the exporter's own label is renamed here.
      label: 'node',
      labelKind: 'host',
      labelPattern: '^([^:]+)',
      scale: 1 / 1048576,
    },
    {
      dimension: 'cpu',
      scope: 'server',
      query: `${P.replace(/-/g, '_')}_domain_cores`,
      label: 'domain',
      labelKind: 'libvirt-domain',
    },
    {
      dimension: 'memoryMB',
      scope: 'server',
      query: `${P.replace(/-/g, '_')}_vm_used_mb`,
      label: 'uuid',
      labelKind: 'instance-uuid',
    },
  ],
};

async function run(register: (p: Command) => void, args: string[]): Promise<{ out: string; code: number }> {
  const program = new Command();
  program.exitOverride();
  register(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  process.exitCode = 0;
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    spy.mockRestore();
    errSpy.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { out, code };
}

beforeAll(async () => {
  s = await adminSession();
  dir = await mkdtemp(join(tmpdir(), 'aicerine-lab-'));
  await createAggregate(s, `${P}-gold`, ['compute1', 'compute2'], { 'aicerine:shared_storage': 'true' });
  servers = await bootServers(s, [
    { name: `${P}-a`, host: 'compute1', flavor: 'm1.tiny' },
    { name: `${P}-b`, host: 'compute2', flavor: 'm1.tiny' },
  ]);
  const m = P.replace(/-/g, '_');
  const lines = [
    `${m}_host_busy_cores{host="compute1"} 3.5`,
    `${m}_host_busy_cores{host="compute2.lab.example"} 1.25`,
    `${m}_host_used_bytes{node="compute1:9100"} ${2048 * 1048576}`,
    `${m}_host_used_bytes{node="compute2:9100"} ${1024 * 1048576}`,
    `${m}_host_used_bytes{node="compute3:9100"} ${512 * 1048576}`,
  ];
  for (const v of servers) {
    lines.push(`${m}_domain_cores{domain="${v.instanceName}"} 0.5`);
    lines.push(`${m}_vm_used_mb{uuid="${v.id}"} 300`);
  }
  lines.push(`${m}_domain_cores{domain="instance-deadbeef"} 9`);
  await writeMetrics(METRICS_FILE, `${lines.join('\n')}\n`);
  const prom = new PrometheusClient(labEnv('OSLAB_PROMETHEUS_URL'), s.http);
  await waitFor('the lab exporter to be scraped', async () => {
    const r = await prom.query(`${m}_vm_used_mb`);
    return r.samples.length === servers.length ? true : undefined;
  });
});

afterAll(async () => {
  await writeMetrics(METRICS_FILE, undefined);
  if (s) await cleanupLab(s, P);
});

describe('commands against the lab', () => {
  it('record writes a snapshot with Prometheus loads and reports missing samples', async () => {
    const policyFile = join(dir, 'metrics.yaml');
    await writeFile(policyFile, JSON.stringify(metricsPolicy));
    const out = join(dir, 'snap.json.gz');
    const r = await run(registerRecord, [
      'record',
      '--prometheus',
      labEnv('OSLAB_PROMETHEUS_URL'),
      '--metrics',
      policyFile,
      '-o',
      out,
    ]);
    expect(r.out).toMatch(
      /\d+ API calls \(compute \d+, identity 1, network 1, placement \d+, prometheus 8\)/,
    );
    expect(r.out).toContain('warning: metrics: host cpu: no sample for');
    const snap = await readSnapshot(out);
    const host = (n: string) => snap.hosts.find((h) => h.name === n);
    expect(host('compute1')?.load).toEqual({ cpu: 3.5, memoryMB: 2048 });
    // A fully qualified label matches the short host name.
    expect(host('compute2')?.load).toEqual({ cpu: 1.25, memoryMB: 1024 });
    expect(host('compute3')?.load).toEqual({ memoryMB: 512 });
    for (const v of servers)
      expect(snap.servers.find((x) => x.id === v.id)?.load).toEqual({ cpu: 0.5, memoryMB: 300 });
  });

  it('reports health: missing hosts, unknown domains, stale samples', async () => {
    const prom = new PrometheusClient(labEnv('OSLAB_PROMETHEUS_URL'), s.http);
    const targets = {
      hosts: ['compute1', 'compute2', 'compute3', 'compute4'],
      servers: servers.map((v) => ({ id: v.id, instanceName: v.instanceName, host: v.host ?? '' })),
    };
    const fresh = await loadMetrics(prom, parseMetricsPolicy(metricsPolicy), targets);
    expect(fresh.health.ok).toBe(false);
    const hostCpu = fresh.health.rules.find((x) => x.scope === 'host' && x.dimension === 'cpu');
    expect(hostCpu?.missing).toEqual(['compute3', 'compute4']);
    expect(hostCpu?.stale).toEqual([]);
    const domains = fresh.health.rules.find((x) => x.scope === 'server' && x.dimension === 'cpu');
    expect(domains?.unmatched).toEqual(['instance-deadbeef']);
    expect(domains?.missing).toEqual([]);
    // Scraped samples are a few seconds old: with a tiny age limit every one is stale.
    const strict = await loadMetrics(
      prom,
      parseMetricsPolicy({ ...metricsPolicy, maxAgeSeconds: 0.001 }),
      targets,
    );
    expect(
      strict.health.rules.find((x) => x.scope === 'server' && x.dimension === 'memoryMB')?.stale.sort(),
    ).toEqual(servers.map((v) => v.id).sort());
  });

  it('check passes an aggregate whose preconditions hold and fails when nothing is declared', async () => {
    const a = servers.find((v) => v.host === 'compute1');
    if (!a) throw new Error('no server on compute1');
    const since = new Date();
    await s.nova.liveMigrate(a.id, 'compute2');
    expect((await s.nova.followLiveMigration(a.id, { since, pollMs: 500, timeoutMs: 90_000 })).status).toBe(
      'completed',
    );

    const site = parseSiteDeclarations({
      defaults: { cpuAllocationRatioInNovaConf: false },
      aggregates: {
        [`${P}-gold`]: {
          maintenanceWindows: [{ days: ['sat', 'sun'], start: '02:00', end: '06:00' }],
          ratioBounds: { VCPU: { min: 1, max: 16 }, MEMORY_MB: { min: 1, max: 1.5 } },
        },
      },
    });
    const report = await runChecks(s, { site });
    const gold = report.results.filter((r) => r.aggregate === `${P}-gold`);
    expect(gold.map((r) => [r.id, r.status])).toEqual([
      ['live-migration', 'ok'],
      ['storage', 'ok'],
      ['migratable-flavors', 'info'],
      ['ratio-owner', 'ok'],
      ['maintenance-windows', 'ok'],
      ['ratio-bounds', 'ok'],
      ['hosts', 'info'],
    ]);

    const r = await run(registerCheck, ['check']);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`aggregate ${P}-gold`);
    expect(r.out).toContain('[FAIL] maintenance windows are declared');
    expect(r.out).toMatch(/if not: /);
  });

  it('credentials writes the rules, policies and commands', async () => {
    const out = join(dir, 'creds');
    const r = await run(registerCredentials, ['credentials', '--from-cloud', '--output-dir', out]);
    expect(r.out).toContain('reader-access-rules.json');
    const rules = JSON.parse(await readFile(join(out, 'reader-access-rules.json'), 'utf8')) as {
      path: string;
    }[];
    expect(rules.map((x) => x.path)).toContain('/v2.1/servers/detail');
    const script = await readFile(join(out, 'create-credentials.sh'), 'utf8');
    expect(script).toContain(
      'openstack application credential create aicerine-reader --role aicerine-reader',
    );
  });
});
