import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatPlan } from '../../src/cli/format-plan.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { cluster, host, server } from '../fixtures/cluster.js';

const EXAMPLE = resolve(import.meta.dirname, '../../examples/small-cluster.json');

describe('the readable plan', () => {
  it('says "1 move in 1 wave" and "1 aggregate"', () => {
    const snap = cluster(
      [host('a', { aggregates: ['gold'], status: 'disabled' }), host('b', { aggregates: ['gold'] })],
      [server('s1', 'a')],
    );
    const text = formatPlan(planSnapshot(snap, DEFAULT_POLICY));
    expect(text).toContain(': 1 move in 1 aggregate,');
    expect(text).toContain('== gold: 1 move in 1 wave (');
  });

  it('quotes the imbalance in step order: each spread step starts where the step before it ended', () => {
    const snapshot = parseSnapshot(JSON.parse(readFileSync(EXAMPLE, 'utf8')));
    const plan = planSnapshot(snapshot, DEFAULT_POLICY);
    let pairs = 0;
    for (const agg of plan.aggregates) {
      for (let i = 1; i < agg.moves.length; i++) {
        const prev = /imbalance (\d+\.\d{4}) -> (\d+\.\d{4})/.exec(agg.moves[i - 1]!.reason);
        const cur = /imbalance (\d+\.\d{4}) -> (\d+\.\d{4})/.exec(agg.moves[i]!.reason);
        if (!prev || !cur) continue;
        expect(cur[1], `${agg.name} step ${agg.moves[i]!.step}`).toBe(prev[2]);
        pairs++;
      }
    }
    expect(pairs).toBeGreaterThan(10);
  });

  it('shows the gap to the lower bound, and calls a bound ten times below the result weak', () => {
    const snap = cluster(
      ['a', 'b', 'c'].map((n) => host(n, { aggregates: ['gold'] })),
      ['s1', 's2', 's3'].map((id) => server(id, 'a', { cpu: 3 })),
    );
    const plan = planSnapshot(snap, { ...DEFAULT_POLICY, budget: { maxMoves: 1 } });
    expect(plan.aggregates[0]!.after.imbalance).toBeGreaterThan(0.01);
    const after = plan.aggregates[0]!.after.imbalance;
    const gap = (bound: number) =>
      formatPlan({ ...plan, stats: { ...plan.stats, 'imbalanceLowerBound:gold': bound } })
        .split('\n')
        .find((l) => l.includes('gap:'))!
        .trim();
    expect(gap(after / 2)).toBe(
      `gap: no plan of 1 move can go below imbalance ${(after / 2).toFixed(4)} (a lower bound); this one ends at ${after.toFixed(4)}, ${(after - after / 2).toFixed(4)} above it`,
    );
    expect(gap(after / 20)).toBe(
      `gap: no plan of 1 move goes below ${(after / 20).toFixed(4)}, a weak bound here (after ${after.toFixed(4)})`,
    );
    expect(gap(0)).toMatch(/^gap: no useful lower bound with 1 move/);
  });
});
