import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { aggregateOutcome } from '../../src/checker/stats.js';
import { buildWorld } from '../../src/checker/world.js';
import {
  absorbedChange,
  fingerprintChange,
  loadTolerance,
  planningFingerprint,
} from '../../src/loop/fingerprint.js';
import { measuredBalance } from '../../src/loop/gain.js';
import { AggregateSlices } from '../../src/loop/slices.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';

// Two aggregates; an anti-affinity group and an affinity group each span both.
function twoAggregates() {
  const hosts = [
    ...['a1', 'a2', 'a3', 'a4'].map((n) => host(n, { aggregates: ['gold'], vcpus: 16 })),
    ...['b1', 'b2', 'b3'].map((n) => host(n, { aggregates: ['silver'], vcpus: 16 })),
    host('u1', { vcpus: 16 }),
  ];
  const servers = [
    ...[1, 2, 3, 4, 5, 6].map((i) => server(`g${i}`, 'a1', { cpu: 2 })),
    server('g7', 'a2', { cpu: 1 }),
    server('x1', 'b1', { cpu: 3 }),
    server('x2', 'b1', { cpu: 3 }),
    server('x3', 'b2', { cpu: 1 }),
    server('u', 'u1', { cpu: 1 }),
  ];
  const groups = [group('anti', 'anti-affinity', ['g1', 'x1']), group('aff', 'affinity', ['g2', 'x2'])];
  const snap = cluster(hosts, servers, groups);
  for (const h of snap.hosts) {
    const on = snap.servers.filter((s) => s.host === h.name);
    h.load = { cpu: on.reduce((a, s) => a + (s.load?.cpu ?? 0), 0), memoryMB: 1000 };
  }
  return snap;
}

describe('aggregate slices', () => {
  it("hold the aggregate, its servers, their groups and those groups' other members", () => {
    const snap = twoAggregates();
    const gold = new AggregateSlices(snap).slice('gold');
    expect(gold.hosts.map((h) => h.name)).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
    expect(gold.servers.map((s) => s.id)).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'x1', 'x2']);
    expect(gold.serverGroups.map((g) => g.id)).toEqual(['anti', 'aff']);
    expect(new AggregateSlices(snap).slice('_unassigned_').hosts.map((h) => h.name)).toEqual(['u1']);
  });

  it('plan and check as the whole snapshot does', () => {
    const snap = twoAggregates();
    const slices = new AggregateSlices(snap);
    for (const name of ['gold', 'silver', '_unassigned_']) {
      const policy = { ...DEFAULT_POLICY, aggregates: [name] };
      const whole = planSnapshot(snap, policy);
      const part = planSnapshot(slices.slice(name), policy);
      expect(part).toEqual(whole);
      expect(checkPlan(slices.slice(name), part)).toEqual(checkPlan(snap, whole));
    }
    // Not a vacuous comparison: gold's plan moves servers off its crowded host.
    expect(
      planSnapshot(slices.slice('gold'), { ...DEFAULT_POLICY, aggregates: ['gold'] }).aggregates[0]!.moves
        .length,
    ).toBeGreaterThan(0);
  });
});

describe('planning fingerprint', () => {
  const policy = { ...DEFAULT_POLICY, aggregates: ['gold'] };
  const tol = loadTolerance(policy);
  const fp = (s: ReturnType<typeof twoAggregates>) =>
    planningFingerprint(new AggregateSlices(s).slice('gold'), 'gold', policy);
  const change = (a: ReturnType<typeof twoAggregates>, b: ReturnType<typeof twoAggregates>) =>
    fingerprintChange(fp(a), fp(b), tol);

  it("ignores loads within the tolerance, and another aggregate's changes", () => {
    const a = twoAggregates();
    const b = twoAggregates();
    b.hosts[0]!.load!.memoryMB! += 1;
    b.servers.find((s) => s.id === 'x3')!.flavor.vcpus = 4;
    expect(change(b, a)).toBeNull();
    // Equal objects, not the same ones: compared field by field.
    expect(change(twoAggregates(), a)).toBeNull();
  });

  it('changes with a server, a host, a hold, a group or the policy', () => {
    const base = twoAggregates();
    const moved = twoAggregates();
    moved.servers.find((s) => s.id === 'g7')!.host = 'a3';
    const disabled = twoAggregates();
    disabled.hosts[1]!.service = {
      ...disabled.hosts[1]!.service,
      status: 'disabled',
      disabledReason: 'EVAC',
    };
    const held = twoAggregates();
    held.servers[0]!.metadata = { 'aicerine:hold': 'cooldown until ...' };
    const grouped = twoAggregates();
    grouped.serverGroups[0]!.members.push('g3');
    const resized = twoAggregates();
    resized.servers[1]!.flavor = { ...resized.servers[1]!.flavor, ramMB: 1 };
    expect(change(moved, base)).toMatch(/server g7/);
    expect(change(disabled, base)).toMatch(/host a2 changed/);
    expect(change(held, base)).toMatch(/server g1 changed/);
    expect(change(grouped, base)).toMatch(/server group/);
    expect(change(resized, base)).toMatch(/server g2 changed/);
    const other = planningFingerprint(new AggregateSlices(twoAggregates()).slice('gold'), 'gold', {
      ...policy,
      minGain: policy.minGain * 2,
    });
    expect(fingerprintChange(other, fp(base), tol)).toMatch(/policy/);
  });

  it('sees loads move beyond the tolerance, not within it, even when changed in place', () => {
    expect(tol).toBeCloseTo(DEFAULT_POLICY.spread.targetImbalance / 2);
    const snap = twoAggregates();
    const ref = fp(snap);
    snap.hosts[0]!.load!.cpu! += 16 * tol * 0.9;
    snap.servers[0]!.load!.cpu! += 16 * tol * 0.9;
    expect(fingerprintChange(fp(snap), ref, tol)).toBeNull();
    snap.hosts[0]!.load!.cpu! += 16 * tol * 0.2;
    expect(fingerprintChange(fp(snap), ref, tol)).toMatch(/host a1/);
    const serverFar = twoAggregates();
    serverFar.servers[1]!.load!.cpu! += 16 * tol * 1.1;
    expect(change(serverFar, twoAggregates())).toMatch(/server g2/);
    const lost = twoAggregates();
    delete lost.servers[2]!.load;
    expect(change(lost, twoAggregates())).toMatch(/server g3/);
  });
});

