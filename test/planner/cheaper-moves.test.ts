// Balance per cost in the plan an operator executes (issue 23, point 6): a move gives way to a
// cheaper server that buys the same balance (finalize.ts, cheapen), and a hot host's moves count
// as hot-spot relief only while it is still hot at the start of their wave (scheduleHotFirst).
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { planSnapshot } from '../../src/planner/index.js';
import { thresholdOfLevel } from '../../src/policy/threshold.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { policyWith } from '../fixtures/state.js';

// Balance per move only, as bench/quality.mjs plans: no price on a move's seconds.
const perMove = (maxMoves: number) =>
  policyWith({ minGain: 0, migrationCostPerSecond: 0, threshold: thresholdOfLevel(5), budget: { maxMoves } });

describe('cheaper servers for the same balance', () => {
  it('moves the 2 GiB server where a 16 GiB one with the same load buys the same balance', () => {
    // a carries 14 cores, b 6, c 7: a 3-core move from a to b is the best single move. big and
    // small load a equally (3 cores, 2 GiB of memory in use); big holds 16 GiB of RAM.
    const snapshot = cluster(
      [host('a'), host('b'), host('c')],
      [
        server('fill', 'a', { vcpus: 8, cpu: 8, ramMB: 8192, memMB: 2048 }),
        server('big', 'a', { vcpus: 4, cpu: 3, ramMB: 16384, memMB: 2048 }),
        server('small', 'a', { vcpus: 4, cpu: 3, ramMB: 2048, memMB: 2048 }),
        server('b1', 'b', { vcpus: 6, cpu: 6, ramMB: 8192, memMB: 4096 }),
        server('c1', 'c', { vcpus: 7, cpu: 7, ramMB: 8192, memMB: 6144 }),
      ],
    );
    const policy = perMove(1);
    const plan = planSnapshot(snapshot, policy);
    const moves = plan.aggregates.flatMap((a) => a.moves);
    expect(moves.map((m) => [m.server, m.from, m.to])).toEqual([['small', 'a', 'b']]);
    expect(checkPlan(snapshot, plan, { dimensions: policy.dimensions, maxMoves: 1 }).violations).toEqual([]);
  });

  it('takes the smaller server from another host the plan sends from, when it buys the same balance', () => {
    // c and e carry more than the mean (cpu 6 and 10 of 16 cores in use). The search sends e1
    // (16 GiB) from e to a and c1 (4 GiB) from c to b. e0 on e loads the host as c1 does (2
    // cores, 2 GiB in use) with 1 GiB of RAM: sent to b instead, it leaves c and e with each
    // other's end load, the same balance for a quarter of the memory.
    const snapshot = cluster(
      [host('a'), host('b'), host('c'), host('d'), host('e')],
      [
        server('a0', 'a', { vcpus: 2, cpu: 2, ramMB: 1024, memMB: 1024 }),
        server('b0', 'b', { vcpus: 3, cpu: 3, ramMB: 1024, memMB: 1024 }),
        server('c0', 'c', { vcpus: 4, cpu: 4, ramMB: 4096, memMB: 0 }),
        server('c1', 'c', { vcpus: 2, cpu: 2, ramMB: 4096, memMB: 2048 }),
        server('d0', 'd', { vcpus: 3, cpu: 3, ramMB: 4096, memMB: 1024 }),
        server('d1', 'd', { vcpus: 3, cpu: 3, ramMB: 2048, memMB: 2048 }),
        server('e0', 'e', { vcpus: 2, cpu: 2, ramMB: 1024, memMB: 2048 }),
        server('e1', 'e', { vcpus: 4, cpu: 4, ramMB: 16384, memMB: 1024 }),
        server('e2', 'e', { vcpus: 4, cpu: 4, ramMB: 2048, memMB: 0 }),
      ],
    );
    const policy = perMove(3);
    const plan = planSnapshot(snapshot, policy);
    const moves = plan.aggregates.flatMap((a) => a.moves);
    expect(moves.map((m) => [m.server, m.from, m.to]).sort()).toEqual([
      ['e0', 'e', 'b'],
      ['e1', 'e', 'a'],
    ]);
    expect(checkPlan(snapshot, plan, { dimensions: policy.dimensions, maxMoves: 3 }).violations).toEqual([]);
  });

  it('keeps the larger server when the smaller one buys less balance', () => {
    const snapshot = cluster(
      [host('a'), host('b'), host('c')],
      [
        server('fill', 'a', { vcpus: 8, cpu: 8, ramMB: 8192, memMB: 2048 }),
        server('big', 'a', { vcpus: 4, cpu: 3, ramMB: 16384, memMB: 2048 }),
        server('small', 'a', { vcpus: 4, cpu: 2, ramMB: 2048, memMB: 2048 }),
        server('b1', 'b', { vcpus: 6, cpu: 6, ramMB: 8192, memMB: 4096 }),
        server('c1', 'c', { vcpus: 7, cpu: 7, ramMB: 8192, memMB: 6144 }),
      ],
    );
    const plan = planSnapshot(snapshot, perMove(1));
    expect(plan.aggregates.flatMap((a) => a.moves).map((m) => m.server)).toEqual(['big']);
  });
});

describe('hot spots first, while the hosts are hot', () => {
  it("meets a cooled host's further moves with the others, and the checker agrees", () => {
    // a runs hot (14.4 of 16 cores, 90%); one 2.4-core move takes it to 75%. Its servers hold
    // 32 GiB of RAM each, b's 2 GiB: per GiB copied, b's moves buy more once a is no longer hot.
    const servers = [
      ...[1, 2, 3, 4, 5, 6].map((i) =>
        server(`a${i}`, 'a', { vcpus: 2, cpu: 2.4, ramMB: 32768, memMB: 4096 }),
      ),
      ...[1, 2, 3, 4, 5].map((i) => server(`b${i}`, 'b', { vcpus: 2, cpu: 2, ramMB: 2048, memMB: 4096 })),
    ];
    const snapshot = cluster(
      [host('a', { ramMB: 262144 }), host('b'), host('c'), host('d'), host('e')],
      servers,
    );
    const policy = perMove(6);
    const plan = planSnapshot(snapshot, policy);
    const moves = plan.aggregates.flatMap((a) => a.moves);
    const waveOf = (from: string) => moves.filter((m) => m.from === from).map((m) => m.wave);
    // Wave 1 relieves a (hot); a move off b (cool) comes before a's last move.
    expect(moves.find((m) => m.wave === 1)?.from).toBe('a');
    expect(waveOf('a').length).toBeGreaterThan(1);
    expect(Math.min(...waveOf('b'))).toBeLessThan(Math.max(...waveOf('a')));
    expect(checkPlan(snapshot, plan, { dimensions: policy.dimensions, maxMoves: 6 }).violations).toEqual([]);
  });
});
