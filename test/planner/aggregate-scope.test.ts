// The policy's aggregate list selects which aggregates are planned and nothing else: on random
// clusters, random selections (typos and `_unassigned_` included) never yield a move across
// aggregates, by the snapshot's own membership, and the checker agrees.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { InputError } from '../../src/errors.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { aggregateScope } from '../../src/policy/aggregate-scope.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { policyWith } from '../fixtures/state.js';

const UNASSIGNED = '_unassigned_';

const world = fc.record({
  seed: fc.integer({ min: 1, max: 1000 }),
  aggregates: fc.integer({ min: 1, max: 4 }),
  disabled: fc.integer({ min: 0, max: 3 }),
  /** Hosts taken out of every aggregate, so `_unassigned_` has members. */
  loose: fc.uniqueArray(fc.nat({ max: 15 }), { maxLength: 4 }),
  mode: fc.constantFrom('spread' as const, 'pack' as const),
});

function build(w: { seed: number; aggregates: number; disabled: number; loose: number[] }): Snapshot {
  const snap = synthesizeSnapshot({
    hosts: 16,
    servers: 220,
    groups: 12,
    seed: w.seed,
    aggregates: w.aggregates,
    disabled: w.disabled,
  });
  snap.hosts.forEach((h, i) => {
    if (w.loose.includes(i)) h.aggregates = [];
  });
  return snap;
}

const membership = (snap: Snapshot, hostName: string): string[] => {
  const h = snap.hosts.find((x) => x.name === hostName)!;
  return h.aggregates.length > 0 ? h.aggregates : [UNASSIGNED];
};

describe('aggregate selection', () => {
  it('never moves a server across aggregates, whatever the policy selects', () => {
    fc.assert(
      fc.property(
        world,
        fc.subarray(['agg-1', 'agg-2', 'agg-3', 'agg-4', UNASSIGNED]),
        fc.option(fc.constantFrom('agg-9', 'agg1', 'AGG-1', 'gold', ' agg-1')),
        (w, selected, typo) => {
          const snap = build(w);
          const known = new Set(snap.hosts.flatMap((h) => membership(snap, h.name)));
          const aggregates = typo === null ? selected : [...selected, typo];
          const policy = policyWith({ aggregates, mode: w.mode });
          const unknown = aggregates.filter((a) => !known.has(a));
          if (unknown.length > 0) {
            expect(() => planSnapshot(snap, policy)).toThrow(InputError);
            try {
              planSnapshot(snap, policy);
            } catch (err) {
              const text = (err as Error).message;
              for (const name of unknown) expect(text).toContain(JSON.stringify(name));
              for (const name of known) expect(text).toContain(name);
            }
            return;
          }
          const plan = planSnapshot(snap, policy);
          const planned = aggregates.length > 0 ? new Set(aggregates) : known;
          for (const agg of plan.aggregates) {
            expect(planned.has(agg.name)).toBe(true);
            for (const m of agg.moves) {
              expect(membership(snap, m.from)).toContain(agg.name);
              expect(membership(snap, m.to)).toContain(agg.name);
            }
          }
          expect(checkPlan(snap, plan).violations).toEqual([]);
        },
      ),
      { numRuns: 60, seed: 42 },
    );
  });

  it('refuses an unknown aggregate, naming it and the known ones', () => {
    const snap = cluster(
      [host('a', { aggregates: ['gold'] }), host('b', { aggregates: ['silver'] }), host('c')],
      [],
    );
    const scope = aggregateScope(snap, { aggregates: ['gold', 'agg-9'] }, 'p.yaml');
    expect(scope.issues).toEqual([
      {
        file: 'p.yaml',
        path: 'aggregates[1]',
        message:
          "no host of the snapshot is in this aggregate (the snapshot's aggregates: _unassigned_, gold, silver)",
        value: 'agg-9',
      },
    ]);
  });

  it('plans _unassigned_ as the hosts in no aggregate only', () => {
    const snap = cluster(
      [
        host('a', { aggregates: [], status: 'disabled' }),
        host('b', { aggregates: ['gold'] }),
        host('c', { aggregates: [] }),
      ],
      [server('s1', 'a')],
    );
    const plan = planSnapshot(snap, policyWith({ aggregates: [UNASSIGNED] }));
    expect(plan.aggregates.map((a) => a.name)).toEqual([UNASSIGNED]);
    expect(plan.aggregates[0]!.moves.map((m) => m.to)).toEqual(['c']);
  });

  it('refuses two planned aggregates sharing a host, naming both', () => {
    const snap = cluster(
      [host('a', { aggregates: ['gold', 'ssd'] }), host('b', { aggregates: ['gold'] })],
      [],
    );
    expect(() => planSnapshot(snap, policyWith())).toThrow(
      /planned aggregates gold and ssd share hosts \(a\)/,
    );
    expect(planSnapshot(snap, policyWith({ aggregates: ['gold'] })).aggregates.map((a) => a.name)).toEqual([
      'gold',
    ]);
  });
});
