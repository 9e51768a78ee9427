// load: forecast — the objective is the imbalance at the horizon's worst forecast slots, capacity
// stays on current Placement usage, and the plan says when and why it planned on current load.
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { serverProfile, TUE_11, weekly, withProfiles } from '../fixtures/profiles.js';
import { policyWith } from '../fixtures/state.js';

const forecastPolicy = (over: Partial<ReturnType<typeof policyWith>> = {}) =>
  policyWith({
    load: 'forecast',
    forecast: { horizonHours: 24, peakSlots: 3, maxError: 0.15 },
    dimensions: [{ name: 'cpu', weight: 1, load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' }],
    threshold: { level: null, mandatoryOnly: false, perMove: 0, perMinute: 0, perGiB: 0 },
    minGain: 0.001,
    ...over,
  });

/**
 * Four hosts, balanced now (Tuesday 01:00): each holds two servers at 1 core. a1 and a2 on h1
 * both peak at 7 cores Tuesday 11:00; the rest stay at 1 core all week.
 */
function nightBalanced(): Snapshot {
  const hosts = ['h1', 'h2', 'h3', 'h4'].map((n) => host(n, { vcpus: 16, aggregates: ['agg'] }));
  const servers = [
    server('a1', 'h1'),
    server('a2', 'h1'),
    server('b1', 'h2'),
    server('b2', 'h2'),
    server('c1', 'h3'),
    server('c2', 'h3'),
    server('d1', 'h4'),
    server('d2', 'h4'),
  ];
  const snap = cluster(hosts, servers);
  snap.takenAt = '2026-12-01T01:00:00Z';
  const flat = serverProfile(weekly(1));
  return withProfiles(snap, {
    a1: serverProfile(weekly(1, { [TUE_11]: 7 })),
    a2: serverProfile(weekly(1, { [TUE_11]: 7 })),
    b1: flat,
    b2: flat,
    c1: flat,
    c2: flat,
    d1: flat,
    d2: flat,
  });
}

describe('planning on a forecast', () => {
  it('moves nothing on current load, and splits the servers that peak together on the forecast', () => {
    const snap = nightBalanced();
    expect(planSnapshot(snap, forecastPolicy({ load: 'current' })).aggregates[0]!.moves).toHaveLength(0);
    const plan = planSnapshot(snap, forecastPolicy());
    const agg = plan.aggregates[0]!;
    expect(agg.moves.length).toBeGreaterThan(0);
    const relief = agg.moves.find((m) => m.from === 'h1')!;
    expect(['a1', 'a2']).toContain(relief.server);
    expect(relief.reason).toMatch(/forecast peak Tue 11:00: cpu 88% → 44%/);
    expect(agg.forecast).toMatchObject({ load: 'forecast', horizonHours: 24, serversOnCurrentLoad: 0 });
    expect(agg.forecast!.peaks.map((p) => p.label)).toContain('Tue 11:00');
    expect(agg.forecast!.imbalanceAfter).toBeLessThan(agg.forecast!.imbalanceBefore);
    // before/after stay on current load, as formats.md defines them.
    expect(agg.before.imbalance).toBe(0);
    expect(checkPlan(snap, plan, { dimensions: forecastPolicy().dimensions }).violations).toEqual([]);
  });

  it('never lets a forecast overfill a host now: capacity stays on Placement usage', () => {
    const snap = nightBalanced();
    // Every other host is full in Placement, and a1 and a2 are larger than any server there, so
    // not even an exchange fits, whatever the forecast says.
    for (const s of snap.servers) if (s.host === 'h1') s.flavor.vcpus = 4;
    for (const h of snap.hosts) if (h.name !== 'h1') h.usage.VCPU = 16;
    const plan = planSnapshot(snap, forecastPolicy());
    expect(plan.aggregates[0]!.moves).toHaveLength(0);
  });

  it('counts the servers that fall back to current load', () => {
    const snap = nightBalanced();
    delete snap.profiles!.servers.d1;
    snap.profiles!.servers.d2 = serverProfile(weekly(1, { [TUE_11]: null }));
    const agg = planSnapshot(snap, forecastPolicy()).aggregates[0]!;
    expect(agg.forecast!.serversOnCurrentLoad).toBe(2);
  });

  it('plans on current load, saying why, without profiles or with too large an error', () => {
    const snap = nightBalanced();
    const error = { meanAbsolute: 0.2, hours: 100, from: '2026-11-15T00:00:00Z', to: '2026-11-29T00:00:00Z' };
    const erring = { ...snap, profiles: { ...snap.profiles!, errors: { agg: error } } };
    const plan = planSnapshot(erring, forecastPolicy());
    expect(plan.aggregates[0]!.moves).toHaveLength(0);
    expect(plan.aggregates[0]!.forecast).toMatchObject({
      load: 'current',
      fallback: 'forecast error 0.200 is above forecast.maxError 0.15',
      error: 0.2,
    });
    const { profiles: _p, ...bare } = snap;
    const none = planSnapshot(bare, forecastPolicy()).aggregates[0]!.forecast!;
    expect(none).toMatchObject({ load: 'current', fallback: 'the snapshot has no load profiles' });
    expect(none.serversOnCurrentLoad).toBe(8);
    // With the error under the limit the forecast is used.
    const fine = {
      ...snap,
      profiles: { ...snap.profiles!, errors: { agg: { ...error, meanAbsolute: 0.05 } } },
    };
    expect(planSnapshot(fine, forecastPolicy()).aggregates[0]!.forecast!.load).toBe('forecast');
  });

  it('is deterministic', () => {
    const snap = nightBalanced();
    expect(planSnapshot(snap, forecastPolicy())).toEqual(planSnapshot(snap, forecastPolicy()));
  });
});

describe('the forecast beyond spread', () => {
  /** nightBalanced with h4 disabled: d1 and d2 must leave it, onto h1, h2 or h3. */
  function maintenance(): Snapshot {
    const snap = nightBalanced();
    const h4 = snap.hosts.find((h) => h.name === 'h4')!;
    h4.service = { ...h4.service, status: 'disabled', disabledReason: 'maintenance' };
    return snap;
  }

  it('repair-only sends an evacuation where the forecast peak has room', () => {
    const snap = maintenance();
    const policy = forecastPolicy({ mode: 'repair-only' });
    const plan = planSnapshot(snap, policy);
    const agg = plan.aggregates[0]!;
    expect(agg.forecast).toMatchObject({ load: 'forecast' });
    expect(agg.forecast!.peaks.map((p) => p.label)).toContain('Tue 11:00');
    expect(agg.moves.map((m) => m.server).sort()).toEqual(['d1', 'd2']);
    // h1 holds the two servers that peak Tuesday 11:00: nothing is sent there.
    for (const m of agg.moves) expect(m.to).not.toBe('h1');
    // On current load h1 looks like any other host and takes one of them.
    const current = planSnapshot(snap, { ...policy, load: 'current' }).aggregates[0]!;
    expect(current.moves.map((m) => m.to)).toContain('h1');
    // Only what the rules demand: a1 and a2 stay together, as repair-only never rebalances.
    expect(agg.moves.every((m) => m.from === 'h4')).toBe(true);
    expect(checkPlan(snap, plan, { dimensions: policy.dimensions }).violations).toEqual([]);
  });

  it('pack plans on the forecast too, and its drains stay on Placement allocation', () => {
    const snap = maintenance();
    const policy = forecastPolicy({ mode: 'pack' });
    const onCurrent = planSnapshot(snap, { ...policy, load: 'current' });
    const plan = planSnapshot(snap, policy);
    const agg = plan.aggregates[0]!;
    expect(agg.forecast).toMatchObject({ load: 'forecast' });
    // The forecast enters no drain decision: the same hosts are freed with the same moves.
    expect(agg.hostsFreed).toEqual(onCurrent.aggregates[0]!.hostsFreed);
    expect(agg.moves.map((m) => [m.server, m.to])).toEqual(
      onCurrent.aggregates[0]!.moves.map((m) => [m.server, m.to]),
    );
    expect(checkPlan(snap, plan, { dimensions: policy.dimensions }).violations).toEqual([]);
  });
});
