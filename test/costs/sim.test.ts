// Learned costs against the simulator over HTTP: run live migrations through Nova's API (many
// per source at once, so most of them queue), read os-migrations back with the reader's calls,
// fit, and compare with the duration model the simulator runs (src/planner/cost-model.ts with
// the default policy).

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/costs.js';
import { fitCosts, predictSeconds } from '../../src/costs/fit.js';
import { readMigrationHistory } from '../../src/costs/read-history.js';
import type { Server } from '../../src/model/snapshot.js';
import { estimateMigrationSeconds } from '../../src/planner/cost-model.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { cloudsYaml } from '../../src/sim/connect-info.js';
import { runCommand } from '../fixtures/cli.js';
import { type SimSession, startSimSession } from '../fixtures/sim-session.js';
import { host, server, snapshot } from '../sim/fixtures.js';

const RAMS = [1024, 2048, 4096, 8192, 16384, 32768];
const DIRTY = [0, 100, 200];
const big = {
  VCPU: { total: 128, reserved: 0, allocationRatio: 4 },
  MEMORY_MB: { total: 1024 * 1024, reserved: 0, allocationRatio: 1 },
  DISK_GB: { total: 100000, reserved: 0, allocationRatio: 1 },
};

let w: SimSession;
const servers: Server[] = [];

beforeAll(async () => {
  const hosts = [
    ...['g1', 'g2', 'g3', 'g4'].map((n) => host(n, { aggregates: ['gold'], inventory: big })),
    ...['s1', 's2', 's3', 's4'].map((n) => host(n, { aggregates: ['silver'], inventory: big })),
  ];
  let n = 0;
  // gold: no dirty rates (the simulator uses the policy default, 50 MiB/s); silver: measured ones.
  for (const src of ['g1', 'g2']) for (let i = 0; i < 12; i++) servers.push(server(++n, src, RAMS[i % 6]));
  for (const src of ['s1', 's2'])
    for (let i = 0; i < 18; i++)
      servers.push(server(++n, src, RAMS[i % 6], { dirtyRateMBps: DIRTY[Math.floor(i / 6)] as number }));
  w = await startSimSession(snapshot(hosts, servers));
  // The record's lifecycle lags (scheduling, the record trailing the server) are Nova's bookkeeping,
  // not the copy the fit learns: zero here so the simulator's duration model is the whole truth.
  await w.control('PUT', '/timing', { scheduleSeconds: 0, completionLagSeconds: 0 });
  // Everything at once: each source runs one at a time (max_concurrent_live_migrations 1), the rest queue.
  const dest: Record<string, string> = { g1: 'g3', g2: 'g4', s1: 's3', s2: 's4' };
  for (const s of servers) await w.session.nova.liveMigrate(s.id, dest[s.host] as string);
  await w.advance(4 * 3600);
}, 60_000);

afterAll(async () => {
  await w?.close();
});

const truth = (ramMB: number, dirtyRateMBps?: number) =>
  estimateMigrationSeconds({ ramMB, dirtyRateMBps }, DEFAULT_POLICY.costModel);

describe('learned costs from the simulator', () => {
  it("fits each aggregate's durations within a second or 5% of the simulator's model", async () => {
    const dirty = new Map(servers.map((s) => [s.id, s.dirtyRateMBps]));
    const history = await readMigrationHistory(w.session.nova, {
      days: 1,
      now: w.now,
      dirtyRateOf: (id) => dirty.get(id),
    });
    expect(history.records).toBe(servers.length);
    expect(history.samples.every((s) => s.outcome === 'completed')).toBe(true);
    // All but the first of each source queued.
    expect(history.queueCorrected).toBe(servers.length - 4);

    const fits = fitCosts(history.samples);
    const gold = fits.find((f) => f.aggregate === 'gold');
    const silver = fits.find((f) => f.aggregate === 'silver');
    expect(gold?.usable).toBe(true);
    expect(gold?.method).toBe('theil-sen');
    for (const ram of RAMS) {
      const predicted = predictSeconds(gold!.coefficients!, ram, 0);
      expect(Math.abs(predicted - truth(ram))).toBeLessThanOrEqual(Math.max(1, 0.05 * truth(ram)));
    }
    expect(silver?.usable).toBe(true);
    expect(silver?.method).toBe('huber');
    for (const ram of RAMS)
      for (const d of DIRTY) {
        const predicted = predictSeconds(silver!.coefficients!, ram, d);
        expect(Math.abs(predicted - truth(ram, d))).toBeLessThanOrEqual(Math.max(1.5, 0.05 * truth(ram, d)));
      }
  });

  it('without the queue correction, the same history overestimates badly', async () => {
    const history = await readMigrationHistory(w.session.nova, {
      days: 1,
      now: w.now,
      concurrencyOf: () => 1000,
    });
    expect(history.queueCorrected).toBe(0);
    const gold = fitCosts(history.samples).find((f) => f.aggregate === 'gold');
    expect(predictSeconds(gold!.coefficients!, 8192, 0)).toBeGreaterThan(2 * truth(8192));
  });

  it('aicerine costs prints the fit per aggregate, and the report as JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aicerine-costs-'));
    const file = join(dir, 'clouds.yaml');
    await writeFile(
      file,
      cloudsYaml({
        authUrl: w.sim.authUrl,
        password: 'secret',
        cloudName: 'simc',
        prometheusUrl: '',
        controlUrl: '',
      }),
    );
    const before = process.env.OS_CLIENT_CONFIG_FILE;
    process.env.OS_CLIENT_CONFIG_FILE = file;
    try {
      // --days counts back from the wall clock, and the simulator's clock is a few hours ahead of its start.
      const text = await runCommand([register], ['costs', '--cloud', 'simc', '--days', '30']);
      expect(text.out).toMatch(
        /Live migrations since .*: 60 records, 60 samples; 56 started later than requested/,
      );
      expect(text.out).toMatch(
        /^gold\s+24\s+24\s+0\s+theil-sen\s+[\d.]+\s+1\.\d+\s+-\s+[\d.]+\s+[\d.]+\s+learned$/m,
      );
      expect(text.out).toMatch(/^silver\s+36\s+36\s+0\s+theil-sen\s/m);
      expect(text.out).toMatch(
        /gold: learned fit, 24 completed migrations over 6 RAM sizes; 2 GiB [\d.]+ s \(timeout 120 s\)/,
      );
      // With the servers' dirty rates from a snapshot, silver learns its dirty-rate term.
      const snapFile = join(dir, 'snap.json');
      await writeFile(snapFile, JSON.stringify(await w.control('GET', '/snapshot')));
      const withDirty = await runCommand(
        [register],
        ['costs', '--cloud', 'simc', '--days', '30', '--snapshot', snapFile],
      );
      expect(withDirty.out).toMatch(/^silver\s+36\s+36\s+0\s+huber\s+[\d.]+\s+[\d.]+\s+0\.00\d+\s/m);
      const json = await runCommand([register], ['costs', '--cloud', 'simc', '--days', '30', '--json']);
      const report = JSON.parse(json.out) as {
        format: string;
        aggregates: { aggregate: string; uses: string }[];
      };
      expect(report.format).toBe('aicerine-costs/1');
      expect(report.aggregates.map((a) => [a.aggregate, a.uses])).toEqual([
        ['gold', 'learned'],
        ['silver', 'learned'],
      ]);
    } finally {
      if (before === undefined) delete process.env.OS_CLIENT_CONFIG_FILE;
      else process.env.OS_CLIENT_CONFIG_FILE = before;
    }
  });
});
