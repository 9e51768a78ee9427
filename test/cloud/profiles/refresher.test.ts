// Load profiles recorded from the simulator's Prometheus (query_range over its working-week load):
// two range queries per refresh round, none between refreshes, nothing after a restart, and the
// forecast error of the previous refresh once a day has passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryProfileStore } from '../../../src/cloud/profiles/port.js';
import { ProfileRefresher } from '../../../src/cloud/profiles/refresher.js';
import { DEFAULT_PROFILE_SETTINGS, type ProfileSettings } from '../../../src/cloud/profiles/settings.js';
import { DEFAULT_METRICS_POLICY } from '../../../src/cloud/prometheus/policy.js';
import { recordSnapshot } from '../../../src/cloud/record.js';
import { type CloudSession, openSession } from '../../../src/cloud/session.js';
import { parseSnapshot } from '../../../src/formats/snapshot-file.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
import { SimClock } from '../../../src/sim/clock.js';
import { simAdminConfig } from '../../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../../src/sim/http/server.js';
import { dailyLoadModel, staticLoadModel, weeklyFactor } from '../../../src/sim/load.js';
import { SimCloud } from '../../../src/sim/model.js';
import { host, server, snapshot } from '../../sim/fixtures.js';

// A Monday: the history behind it is two whole weeks.
const START = Date.parse('2026-11-30T00:00:00Z');
const settings: ProfileSettings = { ...DEFAULT_PROFILE_SETTINGS, historyDays: 14, minSamples: 2 };

let sim: SimServerHandle;
let cloud: SimCloud;
let session: CloudSession;

beforeAll(async () => {
  const hosts = [host('c1'), host('c2')].map((h) => ({ ...h, aggregates: ['gold'] }));
  const servers = Array.from({ length: 6 }, (_, i) => server(i + 1, i % 2 === 0 ? 'c1' : 'c2', 2048));
  for (const s of servers) s.load = { cpu: 2, memoryMB: 1024 };
  cloud = new SimCloud(snapshot([...hosts, { ...host('c3'), aggregates: [] }], servers), {
    clock: new SimClock({ speed: 0, startMs: START }),
    load: dailyLoadModel(staticLoadModel()),
  });
  sim = await startSimServer({ cloud, password: 'pw', port: 0 });
  session = await openSession({
    config: simAdminConfig(sim.authUrl, 'pw', 'test'),
    prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
  });
});
afterAll(() => sim.close());

const now = () => new Date(cloud.clock.nowMs());

async function record(): Promise<{
  snap: Snapshot;
  targets: NonNullable<Awaited<ReturnType<typeof recordSnapshot>>['loadTargets']>;
}> {
  const r = await recordSnapshot(session, { now });
  if (!r.loadTargets) throw new Error('no load targets');
  return { snap: r.snapshot, targets: r.loadTargets };
}

describe('load profiles from the simulator', () => {
  it('records, keeps, refreshes daily and measures the forecast error', async () => {
    const store = memoryProfileStore();
    const refresher = new ProfileRefresher(session.prometheus!, store, settings, DEFAULT_METRICS_POLICY, now);

    const first = await record();
    const round = await refresher.attach(first.snap, first.targets);
    expect(round.refreshed.sort()).toEqual(['_unassigned_', 'gold']);
    expect(round.calls).toBe(2); // one range query for cpu, one for memory, for every aggregate
    expect(round.warnings).toEqual([]);
    const p = first.snap.profiles!;
    expect(p.format).toBe('aicerine-profiles/1');
    expect(p.resolution).toBe('hour-of-week');
    expect(p.errors).toBeUndefined();
    // Every server of the snapshot has history; its weekday peak is its own working hour.
    expect(Object.keys(p.servers).sort()).toEqual(first.snap.servers.map((s) => s.id).sort());
    const s1 = first.snap.servers[0]!;
    const cpu = p.servers[s1.id]!.cpu!;
    expect(cpu).toHaveLength(168);
    expect(p.servers[s1.id]!.samples[10]).toBe(2);
    const peak = cpu.slice(0, 24).indexOf(Math.max(...(cpu.slice(0, 24) as number[])));
    const peakFactor = weeklyFactor(s1.id, START / 1000 + peak * 3600);
    expect(peakFactor).toBeCloseTo(1, 1);
    expect(cpu[peak]).toBeCloseTo(2, 1);
    // Saturday at the same hour is lower.
    expect(cpu[5 * 24 + peak]!).toBeLessThan(cpu[peak]! * 0.7);
    // The snapshot with profiles is a valid snapshot.
    expect(parseSnapshot(structuredClone(first.snap)).profiles).toBeDefined();

    // The next cycle an hour later reads nothing.
    cloud.clock.advance(3600);
    const again = await record();
    const quiet = await refresher.attach(again.snap, again.targets);
    expect(quiet).toMatchObject({ refreshed: [], calls: 0 });
    expect(again.snap.profiles!.servers[s1.id]).toEqual(p.servers[s1.id]);

    // A restart: a new refresher on the same store reads nothing either.
    const restarted = new ProfileRefresher(session.prometheus!, store, settings, DEFAULT_METRICS_POLICY, now);
    const afterRestart = await restarted.attach(again.snap, again.targets);
    expect(afterRestart.calls).toBe(0);
    expect(again.snap.profiles!.servers[s1.id]).toEqual(p.servers[s1.id]);

    // A day later: due again; the previous profiles' forecast is judged against the day since.
    cloud.clock.advance(86400);
    const next = await record();
    const daily = await restarted.attach(next.snap, next.targets);
    expect(daily.refreshed.sort()).toEqual(['_unassigned_', 'gold']);
    expect(daily.calls).toBe(2);
    const e = next.snap.profiles!.errors!.gold!;
    // Two hosts, about 25 hourly points each since the last refresh.
    expect(e.hours).toBeGreaterThanOrEqual(40);
    expect(e.meanAbsolute).toBeGreaterThanOrEqual(0);
    // The shape repeats weekly: a weekly profile of it forecasts the next day almost exactly.
    expect(e.meanAbsolute).toBeLessThan(0.02);
    // Current load, held from the last refresh through the day, misses the daily swing: the
    // forecast did better, so a plan may use it.
    expect(e.currentLoadAbsolute).toBeGreaterThan(e.meanAbsolute + 0.01);
    expect(Date.parse(e.from)).toBeGreaterThan(START);
  });
});
