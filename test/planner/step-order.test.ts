// The step-order priority (src/planner/step-order.ts) and the backfill bound of waves.ts.
import { describe, expect, it } from 'vitest';
import type { PlannedMove } from '../../src/planner/context.js';
import { orderByBalancePerGiB } from '../../src/planner/step-order.js';
import { scheduleWaves } from '../../src/planner/waves.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { ids, policyWith, stateOf } from '../fixtures/state.js';

type State = ReturnType<typeof stateOf>;

function move(state: State, sv: string, to: string, phase: PlannedMove['phase'] = 'spread'): PlannedMove {
  const { h, s } = ids(state);
  return { server: s(sv), from: state.at[s(sv)]!, to: h(to), phase, softGroup: false, reason: '', gain: 0 };
}

// Host a carries most of the load; big and small both relieve it, big buys more balance, small
// more per GiB copied.
const snapshot = () =>
  cluster(
    [host('a'), host('b'), host('c')],
    [
      server('fill', 'a', { vcpus: 8, cpu: 8, ramMB: 32768 }),
      server('big', 'a', { vcpus: 4, cpu: 4, ramMB: 16384 }),
      server('small', 'a', { vcpus: 2, cpu: 2, ramMB: 2048 }),
    ],
  );

const names = (state: State, moves: PlannedMove[]) => moves.map((m) => state.servers[m.server]!.id);

describe('orderByBalancePerGiB', () => {
  it('puts the move of most balance per GiB first, though selection took the larger gain first', () => {
    const state = stateOf(snapshot());
    const chosen = [move(state, 'big', 'b'), move(state, 'small', 'c')];
    const bigGain = state.imbalance(0) - state.imbalanceAfter(chosen[0]!.server, chosen[0]!.to);
    const smallGain = state.imbalance(0) - state.imbalanceAfter(chosen[1]!.server, chosen[1]!.to);
    expect(bigGain).toBeGreaterThan(smallGain);
    const ordered = orderByBalancePerGiB(
      state,
      policyWith(),
      0,
      chosen,
      () => false,
      () => false,
    );
    expect(names(state, ordered)).toEqual(['small', 'big']);
    expect(state.applied.length).toBe(0);
  });

  it('keeps mandatory moves first in selection order, and hot-host relief before the rest', () => {
    const state = stateOf(snapshot());
    const evacuation = move(state, 'fill', 'b', 'evacuate');
    const chosen = [evacuation, move(state, 'small', 'c'), move(state, 'big', 'c')];
    const relief = (m: PlannedMove) => state.servers[m.server]!.id === 'big';
    const ordered = orderByBalancePerGiB(state, policyWith(), 0, chosen, (m) => m === evacuation, relief);
    expect(names(state, ordered)).toEqual(['fill', 'big', 'small']);
  });

  it('weighs again the moves on the hosts a move changed: one worth nothing at first may be worth the most next', () => {
    // cpu in use: a 14, b 2, c 9, d 7 of 16 (mean 8); no memory in use. x (a -> b) buys the most.
    // y (b -> d) costs balance at the start (b is the coolest host) but buys the most per GiB
    // once x has filled b; z (c -> d) buys a little throughout. Weighed only when on top of the
    // heap, y would keep its first value and wait behind z.
    const state = stateOf(
      cluster(
        [host('a'), host('b'), host('c'), host('d')],
        [
          server('x', 'a', { vcpus: 8, cpu: 8, ramMB: 1024, memMB: 0 }),
          server('fa', 'a', { vcpus: 6, cpu: 6, ramMB: 8192, memMB: 0 }),
          server('y', 'b', { vcpus: 2, cpu: 2, ramMB: 4096, memMB: 0 }),
          server('z', 'c', { vcpus: 1, cpu: 1, ramMB: 4096, memMB: 0 }),
          server('fc', 'c', { vcpus: 8, cpu: 8, ramMB: 8192, memMB: 0 }),
          server('fd', 'd', { vcpus: 7, cpu: 7, ramMB: 8192, memMB: 0 }),
        ],
      ),
    );
    const [x, y, z] = [move(state, 'x', 'b'), move(state, 'y', 'd'), move(state, 'z', 'd')];
    const start = state.imbalance(0);
    expect(state.imbalanceAfter(y.server, y.to)).toBeGreaterThan(start);
    expect(state.imbalanceAfter(z.server, z.to)).toBeLessThan(start);
    const ordered = orderByBalancePerGiB(
      state,
      policyWith(),
      0,
      [x, z, y],
      () => false,
      () => false,
    );
    expect(names(state, ordered)).toEqual(['x', 'y', 'z']);
    expect(state.applied.length).toBe(0);
  });

  it('keeps an exchange as one unit, its halves together', () => {
    const state = stateOf(
      cluster(
        [host('a'), host('b'), host('c')],
        [
          server('a1', 'a', { vcpus: 8, cpu: 8, ramMB: 8192 }),
          server('a2', 'a', { vcpus: 2, cpu: 2, ramMB: 2048 }),
          server('b1', 'b', { vcpus: 1, cpu: 1, ramMB: 1024 }),
        ],
      ),
    );
    const one = move(state, 'a1', 'b');
    const two = move(state, 'b1', 'a');
    one.exchangeWith = two;
    two.exchangeWith = one;
    const ordered = orderByBalancePerGiB(
      state,
      policyWith(),
      0,
      [move(state, 'a2', 'c'), one, two],
      () => false,
      () => false,
    );
    const i = ordered.indexOf(one);
    expect(ordered[i + 1]).toBe(two);
  });
});

describe('scheduleWaves backfill bound', () => {
  it('lets a later move into an earlier wave only within the bound', () => {
    const state = stateOf(
      cluster(
        [host('a'), host('b'), host('d'), host('e'), host('f')],
        [server('s1', 'a'), server('s2', 'a'), server('s3', 'b')],
      ),
    );
    const moves = [move(state, 's1', 'd'), move(state, 's2', 'e'), move(state, 's3', 'f')];
    for (const m of moves) state.apply(m.server, m.to);
    const limits = { perHostOutgoing: 1, global: 10 };
    expect(scheduleWaves(state, moves, limits).map((m) => m.wave)).toEqual([1, 2, 1]);
    expect(scheduleWaves(state, moves, limits, undefined, 0).map((m) => m.wave)).toEqual([1, 2, 2]);
  });
});
