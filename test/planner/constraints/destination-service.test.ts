import { describe, expect, it } from 'vitest';
import { destinationService } from '../../../src/planner/constraints/destination-service.js';
import { cluster, host, server } from '../../fixtures/cluster.js';
import { ids, stateOf } from '../../fixtures/state.js';

describe('destination-service', () => {
  const cases = [
    { name: 'up and enabled passes', spec: {}, ok: true },
    { name: 'disabled is refused', spec: { status: 'disabled' as const }, ok: false },
    { name: 'down is refused', spec: { state: 'down' as const }, ok: false },
    { name: 'forced down is refused', spec: { forcedDown: true }, ok: false },
  ];
  it.each(cases)('$name', ({ spec, ok }) => {
    const state = stateOf(cluster([host('a'), host('b', spec)], [server('s1', 'a')]));
    const { h, s } = ids(state);
    const r = destinationService.check(state, s('s1'), h('b'));
    expect(r === null).toBe(ok);
    if (!ok) expect(r?.constraint).toBe('destination-service');
  });
});
