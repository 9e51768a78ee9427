import { describe, expect, it } from 'vitest';
import { sameZone } from '../../../src/planner/constraints/same-zone.js';
import { cluster, host, server } from '../../fixtures/cluster.js';
import { ids, stateOf } from '../../fixtures/state.js';

describe('same-zone', () => {
  const state = stateOf(
    cluster(
      [host('a', { az: 'az1' }), host('b', { az: 'az1' }), host('c', { az: 'az2' })],
      [server('s1', 'a')],
    ),
  );
  const { h, s } = ids(state);
  it.each([
    { to: 'b', ok: true },
    { to: 'c', ok: false },
  ])('to $to: ok=$ok', ({ to, ok }) => {
    const r = sameZone.check(state, s('s1'), h(to));
    expect(r === null).toBe(ok);
    if (!ok) expect(r?.detail).toContain('az2');
  });
});
