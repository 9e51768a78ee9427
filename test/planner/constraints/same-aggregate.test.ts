import { describe, expect, it } from 'vitest';
import { sameAggregate } from '../../../src/planner/constraints/same-aggregate.js';
import { cluster, host, server } from '../../fixtures/cluster.js';
import { ids, stateOf } from '../../fixtures/state.js';

describe('same-aggregate', () => {
  const state = stateOf(
    cluster(
      [
        host('a', { aggregates: ['gold'] }),
        host('b', { aggregates: ['gold'] }),
        host('c', { aggregates: ['silver'] }),
        host('d'),
      ],
      [server('s1', 'a')],
    ),
  );
  const { h, s } = ids(state);
  it.each([
    { to: 'b', ok: true },
    { to: 'c', ok: false },
    { to: 'd', ok: false },
  ])('to $to: ok=$ok', ({ to, ok }) => {
    expect(sameAggregate.check(state, s('s1'), h(to)) === null).toBe(ok);
  });
  it('puts hosts in no aggregate into _unassigned_', () => {
    expect(state.aggregates.map((a) => a.name)).toEqual(['gold', 'silver', '_unassigned_']);
  });
});
