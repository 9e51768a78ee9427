import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { InputError } from '../../src/errors.js';
import { drainFeasibility } from '../../src/planner/drain-feasibility.js';
import { planSnapshot } from '../../src/planner/index.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';
import { policyWith } from '../fixtures/state.js';

const gold = (name: string, spec: Parameters<typeof host>[1] = {}) =>
  host(name, { aggregates: ['gold'], ...spec });

describe('drainFeasibility: can the rest of the aggregate take these hosts’ servers', () => {
  it('yes: every server gets a place, and the placements are a legal drain', () => {
    const snap = cluster(
      [gold('a'), gold('b'), gold('c'), host('x', { aggregates: ['other'] })],
      [server('s1', 'a'), server('s2', 'a'), server('s3', 'b'), server('s4', 'x')],
    );
    const r = drainFeasibility(snap, policyWith(), 'gold', ['a']);
    expect(r.ok).toBe(true);
    expect(r.reasons).toEqual([]);
    expect(r.placements.map((p) => p.server).sort()).toEqual(['s1', 's2']);
    expect(r.placements.every((p) => p.from === 'a' && (p.to === 'b' || p.to === 'c'))).toBe(true);
    // The same drain, planned in mode repair-only once a is disabled, moves the same servers.
    const disabled = structuredClone(snap);
    disabled.hosts[0]!.service = { ...disabled.hosts[0]!.service, status: 'disabled' };
    const policy = policyWith({ mode: 'repair-only', aggregates: ['gold'] });
    const plan = planSnapshot(disabled, policy);
    expect(checkPlan(disabled, plan, { dimensions: policy.dimensions }).violations).toEqual([]);
    expect(plan.aggregates[0]!.moves.map((m) => m.server).sort()).toEqual(['s1', 's2']);
  });

  it('no, for capacity: names the server and the constraint', () => {
    const snap = cluster(
      [gold('a', { vcpus: 16 }), gold('b', { vcpus: 4 })],
      [server('big', 'a', { vcpus: 8 }), server('s2', 'b', { vcpus: 2 })],
    );
    const r = drainFeasibility(snap, policyWith(), 'gold', ['a']);
    expect(r.ok).toBe(false);
    expect(r.reasons).toEqual(['a cannot be drained: no host can take big (1 ruled out by capacity)']);
  });

  it('no, for a hard anti-affinity group: the other host already holds a member', () => {
    const snap = cluster(
      [gold('a'), gold('b')],
      [server('m1', 'a'), server('m2', 'b')],
      [group('web', 'anti-affinity', ['m1', 'm2'])],
    );
    const r = drainFeasibility(snap, policyWith(), 'gold', ['a']);
    expect(r.reasons).toEqual(['a cannot be drained: no host can take m1 (1 ruled out by server-group)']);
  });

  it('no, for the availability zone: the only other host of the zone is drained too', () => {
    const snap = cluster(
      [gold('a', { az: 'z1' }), gold('b', { az: 'z1' }), gold('c', { az: 'z2' })],
      [server('s1', 'a'), server('s2', 'b')],
    );
    expect(drainFeasibility(snap, policyWith(), 'gold', ['a']).ok).toBe(true);
    const both = drainFeasibility(snap, policyWith(), 'gold', ['a', 'b']);
    expect(both.ok).toBe(false);
    expect(both.reasons).toEqual([
      'a cannot be drained: no host can take s1 (1 ruled out by same-zone)',
      'b cannot be drained: no host can take s2 (1 ruled out by same-zone)',
    ]);
  });

  it('no, for servers that cannot move, and for a host that is down', () => {
    const snap = cluster(
      [gold('a'), gold('b'), gold('c', { state: 'down' })],
      [server('local', 'a', { sharedStorage: false }), server('s2', 'c')],
    );
    const r = drainFeasibility(snap, policyWith(), 'gold', ['a', 'c']);
    expect(r.ok).toBe(false);
    expect(r.reasons).toEqual([
      'c is down: its 1 server cannot be live-migrated',
      'a cannot be drained: local stays, local storage (out of live-migration scope)',
    ]);
  });

  it('refuses bad input, naming what was wrong', () => {
    const snap = cluster([gold('a'), host('x', { aggregates: ['other'] })], []);
    expect(() => drainFeasibility(snap, policyWith(), 'gold', ['x', 'nope'])).toThrow(InputError);
    expect(() => drainFeasibility(snap, policyWith(), 'gold', ['x', 'nope'])).toThrow(
      /hosts\[0\]: not in aggregate gold, got "x"[\s\S]*hosts\[1\]: no such host in the snapshot, got "nope"/,
    );
    expect(() => drainFeasibility(snap, policyWith(), 'silver', ['a'])).toThrow(
      /aggregate: no host of the snapshot/,
    );
  });
});
