// Pre-flight before the slot frees (issue 27): a move waiting only for its source's migration of
// ours pre-reads shortly before that migration is expected to end, and calls Nova as soon as the
// listing shows it ended, without a round trip of reads in between. The limits still hold (the
// call waits for the slot), and estimates that do not foretell the ends stop the pre-reads.
import { afterEach, describe, expect, it } from 'vitest';
import { estimateMigrationSeconds } from '../../src/planner/cost-model.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import {
  host,
  makeExecutor,
  migrationsByServer,
  move,
  noStop,
  openWorld,
  server,
  snapshot,
  type World,
} from './sim-world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('pre-flight before the slot frees', () => {
  it('is made while the source still migrates, used by the next move, and the source limit holds', async () => {
    const hosts = ['c1', 'c2', 'c3'].map((h) => host(h));
    const servers = [1, 2, 3].map((n) => server(n, 'c1'));
    world = await openWorld(snapshot(hosts, servers), { speed: 5 });
    const { executor } = makeExecutor(world, { settings: { limits: { perSourceHost: 1 } } });
    // The planner's estimate: the simulator runs the same cost model, so it foretells the ends.
    const estimatedSeconds = estimateMigrationSeconds({ ramMB: 4096 }, DEFAULT_POLICY.costModel);
    const moves = [
      move(1, 1, 1, 'c1', 'c2', { estimatedSeconds }),
      move(2, 1, 2, 'c1', 'c3', { estimatedSeconds }),
      move(3, 1, 3, 'c1', 'c2', { estimatedSeconds }),
    ];
    const summary = await executor.start(
      { aggregate: 'agg', planId: 'plan-1', startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.counts.completed).toBe(3);
    expect(summary.counters.prereads).toBeGreaterThanOrEqual(1);
    expect(summary.counters.prereadsUsed).toBeGreaterThanOrEqual(1);
    expect(summary.counters.prereadsUsed + summary.counters.prereadsStale).toBe(summary.counters.prereads);
    // One migration out of c1 at a time, from the simulator's own records.
    const byServer = migrationsByServer(world.cloud);
    const sim = (step: number) => byServer.get(moves[step - 1]!.serverId)![0]!;
    expect(sim(2).createdMs).toBeGreaterThanOrEqual(sim(1).updatedMs!);
    expect(sim(3).createdMs).toBeGreaterThanOrEqual(sim(2).updatedMs!);
  });

  it('stops for the run when its pre-reads turn out stale more than once for three used', async () => {
    const hosts = ['c1', 'c2'].map((h) => host(h));
    const servers = [1, 2, 3, 4, 5, 6, 7].map((n) => server(n, 'c1', 16384));
    world = await openWorld(snapshot(hosts, servers));
    const { executor } = makeExecutor(world, { settings: { limits: { perSourceHost: 1 } } });
    // Estimates far shorter than the migrations: every pre-read is made right after the call
    // before it and is too old when the slot frees (each migration takes about 20 s, the age
    // limit is 5 s). A stalled test process makes its pre-reads late, so young: with 8 GiB
    // servers (about 0.45 s of wall to spare) two were used at load 6.
    const moves = [1, 2, 3, 4, 5, 6, 7].map((n) => move(n, 1, n, 'c1', 'c2', { estimatedSeconds: 0.5 }));
    const summary = await executor.start(
      { aggregate: 'agg', planId: 'plan-1', startedBy: 'test', moves },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.counts.completed).toBe(7);
    expect(summary.counters.prereadsUsed).toBe(0);
    // Moves 2 to 6 pre-read and find it stale; move 7 no longer pre-reads.
    expect(summary.counters.prereadsStale).toBe(5);
    expect(summary.counters.prereads).toBe(5);
  });
});