describe('servers booted or deleted since the last plan', () => {
  const policy = { ...DEFAULT_POLICY, aggregates: ['gold'] };
  const tol = loadTolerance(policy);
  const fp = (s: ReturnType<typeof twoAggregates>) =>
    planningFingerprint(new AggregateSlices(s).slice('gold'), 'gold', policy);
  const absorbed = (a: ReturnType<typeof twoAggregates>, b: ReturnType<typeof twoAggregates>) =>
    absorbedChange(fp(a), fp(b), tol, policy.dimensions);
  const booted = (load?: { cpu: number; memoryMB: number }) => {
    const snap = twoAggregates();
    const s = server('n1', 'a2', { vcpus: 1, ramMB: 512 });
    if (load === undefined) delete s.load;
    else s.load = load;
    snap.servers.push(s);
    return snap;
  };

  it('are absorbed while each host moves within the tolerance, measured or not', () => {
    const base = twoAggregates();
    const now = booted({ cpu: 0.1, memoryMB: 256 });
    now.hosts[1]!.load!.cpu! += 0.1;
    expect(fingerprintChange(fp(now), fp(base), tol)).toMatch(/added/);
    expect(absorbed(now, base)).toBeNull();
    const gone = twoAggregates();
    gone.servers.splice(
      gone.servers.findIndex((s) => s.id === 'g7'),
      1,
    );
    expect(absorbed(gone, base)).toBeNull();
    // Without host figures the planner sums the servers': the newcomer's stand-in load counts.
    const unmeasured = (s: ReturnType<typeof twoAggregates>) => {
      for (const h of s.hosts) delete h.load;
      return s;
    };
    expect(absorbed(unmeasured(booted()), unmeasured(twoAggregates()))).toBeNull();
    const big = booted();
    big.servers.at(-1)!.flavor = { ...big.servers.at(-1)!.flavor, ramMB: 65536 * tol * 1.5 };
    expect(absorbed(unmeasured(big), unmeasured(twoAggregates()))).toMatch(/host a2/);
  });

  it('are not absorbed when a host moves beyond the tolerance, or anything else changed', () => {
    const base = twoAggregates();
    const hot = booted({ cpu: 1, memoryMB: 256 });
    hot.hosts[1]!.load!.cpu! += 16 * tol * 1.1;
    expect(absorbed(hot, base)).toMatch(/host a2/);
    const moved = booted({ cpu: 0.1, memoryMB: 256 });
    moved.servers.find((s) => s.id === 'g7')!.host = 'a3';
    expect(absorbed(moved, base)).toMatch(/server g7 changed/);
    const grouped = booted({ cpu: 0.1, memoryMB: 256 });
    grouped.serverGroups[0]!.members.push('n1');
    expect(absorbed(grouped, base)).toMatch(/server group/);
    const disabled = booted({ cpu: 0.1, memoryMB: 256 });
    disabled.hosts[1]!.service = { ...disabled.hosts[1]!.service, status: 'disabled', disabledReason: 'x' };
    expect(absorbed(disabled, base)).toMatch(/host a2 changed/);
    // Placement usage follows the servers that came: not a change in itself.
    const used = booted({ cpu: 0.1, memoryMB: 256 });
    used.hosts[1]!.usage = { ...used.hosts[1]!.usage, VCPU: (used.hosts[1]!.usage.VCPU ?? 0) + 1 };
    expect(absorbed(used, base)).toBeNull();
  });
});

describe('measured balance', () => {
  it("is the checker's before, with measured loads or, without, the servers' sum", () => {
    const snap = twoAggregates();
    delete snap.hosts[1]!.load;
    snap.hosts[2]!.service = { ...snap.hosts[2]!.service, status: 'disabled' };
    for (const name of ['gold', 'silver', '_unassigned_']) {
      const expected = aggregateOutcome(buildWorld(snap), name, () => undefined, DEFAULT_POLICY.dimensions);
      expect(measuredBalance(snap, name, DEFAULT_POLICY.dimensions)).toEqual(expected.before);
    }
    expect(measuredBalance(snap, 'gold', DEFAULT_POLICY.dimensions).imbalance).toBeGreaterThan(0);
  });
});
