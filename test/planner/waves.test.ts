import { describe, expect, it } from 'vitest';
import type { PlannedMove } from '../../src/planner/context.js';
import { NoWaveFits, scheduleWaves } from '../../src/planner/waves.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';
import { ids, stateOf } from '../fixtures/state.js';

function planned(state: ReturnType<typeof stateOf>, moves: [string, string][]): PlannedMove[] {
  const { h, s } = ids(state);
  // scheduleWaves reads the state with every move applied, as the phases leave it.
  return moves.map(([sv, to]) => {
    const from = state.at[s(sv)]!;
    state.apply(s(sv), h(to));
    return { server: s(sv), from, to: h(to), phase: 'spread', softGroup: false, reason: '', gain: 0 };
  });
}

/** s1 moves to b, full until b1 leaves it for c: selected b1 first. */
function roomFreedByB1() {
  const state = stateOf(
    cluster(
      [host('a'), host('b', { vcpus: 4 }), host('c')],
      [server('s1', 'a', { vcpus: 4 }), server('b1', 'b', { vcpus: 4 })],
    ),
  );
  const moves = planned(state, [
    ['b1', 'c'],
    ['s1', 'b'],
  ]);
  return { state, moves };
}

describe('scheduleWaves', () => {
  it('says which move has no room when a first-pass move needs room a later-placed one frees', () => {
    const { state, moves } = roomFreedByB1();
    const { s } = ids(state);
    const first = (m: PlannedMove) => m.server === s('s1');
    let thrown: unknown;
    try {
      scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 }, { first, relief: first });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(NoWaveFits);
    expect((thrown as NoWaveFits).move.server).toBe(s('s1'));
    // In selection order the same moves fit.
    expect(scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 }).map((m) => m.wave)).toEqual([
      1, 2,
    ]);
  });

  it('puts a move that needs room freed by another in a later wave and says which', () => {
    const { state, moves } = roomFreedByB1();
    const waves = scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 });
    expect(waves.map((m) => m.wave)).toEqual([1, 2]);
    expect(waves[1]!.needs).toEqual([0]);
  });

  it('runs independent moves together, up to the global limit', () => {
    const state = stateOf(
      cluster(
        [host('a'), host('b'), host('c'), host('d')],
        [server('s1', 'a'), server('s2', 'b'), server('s3', 'c')],
      ),
    );
    const moves = planned(state, [
      ['s1', 'd'],
      ['s2', 'd'],
      ['s3', 'd'],
    ]);
    expect(scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 }).map((m) => m.wave)).toEqual([
      1, 1, 1,
    ]);
    expect(scheduleWaves(state, moves, { perHostOutgoing: 1, global: 2 }).map((m) => m.wave)).toEqual([
      1, 1, 2,
    ]);
  });

  it('honours per-host outgoing limits, the host override first', () => {
    const state = stateOf(
      cluster(
        [host('a', { maxOut: 2 }), host('b'), host('c')],
        [server('s1', 'a'), server('s2', 'a'), server('s3', 'a')],
      ),
    );
    const moves = planned(state, [
      ['s1', 'b'],
      ['s2', 'c'],
      ['s3', 'b'],
    ]);
    expect(scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 }).map((m) => m.wave)).toEqual([
      1, 1, 2,
    ]);
  });

  it('keeps the moves of one server group in their planned order', () => {
    const state = stateOf(
      cluster(
        [host('a'), host('b'), host('c'), host('d')],
        [server('m1', 'a'), server('m2', 'b'), server('m3', 'c')],
        [group('g', 'affinity', ['m1', 'm2', 'm3'])],
      ),
    );
    const moves = planned(state, [
      ['m2', 'd'],
      ['m3', 'd'],
      ['m1', 'd'],
    ]);
    const waves = scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 }).map((m) => m.wave);
    expect(waves).toEqual([...waves].sort((x, y) => x - y));
  });

  it('counts claims on both hosts while a wave is in flight', () => {
    // A swap between two full hosts: each move needs the other's room, which is only free after
    // its wave ends, so they cannot share a wave; the second waits for the first.
    const state = stateOf(
      cluster(
        [host('a', { vcpus: 8 }), host('b', { vcpus: 8 }), host('c', { vcpus: 4 })],
        [server('x', 'a', { vcpus: 4 }), server('pad', 'a', { vcpus: 4 }), server('y', 'b', { vcpus: 4 })],
      ),
    );
    const moves = planned(state, [
      ['y', 'c'],
      ['x', 'b'],
    ]);
    const waves = scheduleWaves(state, moves, { perHostOutgoing: 1, global: 10 });
    // b would send y and receive x in one wave, which no wave does: x waits for the next.
    expect(waves.map((m) => m.wave)).toEqual([1, 2]);
    const full = stateOf(
      cluster(
        [host('a', { vcpus: 8 }), host('b', { vcpus: 4 }), host('c', { vcpus: 4 })],
        [server('x', 'a', { vcpus: 4 }), server('pad', 'a', { vcpus: 4 }), server('y', 'b', { vcpus: 4 })],
      ),
    );
    const moves2 = planned(full, [
      ['y', 'c'],
      ['x', 'b'],
    ]);
    expect(scheduleWaves(full, moves2, { perHostOutgoing: 1, global: 10 }).map((m) => m.wave)).toEqual([
      1, 2,
    ]);
  });
});
