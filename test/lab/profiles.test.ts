// Records load profiles from the lab's real Prometheus (2.42): range queries over series the lab
// exporter publishes for two servers booted here. The lab holds minutes of history, not weeks, so
// the profiles have one known slot (the current hour, from the newest point, which the history
// grid puts at "now") and null elsewhere; what the test holds is the real query_range answer
// resolved to servers, reduced, stored, carried in a valid snapshot, and not read again before
// the refresh interval.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register as registerRecord } from '../../src/cli/commands/record.js';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { memoryProfileStore } from '../../src/cloud/profiles/port.js';
import { ProfileRefresher } from '../../src/cloud/profiles/refresher.js';
import { DEFAULT_PROFILE_SETTINGS, type ProfileSettings } from '../../src/cloud/profiles/settings.js';
import { PrometheusClient } from '../../src/cloud/prometheus/client.js';
import { parseMetricsPolicy } from '../../src/cloud/prometheus/policy.js';
import { recordSnapshot } from '../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { slotAt } from '../../src/forecast/forecast.js';
import { parseSnapshot, readSnapshot } from '../../src/formats/snapshot-file.js';
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

const P = uniqueName('prof');
const M = P.replace(/-/g, '_');
const METRICS_FILE = `${P}.prom`;
let s: CloudSession;
// The recorder measures loads (and names the servers to profile) only with Prometheus.
let rec: CloudSession;
let prom: PrometheusClient;
let servers: NovaServer[];
let dir: string | undefined;

