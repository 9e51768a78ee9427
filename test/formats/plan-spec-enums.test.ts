// Plans are read by tools outside Aicerine, so the enumerated fields of "aicerine-plan/1" hold only
// the spec's values, whatever the policy: our additions live in added fields (softGroup,
// repairOnly). The lists below are copied from ../shared/spec/formats.md ("Plan"), which a
// checkout may lack, so they are not read from it; they must never be taken from src/model/plan.ts,
// or a new value there would pass.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/formats/plan-file.js';
import { MOVE_PHASES, PLAN_MODES, type Plan } from '../../src/model/plan.js';
import { planSnapshot } from '../../src/planner/index.js';
import { POLICY_MODES, type PolicyMode } from '../../src/policy/types.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';
import { build, shape } from '../fixtures/random-cluster.js';
import { policyWith } from '../fixtures/state.js';

// formats.md: `"mode": "spread",  // spread | pack` and `"phase": "evacuate",  // evacuate | affinity | spread | pack`.
const SPEC_MODES = ['spread', 'pack'];
const SPEC_PHASES = ['evacuate', 'affinity', 'spread', 'pack'];

/** What a reader of /1 sees, counted so the test knows it saw every case it claims to cover. */
interface Seen {
  modes: Map<string, number>;
  phases: Map<string, number>;
  softGroupMoves: number;
  repairOnlyPlans: number;
}

function expectSpecEnums(plan: Plan, seen: Seen): void {
  // Through JSON, as a file, the --json output, the API and the store's plan_json carry it.
  const doc = JSON.parse(JSON.stringify(plan)) as Record<string, unknown> & Plan;
  expect(SPEC_MODES).toContain(doc.mode);
  seen.modes.set(doc.mode, (seen.modes.get(doc.mode) ?? 0) + 1);
  if (doc.repairOnly === true) seen.repairOnlyPlans++;
  for (const m of doc.aggregates.flatMap((a) => a.moves)) {
    expect(SPEC_PHASES).toContain(m.phase);
    seen.phases.set(m.phase, (seen.phases.get(m.phase) ?? 0) + 1);
    if (m.softGroup === true) {
      expect(m.phase).toBe('affinity');
      seen.softGroupMoves++;
    }
  }
  // Our own reader takes back what we wrote.
  expect(parsePlan(doc)).toEqual(doc);
}

const newSeen = (): Seen => ({ modes: new Map(), phases: new Map(), softGroupMoves: 0, repairOnlyPlans: 0 });

describe('plans keep to the enumerations of aicerine-plan/1', () => {
  it('the model offers exactly the spec values; the policy alone adds repair-only', () => {
    expect([...PLAN_MODES]).toEqual(SPEC_MODES);
    expect([...MOVE_PHASES]).toEqual(SPEC_PHASES);
    expect([...POLICY_MODES]).toEqual([...SPEC_MODES, 'repair-only']);
  });

  it('on random clusters with hard and soft groups and disabled hosts, in every policy mode', () => {
    const seen = newSeen();
    fc.assert(
      fc.property(
        shape,
        fc.constantFrom<PolicyMode>(...POLICY_MODES),
        fc.integer({ min: 0, max: 12 }),
        (s, mode, n) =>
          expectSpecEnums(planSnapshot(build(s, true), policyWith({ mode, budget: { maxMoves: n } })), seen),
      ),
      { numRuns: 300, seed: 19 },
    );
    for (const mode of SPEC_MODES) expect(seen.modes.get(mode) ?? 0).toBeGreaterThan(50);
    for (const phase of SPEC_PHASES) expect(seen.phases.get(phase) ?? 0).toBeGreaterThan(3);
    expect(seen.repairOnlyPlans).toBeGreaterThan(50);
  });

  it('on synthetic clusters, with soft-group moves among them', () => {
    const seen = newSeen();
    for (const seed of [1, 2]) {
      const snap = synthesizeSnapshot({
        hosts: 30,
        servers: 600,
        groups: 40,
        seed,
        aggregates: 2,
        disabled: 2,
      });
      for (const mode of POLICY_MODES)
        expectSpecEnums(planSnapshot(snap, policyWith({ mode, budget: { maxMoves: 60 } })), seen);
    }
    // A pair of balanced hosts whose only reason to move is a stacked soft-anti-affinity group.
    const stacked = cluster(
      [host('a'), host('b')],
      [
        server('w1', 'a', { vcpus: 1, cpu: 1, memMB: 2048 }),
        server('w2', 'a', { vcpus: 1, cpu: 1, memMB: 2048 }),
        server('b1', 'b', { vcpus: 1, cpu: 1, memMB: 2048 }),
        server('b2', 'b', { vcpus: 1, cpu: 1, memMB: 2048 }),
      ],
      [group('web', 'soft-anti-affinity', ['w1', 'w2'])],
    );
    for (const mode of POLICY_MODES) expectSpecEnums(planSnapshot(stacked, policyWith({ mode })), seen);
    expect(seen.softGroupMoves).toBeGreaterThan(0);
    expect(seen.repairOnlyPlans).toBe(3);
    for (const phase of SPEC_PHASES) expect(seen.phases.get(phase) ?? 0).toBeGreaterThan(0);
  });
});
