// `aicerine record --config` against the simulator: the configuration's reader credential,
// Prometheus and metrics policy, and with prometheus.profiles the load profiles serve would
// attach, read from the simulator's working-week history (query_range).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register } from '../../../src/cli/commands/record.js';
import { slotAt } from '../../../src/forecast/forecast.js';
import { readSnapshot } from '../../../src/formats/snapshot-file.js';
import { SimClock } from '../../../src/sim/clock.js';
import { PROMETHEUS_PREFIX } from '../../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../../src/sim/http/server.js';
import { dailyLoadModel, staticLoadModel } from '../../../src/sim/load.js';
import { SimCloud } from '../../../src/sim/model.js';
import { host, server, snapshot } from '../../sim/fixtures.js';

let sim: SimServerHandle;
let dir: string;

beforeAll(async () => {
  const hosts = [host('c1'), host('c2')].map((h) => ({ ...h, aggregates: ['gold'] }));
  const servers = Array.from({ length: 4 }, (_, i) => server(i + 1, i % 2 === 0 ? 'c1' : 'c2', 2048));
  for (const s of servers) s.load = { cpu: 2, memoryMB: 1024 };
  // The simulated clock stands at the wall clock: record reads history up to now.
  const cloud = new SimCloud(snapshot(hosts, servers), {
    clock: new SimClock({ speed: 0, startMs: Date.now() }),
    load: dailyLoadModel(staticLoadModel()),
  });
  sim = await startSimServer({ cloud, password: 'pw', port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'aicerine-record-'));
});
afterAll(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function record(args: string[]): Promise<{ out: string; code: number }> {
  const program = new Command();
  program.exitOverride();
  register(program);
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

const configWith = (profiles: Record<string, unknown>) => ({
  allowInlineSecrets: true,
  credentials: {
    reader: {
      inline: {
        auth: {
          auth_url: sim.authUrl,
          username: 'admin',
          password: 'pw',
          project_name: 'admin',
          user_domain_name: 'Default',
          project_domain_name: 'Default',
        },
        region_name: 'RegionOne',
      },
    },
  },
  prometheus: { url: `${sim.url}${PROMETHEUS_PREFIX}`, profiles },
});

describe('record --config', () => {
  it('attaches load profiles when prometheus.profiles is configured, and none when it is off', async () => {
    const file = join(dir, 'aicerine.yaml');
    const out = join(dir, 'snap.json');
    await writeFile(file, JSON.stringify(configWith({ history: '7d', minSamples: 1 })));
    const r = await record(['--config', file, '-o', out]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('profiles: 4 servers profiled (2 range queries, 7 days)');
    const snap = await readSnapshot(out);
    const p = snap.profiles!;
    expect(p.format).toBe('aicerine-profiles/1');
    // A one-off record keeps no store: no earlier profiles, so no error measured.
    expect(p.errors).toBeUndefined();
    expect(Object.keys(p.servers).sort()).toEqual(snap.servers.map((s) => s.id).sort());
    // A week of hourly history, both ends kept: every slot known, this hour's from a week ago.
    const s1 = p.servers[snap.servers[0]!.id]!;
    expect(s1.cpu!.map((v, i) => (v === null ? i : -1)).filter((i) => i >= 0)).toEqual([]);
    expect(s1.samples[slotAt(p.to, p)]).toBeGreaterThanOrEqual(1);
    // The working week shows: the weekday peak is above the same server's weekend nights.
    expect(Math.max(...(s1.cpu!.slice(0, 120) as number[]))).toBeGreaterThan(s1.cpu![5 * 24 + 3]!);

    await writeFile(file, JSON.stringify(configWith({ enabled: false })));
    const plain = await record(['--config', file, '-o', out]);
    expect(plain.code, plain.out).toBe(0);
    expect(plain.out).not.toContain('profiles:');
    expect((await readSnapshot(out)).profiles).toBeUndefined();
  });
});
