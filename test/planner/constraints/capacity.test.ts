import { describe, expect, it } from 'vitest';
import { capacity } from '../../../src/planner/constraints/capacity.js';
import { cluster, host, server } from '../../fixtures/cluster.js';
import { ids, stateOf } from '../../fixtures/state.js';

describe('capacity (Placement, with allocation ratios)', () => {
  const cases = [
    { name: 'fits', dest: { vcpus: 8 }, used: 4, ok: true },
    { name: 'exactly full after the move fits', dest: { vcpus: 8 }, used: 6, ok: true },
    { name: 'one vCPU short is refused', dest: { vcpus: 8 }, used: 7, ok: false },
    { name: 'an allocation ratio makes room', dest: { vcpus: 8, ratio: 2 }, used: 14, ok: true },
    { name: 'memory short is refused', dest: { vcpus: 64, ramMB: 8192 }, used: 0, mem: 6144, ok: false },
  ];
  it.each(cases)('$name', ({ dest, used, mem, ok }) => {
    const filler = used > 0 ? [server('f', 'b', { vcpus: used, ramMB: 1024 })] : [];
    const memFiller = mem ? [server('m', 'b', { vcpus: 1, ramMB: mem })] : [];
    const state = stateOf(
      cluster([host('a'), host('b', dest)], [server('s1', 'a'), ...filler, ...memFiller]),
    );
    const { h, s } = ids(state);
    const r = capacity.check(state, s('s1'), h('b'));
    expect(r === null).toBe(ok);
    if (!ok) expect(r?.detail).toMatch(/free, needs/);
  });
});
