import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import { type Case, codesOf, host, move, plan, server, snapshot } from '../fixtures.js';

// Two hosts that are exactly full (4 VCPU, 8192 MiB each, one server of that size on each).
const full = (spare?: { vcpus: number; ramMB: number }) =>
  snapshot(
    [
      host('a', { vcpus: 4, ramMB: 8192 }),
      host('b', { vcpus: 4, ramMB: 8192 }),
      ...(spare ? [host('c', { vcpus: spare.vcpus, ramMB: spare.ramMB })] : []),
    ],
    [server('sa', 'a', { vcpus: 4, ramMB: 8192 }), server('sb', 'b', { vcpus: 4, ramMB: 8192 })],
  );

// Two hosts with room for two servers each but holding one: a swap in one wave fits exactly.
const roomy = () =>
  snapshot(
    [host('a', { vcpus: 8, ramMB: 16384 }), host('b', { vcpus: 8, ramMB: 16384 })],
    [server('sa', 'a', { vcpus: 4, ramMB: 8192 }), server('sb', 'b', { vcpus: 4, ramMB: 8192 })],
  );

// A swap is, by its nature, two hosts both sending and receiving in one wave (hygiene), besides
// whatever capacity says of it.
const SWAP_IN_ONE_WAVE = ['host-send-receive', 'wave-send-receive'];

const cases: Case[] = [
  {
    name: 'swap between two full hosts in one wave: both claimed twice',
    build: () => {
      const snap = full();
      return { snap, plan: plan(snap, { gold: [move(1, 1, 'sa', 'a', 'b'), move(2, 1, 'sb', 'b', 'a')] }) };
    },
    want: ['capacity-exceeded', ...SWAP_IN_ONE_WAVE],
  },
  {
    name: 'swap between two full hosts in two waves: still no room',
    build: () => {
      const snap = full();
      return { snap, plan: plan(snap, { gold: [move(1, 1, 'sa', 'a', 'b'), move(2, 2, 'sb', 'b', 'a')] }) };
    },
    want: ['capacity-exceeded', 'host-send-receive'],
  },
  {
    name: 'swap between hosts with room for both in flight',
    build: () => {
      const snap = roomy();
      return { snap, plan: plan(snap, { gold: [move(1, 1, 'sa', 'a', 'b'), move(2, 1, 'sb', 'b', 'a')] }) };
    },
    want: SWAP_IN_ONE_WAVE,
  },
  {
    name: 'rotation through a spare host over three waves',
    build: () => {
      const snap = full({ vcpus: 4, ramMB: 8192 });
      const moves = [move(1, 1, 'sb', 'b', 'c'), move(2, 2, 'sa', 'a', 'b'), move(3, 3, 'sb', 'c', 'a')];
      return { snap, plan: plan(snap, { gold: moves }) };
    },
    want: ['host-send-receive', 'server-moved-twice'],
  },
  {
    name: 'the same rotation squeezed into one wave: b still holds sb while sa arrives',
    build: () => {
      const snap = full({ vcpus: 4, ramMB: 8192 });
      return { snap, plan: plan(snap, { gold: [move(1, 1, 'sb', 'b', 'c'), move(2, 1, 'sa', 'a', 'b')] }) };
    },
    want: ['capacity-exceeded', 'host-send-receive', 'wave-send-receive'],
  },
  {
    name: 'memory alone over',
    build: () => {
      const snap = snapshot([host('a'), host('b', { ramMB: 4000 })], [server('s', 'a', { ramMB: 4096 })]);
      return { snap, plan: plan(snap, { gold: [move(1, 1, 's', 'a', 'b')] }) };
    },
    want: ['capacity-exceeded'],
  },
  {
    name: 'allocation ratio makes room',
    build: () => {
      const snap = snapshot(
        [host('a'), host('b', { vcpus: 4, ratio: 2, usage: { VCPU: 6, MEMORY_MB: 0 } })],
        [server('s', 'a', { vcpus: 2 })],
      );
      return { snap, plan: plan(snap, { gold: [move(1, 1, 's', 'a', 'b')] }) };
    },
    want: [],
  },
  {
    name: 'reserved capacity is not usable',
    build: () => {
      const snap = snapshot(
        [host('a'), host('b', { vcpus: 4, reservedVcpus: 3 })],
        [server('s', 'a', { vcpus: 2 })],
      );
      return { snap, plan: plan(snap, { gold: [move(1, 1, 's', 'a', 'b')] }) };
    },
    want: ['capacity-exceeded'],
  },
  {
    name: 'usage comes from Placement, not from the servers listed',
    build: () => {
      const snap = snapshot(
        [host('a'), host('b', { vcpus: 4, usage: { VCPU: 3, MEMORY_MB: 0 } })],
        [server('s', 'a', { vcpus: 2 })],
      );
      return { snap, plan: plan(snap, { gold: [move(1, 1, 's', 'a', 'b')] }) };
    },
    want: ['capacity-exceeded'],
  },
  {
    name: 'an overcommitted host that only sends is not the plan\u2019s fault',
    build: () => {
      const snap = snapshot(
        [host('a', { vcpus: 2, usage: { VCPU: 10, MEMORY_MB: 4096 } }), host('b')],
        [server('s', 'a', { vcpus: 2 })],
      );
      return { snap, plan: plan(snap, { gold: [move(1, 1, 's', 'a', 'b')] }) };
    },
    want: [],
  },
];

describe('capacity (guarantee 2)', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('reports the one-wave swap on both hosts and both classes, naming the wave', () => {
    const snap = full();
    const { violations } = checkPlan(
      snap,
      plan(snap, { gold: [move(1, 1, 'sa', 'a', 'b'), move(2, 1, 'sb', 'b', 'a')] }),
    );
    const capacity = violations.filter((v) => v.code === 'capacity-exceeded');
    expect(capacity.map((v) => [v.host, v.wave, v.detail.split(':')[0]])).toEqual([
      ['b', 1, 'b VCPU'],
      ['b', 1, 'b MEMORY_MB'],
      ['a', 1, 'a VCPU'],
      ['a', 1, 'a MEMORY_MB'],
    ]);
    expect(capacity[0]?.detail).toBe('b VCPU: usage with wave 1 in flight (step 1) is 8, capacity 4');
  });
});
