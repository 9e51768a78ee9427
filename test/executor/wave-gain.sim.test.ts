// Before each wave after the first, the executor asks whether the wave's moves still pay: those
// that do not are skipped with why (and a move that needed one follows), a failed reading holds
// the wave until the next try, and the first wave is not asked (its start was judged).
import { afterEach, describe, expect, it } from 'vitest';
import type { WaveGainCheck } from '../../src/executor/ports.js';
import { host, makeExecutor, move, noStop, openWorld, server, snapshot, type World } from './sim-world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const fourHosts = () =>
  snapshot(
    [host('c1'), host('c2'), host('c3'), host('c4')],
    [1, 2, 3, 4, 5].map((n) => server(n, 'c1')),
  );

describe('wave gain re-check', () => {
  it('skips the moves of a later wave that no longer pay, and what needed them', async () => {
    world = await openWorld(fourHosts(), { speed: 40 });
    const asked: { wave: number; steps: number[]; completedBefore: number }[] = [];
    const w = world;
    const waveCheck: WaveGainCheck = async ({ wave, moves }) => {
      asked.push({
        wave,
        steps: moves.map((m) => m.step),
        completedBefore: w.cloud.migrations.filter((m) => m.status === 'completed').length,
      });
      return wave === 2
        ? [{ step: 3, why: 'no longer pays on fresh figures: imbalance 0.1 would become 0.12' }]
        : [];
    };
    const { executor, recorded } = makeExecutor(world, { waveCheck });
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: 'p1',
        startedBy: 'test',
        moves: [
          move(1, 1, 1, 'c1', 'c2'),
          move(2, 2, 2, 'c1', 'c3'),
          move(3, 2, 3, 'c1', 'c4'),
          move(4, 3, 4, 'c1', 'c2', { after: [3] }),
          move(5, 3, 5, 'c1', 'c3'),
        ],
      },
      { deadline: null, shouldStop: noStop },
    );
    // Asked once per later wave, each after the waves before it ended, never for the first.
    expect(asked).toEqual([
      { wave: 2, steps: [2, 3], completedBefore: 1 },
      { wave: 3, steps: [4, 5], completedBefore: 2 },
    ]);
    expect(summary.state).toBe('finished');
    expect(summary.moves.map((m) => m.state)).toEqual([
      'completed',
      'completed',
      'skipped',
      'skipped',
      'completed',
    ]);
    expect(summary.moves[2]!.detail).toBe(
      'gain re-check before wave 2: no longer pays on fresh figures: imbalance 0.1 would become 0.12',
    );
    expect(summary.moves[3]!.detail).toMatch(/step 3, whose room it needs, ended skipped/);
    expect(recorded.audit.filter((a) => a.action === 'gain-dropped').map((a) => a.step)).toEqual([3]);
    // Nothing was sent for the dropped moves.
    expect(world.cloud.migrations).toHaveLength(3);
  });

  it('holds a wave while its reading fails, and starts it once a reading succeeds', async () => {
    world = await openWorld(fourHosts(), { speed: 40 });
    let calls = 0;
    const waveCheck: WaveGainCheck = async () => {
      calls++;
      if (calls < 3) throw new Error('the cloud could not be read');
      return [];
    };
    const { executor } = makeExecutor(world, { waveCheck });
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: 'p1',
        startedBy: 'test',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 2, 2, 'c1', 'c3')],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(calls).toBe(3);
    expect(summary.moves.map((m) => m.state)).toEqual(['completed', 'completed']);
    expect(summary.counters.readErrors).toBeGreaterThanOrEqual(2);
  });
});
