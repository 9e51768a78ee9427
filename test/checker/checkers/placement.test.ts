import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
import { type Case, codesOf, host, move, plan, server, snapshot, threeHosts } from '../fixtures.js';

const oneMove = (snap: Snapshot, from = 'h1', to = 'h3', id = 's1', aggregate = 'gold') => ({
  snap,
  plan: plan(snap, { [aggregate]: [move(1, 1, id, from, to)] }),
});

const cases: Case[] = [
  { name: 'a legal move passes', build: () => oneMove(threeHosts()), want: [] },
  {
    name: 'server not on its source',
    build: () => oneMove(threeHosts(), 'h1', 'h3', 's3'),
    want: ['server-not-on-source'],
  },
  { name: 'source down', build: () => oneMove(threeHosts({ h1: { state: 'down' } })), want: ['source-down'] },
  {
    name: 'source forced down',
    build: () => oneMove(threeHosts({ h1: { forcedDown: true } })),
    want: ['source-down'],
  },
  {
    name: 'disabled source may be evacuated',
    build: () => oneMove(threeHosts({ h1: { status: 'disabled' } })),
    want: [],
  },
  {
    name: 'destination down',
    build: () => oneMove(threeHosts({ h3: { state: 'down' } })),
    want: ['destination-not-up'],
  },
  {
    name: 'destination disabled',
    build: () => oneMove(threeHosts({ h3: { status: 'disabled' } })),
    want: ['destination-disabled'],
  },
  {
    name: 'destination forced down',
    build: () => oneMove(threeHosts({ h3: { forcedDown: true } })),
    want: ['destination-forced-down'],
  },
  {
    name: 'destination is the source',
    build: () => oneMove(threeHosts(), 'h1', 'h1'),
    want: ['destination-is-source'],
  },
  {
    name: 'destination in another zone',
    build: () => oneMove(threeHosts({ h3: { az: 'az2' } })),
    want: ['zone-mismatch'],
  },
  {
    name: 'destination in another planned aggregate',
    build: () => {
      const snap = threeHosts({ h3: { aggregates: ['silver'] } });
      return { snap, plan: plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h3')], silver: [] }) };
    },
    want: ['aggregate-mismatch'],
  },
  {
    name: 'destination in no planned aggregate',
    build: () => oneMove(threeHosts({ h3: { aggregates: ['not-planned'] } })),
    want: ['aggregate-mismatch'],
  },
  {
    name: 'move listed under an aggregate its hosts are not in',
    build: () => {
      const snap = threeHosts();
      return { snap, plan: plan(snap, { gold: [], silver: [move(1, 1, 's1', 'h1', 'h3')] }) };
    },
    want: ['host-in-wrong-aggregate'],
  },
  {
    name: 'hosts in no planned aggregate form _unassigned_',
    build: () => {
      const snap = threeHosts({ h1: { aggregates: [] }, h2: { aggregates: ['x'] }, h3: { aggregates: [] } });
      return oneMove(snap, 'h1', 'h3', 's1', '_unassigned_');
    },
    want: [],
  },
  {
    name: 'unknown server',
    build: () => oneMove(threeHosts(), 'h1', 'h3', 'nope'),
    want: ['unknown-server'],
  },
  { name: 'unknown destination', build: () => oneMove(threeHosts(), 'h1', 'h9'), want: ['unknown-host'] },
  {
    name: 'one bad move reports every reason',
    build: () =>
      oneMove(threeHosts({ h3: { state: 'down', status: 'disabled', forcedDown: true, az: 'az2' } })),
    want: ['destination-disabled', 'destination-forced-down', 'destination-not-up', 'zone-mismatch'],
  },
  {
    name: 'a server counts on its destination for later steps',
    build: () => {
      const snap = snapshot([host('h1'), host('h2'), host('h3')], [server('s1', 'h1')]);
      return {
        snap,
        plan: plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h2'), move(2, 2, 's1', 'h2', 'h3')] }),
      };
    },
    // Placement accepts it; hygiene flags the second move of one server and h2 both receiving and sending.
    want: ['host-send-receive', 'server-moved-twice'],
  },
  {
    name: 'a later step that forgets an earlier move',
    build: () => {
      const snap = snapshot([host('h1'), host('h2'), host('h3')], [server('s1', 'h1')]);
      return {
        snap,
        plan: plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h2'), move(2, 2, 's1', 'h1', 'h3')] }),
      };
    },
    want: ['server-moved-twice', 'server-not-on-source'],
  },
];

describe('placement (guarantee 1)', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('names the step, wave, server and host', () => {
    const snap = threeHosts({ h3: { status: 'disabled' } });
    const [v] = checkPlan(snap, plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h3')] })).violations;
    expect(v).toMatchObject({
      code: 'destination-disabled',
      constraint: 'placement',
      aggregate: 'gold',
      step: 1,
      wave: 1,
      server: 's1',
      host: 'h3',
    });
  });
});
