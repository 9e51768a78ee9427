import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { Move } from '../../../src/model/plan.js';
import type { ServerGroup } from '../../../src/model/snapshot.js';
import { type Case, codesOf, group, inGold, move, threeHosts } from '../fixtures.js';

// s1 and s2 start on h1, s3 on h2, h3 is empty.
const withGroup = (g: ServerGroup, moves: Move[]) => () =>
  inGold(moves, { perHostOutgoing: 2 }, threeHosts({}, {}, [g]));

const cases: Case[] = [
  {
    name: 'anti-affinity: joining another member',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's3']), [move(1, 1, 's1', 'h1', 'h2')]),
    want: ['anti-affinity-worse'],
  },
  {
    name: 'anti-affinity: moving apart',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's2']), [move(1, 1, 's1', 'h1', 'h3')]),
    want: [],
  },
  {
    name: 'anti-affinity: a violated group may stay as violated',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's2', 's3']), [move(1, 1, 's3', 'h2', 'h3')]),
    want: [],
  },
  {
    name: 'anti-affinity: max_server_per_host 2 allows a pair',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's3'], 2), [move(1, 1, 's1', 'h1', 'h2')]),
    want: [],
  },
  {
    name: 'anti-affinity: max_server_per_host 2 refuses a third',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's2', 's3'], 2), [move(1, 1, 's3', 'h2', 'h1')]),
    want: ['anti-affinity-worse'],
  },
  {
    name: 'anti-affinity: two moves of one wave crowding the same host, caught at the second step',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's3']), [
      move(1, 1, 's1', 'h1', 'h3'),
      move(2, 1, 's3', 'h2', 'h3'),
    ]),
    want: ['anti-affinity-worse'],
  },
  {
    name: 'anti-affinity: a swap is judged step by step, so its first half counts',
    build: withGroup(group('db', 'anti-affinity', ['s1', 's3']), [
      move(1, 1, 's1', 'h1', 'h2'),
      move(2, 1, 's3', 'h2', 'h1'),
    ]),
    // An undeclared swap in one wave is also a hygiene violation on both hosts.
    want: ['anti-affinity-worse', 'host-send-receive', 'wave-send-receive'],
  },
  {
    name: 'affinity: leaving the group\u2019s host',
    build: withGroup(group('web', 'affinity', ['s1', 's2']), [move(1, 1, 's1', 'h1', 'h3')]),
    want: ['affinity-worse'],
  },
  {
    name: 'affinity: joining the others',
    build: withGroup(group('web', 'affinity', ['s1', 's3']), [move(1, 1, 's3', 'h2', 'h1')]),
    want: [],
  },
  {
    name: 'affinity: moving between two tied hosts changes nothing',
    build: withGroup(group('web', 'affinity', ['s1', 's3']), [move(1, 1, 's1', 'h1', 'h3')]),
    want: [],
  },
  {
    name: 'soft-anti-affinity is never a veto',
    build: withGroup(group('db', 'soft-anti-affinity', ['s1', 's3']), [move(1, 1, 's1', 'h1', 'h2')]),
    want: [],
  },
  {
    name: 'soft-affinity is never a veto',
    build: withGroup(group('web', 'soft-affinity', ['s1', 's2']), [move(1, 1, 's1', 'h1', 'h3')]),
    want: [],
  },
  {
    name: 'members missing from the snapshot are ignored',
    build: withGroup(group('db', 'anti-affinity', ['s1', 'gone']), [move(1, 1, 's1', 'h1', 'h3')]),
    want: [],
  },
];

describe('server groups (guarantee 3)', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('names the group and the counts', () => {
    const {
      snap,
      plan: p,
      options,
    } = withGroup(group('db', 'anti-affinity', ['s1', 's3']), [move(1, 1, 's1', 'h1', 'h2')])();
    const [v] = checkPlan(snap, p, options).violations;
    expect(v).toMatchObject({ constraint: 'server-groups', step: 1, server: 's1', host: 'h2' });
    expect(v?.detail).toBe('anti-affinity group db: violations 0 -> 1 (members: 2 on h2)');
  });
});
