import { describe, expect, it } from 'vitest';
import { aggregateOutcome, checkPlan } from '../../src/checker/index.js';
import { buildWorld } from '../../src/checker/world.js';
import type { Plan } from '../../src/model/plan.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import type { DimensionDef } from '../../src/policy/types.js';
import { host, move, plan, server, snapshot } from './fixtures.js';

// Physical capacity 10 cores and 1000 MiB (1100 - 100 reserved) on every host.
const spec = { vcpus: 10, ramMB: 1100, reservedMB: 100 };
// a: no measured load, so x (2 cores, 300 MiB) + y (no load: 0 cores, flavor 100 MiB) = 2 / 400.
// b: measured 6 / 800, holding z (1 / 200). c: disabled, so left out however loaded.
function cluster(): Snapshot {
  return snapshot(
    [
      host('a', spec),
      host('b', { ...spec, load: { cpu: 6, memoryMB: 800 } }),
      host('c', { ...spec, status: 'disabled', load: { cpu: 9, memoryMB: 900 } }),
    ],
    [
      server('x', 'a', { vcpus: 1, ramMB: 300, load: { cpu: 2, memoryMB: 300 } }),
      server('y', 'a', { vcpus: 1, ramMB: 100 }),
      server('z', 'b', { vcpus: 1, ramMB: 256, load: { cpu: 1, memoryMB: 200 } }),
    ],
  );
}

const outcome = (snap: Snapshot, _plan: Plan, where: Record<string, string>, dims?: DimensionDef[]) =>
  aggregateOutcome(
    buildWorld(snap),
    'gold',
    (id) => where[id] ?? snap.servers.find((s) => s.id === id)?.host,
    dims ?? [
      { name: 'cpu', weight: 0.5, load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' },
      {
        name: 'memory',
        weight: 0.5,
        load: 'memoryMB',
        capacity: 'MEMORY_MB',
        missingServerLoad: 'flavor-ram',
      },
    ],
  );

describe('stats recomputation', () => {
  const snap = cluster();
  const p = plan(snap, { gold: [] });

  it('before: utilization over up and enabled hosts, population stddev, weighted', () => {
    const { before } = outcome(snap, p, {});
    // cpu 0.2, 0.6: mean 0.4, stddev 0.2; memory 0.4, 0.8: mean 0.6, stddev 0.2.
    expect(before.imbalance).toBeCloseTo(0.2, 12);
    expect(before.dimensions.cpu).toEqual({
      stddev: expect.closeTo(0.2, 12),
      max: 0.6,
      mean: expect.closeTo(0.4, 12),
    });
    expect(before.dimensions.memory).toEqual({
      stddev: expect.closeTo(0.2, 12),
      max: 0.8,
      mean: expect.closeTo(0.6, 12),
    });
  });

  it('after: measured load minus servers that left plus servers that arrived', () => {
    const { after } = outcome(snap, p, { z: 'a' });
    // a 3 / 600, b 5 / 600: cpu 0.3, 0.5 (stddev 0.1), memory 0.6, 0.6 (stddev 0).
    expect(after.imbalance).toBeCloseTo(0.05, 12);
    expect(after.dimensions.cpu?.max).toBeCloseTo(0.5, 12);
    expect(after.dimensions.memory?.stddev).toBeCloseTo(0, 12);
  });

  it('hostsFreed: hosts that held servers and hold none at the end', () => {
    expect(outcome(snap, p, { x: 'b', y: 'b' }).hostsFreed).toEqual(['a']);
    expect(outcome(snap, p, { x: 'b' }).hostsFreed).toEqual([]);
  });

  it('uses the dimensions and weights it is given', () => {
    const cpuOnly: DimensionDef[] = [
      { name: 'cpu', weight: 1, load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' },
    ];
    const { before } = outcome(snap, p, {}, cpuOnly);
    expect(before.imbalance).toBeCloseTo(0.2, 12);
    expect(Object.keys(before.dimensions)).toEqual(['cpu']);
  });

  it('a plan reporting these numbers by hand passes', () => {
    const handwritten: Plan = {
      ...plan(snap, { gold: [move(1, 1, 'z', 'b', 'a')] }),
    };
    const [gold] = handwritten.aggregates;
    if (!gold) throw new Error('fixture has no aggregate');
    gold.before = {
      imbalance: 0.2,
      dimensions: { cpu: { stddev: 0.2, max: 0.6, mean: 0.4 }, memory: { stddev: 0.2, max: 0.8 } },
    };
    gold.after = {
      imbalance: 0.05,
      dimensions: { cpu: { stddev: 0.1, max: 0.5 }, memory: { stddev: 0, max: 0.6 } },
    };
    expect(checkPlan(snap, handwritten).violations).toEqual([]);
  });
});
