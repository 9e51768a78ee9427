// Property tests: on random clusters every plan passes the independent checker, and spread
// never raises the imbalance when there is nothing to evacuate or repair.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import type { Server, ServerGroup, Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';
import { policyWith } from '../fixtures/state.js';

interface Shape {
  hosts: { vcpus: number; disabled: boolean; az: number; agg: number }[];
  servers: { host: number; vcpus: number; ramGB: number; cpu: number; mem: number; local: boolean }[];
  groups: { policy: ServerGroup['policy']; members: number[] }[];
}

const shape: fc.Arbitrary<Shape> = fc.record({
  hosts: fc.array(
    fc.record({
      vcpus: fc.constantFrom(8, 16, 32),
      disabled: fc.integer({ min: 0, max: 6 }).map((x) => x === 0),
      az: fc.integer({ min: 0, max: 1 }),
      agg: fc.integer({ min: 0, max: 1 }),
    }),
    { minLength: 2, maxLength: 9 },
  ),
  servers: fc.array(
    fc.record({
      host: fc.nat(),
      vcpus: fc.constantFrom(1, 2, 4),
      ramGB: fc.constantFrom(1, 2, 4, 8),
      cpu: fc.double({ min: 0, max: 4, noNaN: true }),
      mem: fc.double({ min: 0.1, max: 1, noNaN: true }),
      local: fc.boolean(),
    }),
    { maxLength: 40 },
  ),
  groups: fc.array(
    fc.record({
      policy: fc.constantFrom(
        'affinity',
        'anti-affinity',
        'soft-affinity',
        'soft-anti-affinity',
      ) as fc.Arbitrary<ServerGroup['policy']>,
      members: fc.uniqueArray(fc.nat({ max: 11 }), { minLength: 2, maxLength: 4 }),
    }),
    { maxLength: 4 },
  ),
});

function build(s: Shape, allowDisabled: boolean): Snapshot {
  const hosts = s.hosts.map((h, i) =>
    host(`h${i}`, {
      vcpus: h.vcpus,
      ratio: 2,
      ramMB: 65536,
      az: `az${h.az}`,
      aggregates: [`agg${h.agg}`],
      status: allowDisabled && h.disabled ? 'disabled' : 'enabled',
    }),
  );
  const used = new Map<number, number>();
  const servers: Server[] = [];
  s.servers.forEach((v, i) => {
    const hi = v.host % hosts.length;
    const cap = hosts[hi]!.inventory.VCPU!.total * 2;
    if ((used.get(hi) ?? 0) + v.vcpus > cap) return;
    used.set(hi, (used.get(hi) ?? 0) + v.vcpus);
    servers.push(
      server(`s${String(i).padStart(2, '0')}`, `h${hi}`, {
        vcpus: v.vcpus,
        ramMB: v.ramGB * 1024,
        cpu: v.cpu,
        memMB: v.mem * v.ramGB * 1024,
        sharedStorage: !v.local,
      }),
    );
  });
  const ids = new Set(servers.map((v) => v.id));
  const taken = new Set<string>();
  const groups = s.groups
    .map((g, gi) => {
      const members = g.members
        .map((m) => `s${String(m).padStart(2, '0')}`)
        .filter((m) => ids.has(m) && !taken.has(m));
      for (const m of members) taken.add(m);
      return group(`g${gi}`, g.policy, members);
    })
    .filter((g) => g.members.length > 0);
  return cluster(hosts, servers, groups);
}

describe('planner properties', () => {
  it('every plan passes the independent checker (spread and pack, with evacuations and repairs)', () => {
    const phases = new Map<string, number>();
    fc.assert(
      fc.property(
        shape,
        fc.constantFrom('spread' as const, 'pack' as const),
        fc.integer({ min: 0, max: 12 }),
        (s, mode, budget) => {
          const snap = build(s, true);
          const policy = policyWith({ mode, budget: { maxMoves: budget } });
          const plan = planSnapshot(snap, policy);
          const result = checkPlan(snap, plan, { dimensions: policy.dimensions, maxMoves: budget });
          expect(result.violations).toEqual([]);
          for (const m of plan.aggregates.flatMap((a) => a.moves))
            phases.set(m.phase, (phases.get(m.phase) ?? 0) + 1);
        },
      ),
      { numRuns: 300, seed: 42 },
    );
    // The property is only worth something if the random clusters exercise every phase.
    for (const phase of ['evacuate', 'affinity', 'spread', 'pack'])
      expect(phases.get(phase) ?? 0).toBeGreaterThan(3);
  });

  it('spread never raises the imbalance when nothing needs evacuating or repairing', () => {
    fc.assert(
      fc.property(shape, (s) => {
        // Soft groups may trade a little balance for fewer soft violations, so none here.
        const snap = build({ ...s, groups: [] }, false);
        const plan = planSnapshot(snap, policyWith());
        for (const agg of plan.aggregates)
          expect(agg.after.imbalance).toBeLessThanOrEqual(agg.before.imbalance + 1e-9);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('plans on synthetic clusters pass the checker', () => {
    for (const seed of [1, 2, 3]) {
      const snap = synthesizeSnapshot({
        hosts: 40,
        servers: 900,
        groups: 30,
        seed,
        aggregates: 2,
        disabled: 2,
      });
      for (const mode of ['spread', 'pack'] as const) {
        const policy = policyWith({ mode, budget: { maxMoves: 80 } });
        const plan = planSnapshot(snap, policy);
        expect(checkPlan(snap, plan, { dimensions: policy.dimensions }).violations).toEqual([]);
      }
    }
  });
});