/** Runs `aicerine record` in this process: its stdout and stderr, and the exit code. */
async function record(args: string[]): Promise<{ out: string; code: number }> {
  const program = new Command();
  program.exitOverride();
  registerRecord(program);
  let out = '';
  const capture = (chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  };
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  process.exitCode = 0;
  try {
    await program.parseAsync(['record', ...args], { from: 'user' });
  } finally {
    spy.mockRestore();
    errSpy.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { out, code };
}

const policyDoc = {
  maxAgeSeconds: 3600,
  rules: [
    {
      dimension: 'cpu',
      scope: 'server',
      query: `${M}_domain_cores`,
      label: 'domain',
      labelKind: 'libvirt-domain',
    },
    {
      dimension: 'memoryMB',
      scope: 'server',
      query: `${M}_vm_used_mb`,
      label: 'uuid',
      labelKind: 'instance-uuid',
    },
  ],
};
const policy = parseMetricsPolicy(policyDoc);

const settings: ProfileSettings = { ...DEFAULT_PROFILE_SETTINGS, historyDays: 7, minSamples: 1 };

beforeAll(async () => {
  s = await adminSession();
  await cleanupLab(s, P);
  await createAggregate(s, `${P}-gold`, ['compute1', 'compute2']);
  servers = await bootServers(s, [
    { name: `${P}-a`, host: 'compute1', flavor: 'm1.tiny' },
    { name: `${P}-b`, host: 'compute2', flavor: 'm1.tiny' },
  ]);
  const lines: string[] = [];
  servers.forEach((v, i) => {
    lines.push(`${M}_domain_cores{domain="${v.instanceName}"} ${0.25 + i * 0.5}`);
    lines.push(`${M}_vm_used_mb{uuid="${v.id}"} ${300 + i * 100}`);
  });
  await writeMetrics(METRICS_FILE, `${lines.join('\n')}\n`);
  prom = new PrometheusClient(labEnv('OSLAB_PROMETHEUS_URL'), s.http);
  rec = await openSession({
    load: { env: { ...process.env, OS_CLOUD: '' } },
    prometheusUrl: labEnv('OSLAB_PROMETHEUS_URL'),
  });
  await waitFor('the lab exporter to be scraped', async () => {
    const r = await prom.query(`${M}_vm_used_mb`);
    return r.samples.length === servers.length ? true : undefined;
  });
});

afterAll(async () => {
  await writeMetrics(METRICS_FILE, undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
  if (s) await cleanupLab(s, P);
});

describe('load profiles from the lab Prometheus', () => {
  it('reads history with one range query per metric and reduces it per server', async () => {
    const recorded = await recordSnapshot(rec, { metricsPolicy: policy });
    const snapshot = recorded.snapshot;
    const targets = recorded.loadTargets;
    expect(targets).toBeDefined();
    const store = memoryProfileStore();
    const refresher = new ProfileRefresher(prom, store, settings, policy);
    const round = await refresher.attach(snapshot, targets!);
    expect(round.calls).toBe(2);
    expect(round.refreshed).toContain(`${P}-gold`);
    expect(round.warnings.filter((w) => w.includes('not readable'))).toEqual([]);

    const profiles = snapshot.profiles!;
    expect(profiles.format).toBe('aicerine-profiles/1');
    // The history grid ends at the read (profiles.to): its slot is the one with the newest point.
    const slot = slotAt(profiles.to, profiles);
    servers.forEach((v, i) => {
      const p = profiles.servers[v.id];
      expect(p, v.name).toBeDefined();
      expect(p!.cpu).toHaveLength(168);
      // The newest point is "now": the series exist for a few seconds, so only this slot is known.
      expect(p!.samples[slot]).toBe(1);
      expect(p!.cpu![slot]).toBeCloseTo(0.25 + i * 0.5, 6);
      expect(p!.memoryMB![slot]).toBeCloseTo(300 + i * 100, 6);
      expect(p!.cpu!.filter((x) => x !== null)).toHaveLength(1);
    });
    expect(parseSnapshot(JSON.parse(JSON.stringify(snapshot)), 'lab').profiles?.servers).toBeDefined();
    expect(store.rows.get(`${P}-gold`)?.servers[servers[0]!.id]).toEqual(profiles.servers[servers[0]!.id]);

    // The next record within the refresh interval reads no history.
    const again = await recordSnapshot(rec, { metricsPolicy: policy });
    const quiet = await refresher.attach(again.snapshot, again.loadTargets!);
    expect(quiet.calls).toBe(0);
    expect(again.snapshot.profiles?.servers[servers[1]!.id]).toEqual(profiles.servers[servers[1]!.id]);
  }, 120_000);

  it('aicerine record --config attaches the profiles prometheus.profiles configures', async () => {
    dir = await mkdtemp(join(tmpdir(), 'aicerine-lab-prof-'));
    const metricsFile = join(dir, 'metrics.json');
    await writeFile(metricsFile, JSON.stringify(policyDoc));
    const configFile = join(dir, 'aicerine.yaml');
    // The reader credential is the default one (the OS_* variables of the lab's openrc).
    await writeFile(
      configFile,
      JSON.stringify({
        prometheus: {
          url: labEnv('OSLAB_PROMETHEUS_URL'),
          metricsPolicy: metricsFile,
          profiles: { history: '7d', minSamples: 1 },
        },
      }),
    );
    const out = join(dir, 'snap.json.gz');
    const r = await record(['--config', configFile, '-o', out]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/profiles: \d+ servers profiled \(2 range queries, 7 days\)/);
    const snap = await readSnapshot(out);
    const profiles = snap.profiles!;
    expect(profiles.format).toBe('aicerine-profiles/1');
    const slot = slotAt(profiles.to, profiles);
    servers.forEach((v, i) => {
      expect(profiles.servers[v.id]?.cpu?.[slot], v.name).toBeCloseTo(0.25 + i * 0.5, 6);
      expect(snap.servers.find((x) => x.id === v.id)?.load).toEqual({
        cpu: 0.25 + i * 0.5,
        memoryMB: 300 + i * 100,
      });
    });
    // Without the configuration's profiles (switched off), the same record carries none.
    await writeFile(
      configFile,
      JSON.stringify({
        prometheus: {
          url: labEnv('OSLAB_PROMETHEUS_URL'),
          metricsPolicy: metricsFile,
          profiles: { enabled: false },
        },
      }),
    );
    const plain = await record(['--config', configFile, '-o', out]);
    expect(plain.code, plain.out).toBe(0);
    expect(plain.out).not.toContain('profiles:');
    expect((await readSnapshot(out)).profiles).toBeUndefined();
  }, 120_000);
});
