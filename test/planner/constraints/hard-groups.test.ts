import { describe, expect, it } from 'vitest';
import { groupViolations, hardGroups } from '../../../src/planner/constraints/hard-groups.js';
import { cluster, group, host, server } from '../../fixtures/cluster.js';
import { ids, stateOf } from '../../fixtures/state.js';

const hosts = () => [host('a'), host('b'), host('c')];

describe('server-group (hard)', () => {
  const cases = [
    {
      name: 'anti-affinity: onto a host holding a member is refused',
      policy: 'anti-affinity' as const,
      at: ['a', 'b'],
      move: 'a',
      to: 'b',
      ok: false,
    },
    {
      name: 'anti-affinity: onto an empty host passes',
      policy: 'anti-affinity' as const,
      at: ['a', 'b'],
      move: 'a',
      to: 'c',
      ok: true,
    },
    {
      name: 'anti-affinity max 2: a second member is allowed',
      policy: 'anti-affinity' as const,
      max: 2,
      at: ['a', 'b'],
      move: 'a',
      to: 'b',
      ok: true,
    },
    {
      name: 'anti-affinity: leaving a crowded host passes',
      policy: 'anti-affinity' as const,
      at: ['a', 'a'],
      move: 'a',
      to: 'c',
      ok: true,
    },
    {
      name: 'affinity: splitting the group is refused',
      policy: 'affinity' as const,
      at: ['a', 'a'],
      move: 'a',
      to: 'b',
      ok: false,
    },
    {
      name: 'affinity: joining the majority passes',
      policy: 'affinity' as const,
      at: ['a', 'a', 'b'],
      move: 'b',
      to: 'a',
      ok: true,
    },
    {
      name: 'affinity: minority to a new host does not add a violation',
      policy: 'affinity' as const,
      at: ['a', 'a', 'b'],
      move: 'b',
      to: 'c',
      ok: true,
    },
    {
      name: 'soft policies are never vetoes',
      policy: 'soft-anti-affinity' as const,
      at: ['a', 'b'],
      move: 'a',
      to: 'b',
      ok: true,
    },
    {
      name: 'soft affinity is never a veto',
      policy: 'soft-affinity' as const,
      at: ['a', 'a'],
      move: 'a',
      to: 'b',
      ok: true,
    },
  ];
  it.each(cases)('$name', ({ policy, max, at, move, to, ok }) => {
    const servers = at.map((hn, i) => server(`m${i}`, hn));
    const state = stateOf(
      cluster(hosts(), servers, [
        group(
          'g',
          policy,
          servers.map((v) => v.id),
          max,
        ),
      ]),
    );
    const { h, s } = ids(state);
    const mover = servers.find((v) => v.host === move)!;
    expect(hardGroups.check(state, s(mover.id), h(to)) === null).toBe(ok);
  });

  it.each([
    { policy: 'anti-affinity' as const, at: ['a', 'a', 'a', 'b'], max: undefined, violations: 2 },
    { policy: 'anti-affinity' as const, at: ['a', 'a', 'a', 'b'], max: 2, violations: 1 },
    { policy: 'affinity' as const, at: ['a', 'b', 'c'], max: undefined, violations: 2 },
    { policy: 'affinity' as const, at: ['a', 'a', 'b'], max: undefined, violations: 1 },
  ])('counts $violations violations for $policy on $at', ({ policy, at, max, violations }) => {
    const servers = at.map((hn, i) => server(`m${i}`, hn));
    const state = stateOf(
      cluster(hosts(), servers, [
        group(
          'g',
          policy,
          servers.map((v) => v.id),
          max,
        ),
      ]),
    );
    expect(groupViolations(state.groups[0]!)).toBe(violations);
  });
});
