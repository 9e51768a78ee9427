import { describe, expect, it } from 'vitest';
import { notSource } from '../../../src/planner/constraints/not-source.js';
import { cluster, host, server } from '../../fixtures/cluster.js';
import { ids, stateOf } from '../../fixtures/state.js';

describe('not-source', () => {
  const state = stateOf(cluster([host('a'), host('b')], [server('s1', 'a')]));
  const { h, s } = ids(state);
  it.each([
    { to: 'a', ok: false },
    { to: 'b', ok: true },
  ])('to $to: ok=$ok', ({ to, ok }) => {
    expect(notSource.check(state, s('s1'), h(to)) === null).toBe(ok);
  });
});
