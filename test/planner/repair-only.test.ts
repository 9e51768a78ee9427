// Mode repair-only: a cluster that keeps every rule gets an empty plan; one that breaks rules gets
// moves of the rule breakers only (servers on disabled hosts, members of broken hard groups),
// as few as an exact search finds, and every plan passes the independent checker.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { formatPlan } from '../../src/cli/format-plan.js';
import type { Plan } from '../../src/model/plan.js';
import type { ServerGroup, Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { compilePolicy } from '../../src/policy/load.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';
import { applyPlan, fewestRepairMoves, ruleBreakers, rulesHold } from '../fixtures/repair-rules.js';
import { policyWith } from '../fixtures/state.js';

const repairOnly = (maxMoves = 1000) => policyWith({ mode: 'repair-only', budget: { maxMoves } });

function planChecked(snap: Snapshot, maxMoves = 1000): Plan {
  const policy = repairOnly(maxMoves);
  const plan = planSnapshot(snap, policy);
  expect(checkPlan(snap, plan, { dimensions: policy.dimensions, maxMoves }).violations).toEqual([]);
  return plan;
}

/** A split affinity group with a member on a disabled host: where evacuating first costs a move. */
function brokenAffinityOnDisabledHost(snap: Snapshot): boolean {
  const at = (id: string) => snap.servers.find((s) => s.id === id)!.host;
  const disabled = new Set(snap.hosts.filter((h) => h.service.status === 'disabled').map((h) => h.name));
  return snap.serverGroups.some(
    (g) =>
      g.policy === 'affinity' &&
      new Set(g.members.map(at)).size > 1 &&
      g.members.some((m) => disabled.has(at(m))),
  );
}

const movesOf = (plan: Plan) => plan.aggregates.flatMap((a) => a.moves);

interface TinyShape {
  hosts: { disabled: boolean; down: boolean; az: number; agg: number }[];
  servers: { host: number; vcpus: number; ramGB: number; local: boolean; cpu: number }[];
  groups: { policy: ServerGroup['policy']; max: number; members: number[] }[];
}

/** A handful of hosts and servers, so the exact search stays small; `roomy`: capacity never binds. */
const tiny = (roomy: boolean, maxHosts: number, maxServers: number): fc.Arbitrary<TinyShape> =>
  fc.record({
    hosts: fc.array(
      fc.record({
        disabled: fc.integer({ min: 0, max: 2 }).map((x) => x === 0),
        down: fc.integer({ min: 0, max: 12 }).map((x) => x === 0),
        az: fc.integer({ min: 0, max: 3 }).map((x) => (x === 0 ? 1 : 0)),
        agg: roomy ? fc.constant(0) : fc.integer({ min: 0, max: 1 }),
      }),
      { minLength: 2, maxLength: maxHosts },
    ),
    servers: fc.array(
      fc.record({
        host: fc.nat(),
        vcpus: fc.constantFrom(1, 2, 4),
        ramGB: fc.constantFrom(1, 2, 4),
        local: fc.integer({ min: 0, max: 7 }).map((x) => x === 0),
        cpu: fc.double({ min: 0, max: 2, noNaN: true }),
      }),
      { maxLength: maxServers },
    ),
    groups: fc.array(
      fc.record({
        policy: fc.constantFrom(
          'affinity',
          'affinity',
          'anti-affinity',
          'anti-affinity',
          'soft-affinity',
          'soft-anti-affinity',
        ) as fc.Arbitrary<ServerGroup['policy']>,
        max: fc.constantFrom(1, 1, 2),
        members: fc.uniqueArray(fc.nat({ max: maxServers - 1 }), { minLength: 2, maxLength: 4 }),
      }),
      { maxLength: 3 },
    ),
  });

function buildTiny(s: TinyShape): Snapshot {
  const hosts = s.hosts.map((h, i) =>
    host(`h${i}`, {
      vcpus: 8,
      ratio: roomyRatio(s),
      ramMB: 16384,
      az: `az${h.az}`,
      aggregates: [`agg${h.agg}`],
      status: h.disabled ? 'disabled' : 'enabled',
      state: h.down ? 'down' : 'up',
    }),
  );
  const servers = s.servers.map((v, i) =>
    server(`s${i}`, `h${v.host % hosts.length}`, {
      vcpus: v.vcpus,
      ramMB: v.ramGB * 1024,
      cpu: v.cpu,
      sharedStorage: !v.local,
    }),
  );
  const ids = new Set(servers.map((v) => v.id));
  const taken = new Set<string>();
  const groups = s.groups
    .map((g, gi) => {
      const members = g.members.map((m) => `s${m}`).filter((m) => ids.has(m) && !taken.has(m));
      for (const m of members) taken.add(m);
      return group(`g${gi}`, g.policy, members, g.policy === 'anti-affinity' ? g.max : undefined);
    })
    .filter((g) => g.members.length > 0);
  return cluster(hosts, servers, groups);
}

// Roomy clusters get a VCPU ratio that no handful of servers can fill; tight ones a real 1.
const roomyRatio = (s: TinyShape) => (s.hosts.every((h) => h.agg === 0) && s.servers.length <= 7 ? 16 : 1);

describe('mode repair-only', () => {
  it('a cluster that keeps every rule gets an empty plan', () => {
    let kept = 0;
    fc.assert(
      fc.property(tiny(false, 6, 14), (shape) => {
        const snap = buildTiny(shape);
        if (!rulesHold(snap)) return;
        kept++;
        expect(movesOf(planChecked(snap))).toEqual([]);
      }),
      { numRuns: 400, seed: 3 },
    );
    expect(kept).toBeGreaterThan(60);
  });

  it('moves only rule breakers, and no more of them than the exact search needs', () => {
    const seen = { minimal: 0, unreachable: 0, affinityWithDisabled: 0 };
    fc.assert(
      fc.property(tiny(true, 4, 7), (shape) => {
        const snap = buildTiny(shape);
        const plan = planChecked(snap);
        const breakers = ruleBreakers(snap);
        for (const m of movesOf(plan))
          expect(breakers.has(m.server), `${m.server} breaks nothing`).toBe(true);
        const fewest = fewestRepairMoves(snap);
        const after = applyPlan(snap, plan);
        if (fewest === null) {
          // No legal sequence repairs everything: the plan says what stays broken.
          expect(rulesHold(after)).toBe(false);
          expect(plan.aggregates.flatMap((a) => a.unresolved).length).toBeGreaterThan(0);
          seen.unreachable++;
          return;
        }
        expect(rulesHold(after)).toBe(true);
        expect(movesOf(plan)).toHaveLength(fewest);
        if (fewest > 0) seen.minimal++;
        if (fewest > 0 && brokenAffinityOnDisabledHost(snap)) seen.affinityWithDisabled++;
      }),
      { numRuns: 600, seed: 11 },
    );
    // The property is worth something only if both outcomes occur often.
    expect(seen.minimal).toBeGreaterThan(50);
    expect(seen.unreachable).toBeGreaterThan(20);
    expect(seen.affinityWithDisabled).toBeGreaterThan(5);
  });

  it('on tight clusters moves only rule breakers, and never balances', () => {
    fc.assert(
      fc.property(tiny(false, 7, 16), (shape) => {
        const snap = buildTiny(shape);
        const plan = planChecked(snap);
        const breakers = ruleBreakers(snap);
        for (const m of movesOf(plan)) {
          expect(breakers.has(m.server)).toBe(true);
          expect(['evacuate', 'affinity']).toContain(m.phase);
          expect(m.softGroup).toBeUndefined();
        }
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('on synthetic clusters: repairs, then an empty plan once the repairs are made', () => {
    for (const seed of [1, 2, 3, 4]) {
      const snap = synthesizeSnapshot({
        hosts: 30,
        servers: 700,
        groups: 25,
        seed,
        aggregates: 2,
        disabled: 2,
      });
      const plan = planChecked(snap);
      const breakers = ruleBreakers(snap);
      expect(movesOf(plan).length).toBeGreaterThan(0);
      for (const m of movesOf(plan)) expect(breakers.has(m.server)).toBe(true);
      // What the plan could not do stays unresolvable: planning again on the result moves nothing.
      const after = applyPlan(snap, plan);
      expect(movesOf(planChecked(after))).toEqual([]);
      if (plan.aggregates.every((a) => a.unresolved.length === 0)) expect(rulesHold(after)).toBe(true);
    }
  });

  it('gathers a split affinity group with its member on a disabled host in one move each', () => {
    const snap = cluster(
      [host('a', { status: 'disabled' }), host('b'), host('c')],
      [server('s1', 'a'), server('s2', 'b'), server('s3', 'b'), server('s4', 'c'), server('s5', 'c')],
      [group('g', 'affinity', ['s1', 's2', 's3'])],
    );
    const plan = planChecked(snap);
    // s1 joins its group on b (an evacuation anywhere else would leave the group split).
    expect(movesOf(plan).map((m) => [m.server, m.to])).toEqual([['s1', 'b']]);
    expect(movesOf(plan)[0]!.phase).toBe('affinity');
  });

  it('never moves for balance or soft groups, even on a badly balanced cluster', () => {
    const snap = cluster(
      [host('a'), host('b')],
      [1, 2, 3, 4, 5, 6].map((i) => server(`s${i}`, 'a', { cpu: 2 })),
      [group('soft', 'soft-anti-affinity', ['s1', 's2'])],
    );
    expect(movesOf(planChecked(snap))).toEqual([]);
    expect(movesOf(planSnapshot(snap, policyWith()))).not.toEqual([]);
  });

  it('writes its plan to aicerine-plan/1 as mode spread, flagged repairOnly', () => {
    const snap = cluster(
      [host('a', { status: 'disabled' }), host('b')],
      [server('s1', 'a'), server('s2', 'b')],
    );
    const plan = planChecked(snap);
    expect(plan.mode).toBe('spread');
    expect(plan.repairOnly).toBe(true);
    expect(formatPlan(plan)).toMatch(/^Plan \(repair-only\) /);
    expect(planSnapshot(snap, policyWith()).repairOnly).toBeUndefined();
  });

  it('the checker holds a plan flagged repairOnly to the rules: balance and soft-group moves are needless', () => {
    const unbalanced = cluster(
      [host('a'), host('b')],
      [1, 2, 3, 4, 5, 6].map((i) => server(`s${i}`, 'a', { cpu: 2 })),
    );
    const spreadPlan = planSnapshot(unbalanced, policyWith());
    expect(spreadPlan.aggregates[0]!.moves.length).toBeGreaterThan(0);
    const dimensions = policyWith().dimensions;
    expect(checkPlan(unbalanced, spreadPlan, { dimensions }).violations).toEqual([]);
    const flagged = checkPlan(unbalanced, { ...spreadPlan, repairOnly: true }, { dimensions }).violations;
    expect(flagged.map((v) => v.code)).toEqual(
      spreadPlan.aggregates[0]!.moves.map(() => 'repair-only-needless-move'),
    );

    // A move the rules demand (s1 leaves a disabled host to join its group) is needless once it
    // says it was made for a soft group: repair-only never weighs soft rules.
    const snap = cluster(
      [host('a', { status: 'disabled' }), host('b'), host('c')],
      [server('s1', 'a'), server('s2', 'b'), server('s3', 'b')],
      [group('g', 'affinity', ['s1', 's2', 's3'])],
    );
    const plan = planChecked(snap);
    plan.aggregates[0]!.moves[0]!.softGroup = true;
    const all = checkPlan(snap, plan, { dimensions }).violations;
    // The mutation also makes its hard-group label untrue, which has its own code (test/checker):
    // this test is about repair-only's.
    expect(new Set(all.map((v) => v.code))).toEqual(
      new Set(['repair-only-needless-move', 'mandatory-mislabelled']),
    );
    const found = all.filter((v) => v.code === 'repair-only-needless-move');
    expect(found.map((v) => [v.code, v.step])).toEqual([['repair-only-needless-move', 1]]);
    expect(found[0]!.detail).toMatch(/soft server group \(softGroup: true\)/);
  });

  it('is selected by the policy file key mode', () => {
    expect(compilePolicy({ mode: 'repair-only' }).mode).toBe('repair-only');
  });
});
