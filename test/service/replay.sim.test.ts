// One simulated day of the whole service in active mode against the Bitbrains-driven simulator
// (the short version of bench/replay.mjs): two windows a day and a cooldown shorter than a day,
// so servers may move again, but never back to a host they left within the cooldown; and every
// migration Nova ran is in the store exactly once, agreeing with Nova.
import { describe, expect, it } from 'vitest';
import type { ExecutionRecord, MoveRecord } from '../../src/executor/journal.js';
import { completedMoves, movesBack, runReplay } from '../../src/service/replay.js';
import { replayConfig } from '../../src/service/replay-config.js';

describe('the replay judges oscillation from completed moves', () => {
  const exec: ExecutionRecord = {
    id: 'e1',
    aggregate: 'a',
    planId: 'p1',
    state: 'finished',
    startedAt: '2026-11-02T01:00:00.000Z',
    endedAt: null,
    startedBy: 'loop:active',
  };
  const move = (
    server: string,
    from: string,
    to: string,
    at: string,
  ): MoveRecord & { execution: ExecutionRecord } => ({
    executionId: 'e1',
    step: 1,
    wave: 1,
    serverId: server,
    from,
    to,
    estimatedSeconds: 10,
    state: 'completed',
    attempt: 1,
    novaMigrationId: 1,
    issuedAt: at,
    endedAt: at,
    detail: null,
    execution: exec,
  });
  it('finds a move back within the cooldown and lets one after it pass', () => {
    const moves = completedMoves([
      move('s1', 'h1', 'h2', '2026-11-02T01:00:00.000Z'),
      move('s1', 'h2', 'h1', '2026-11-02T03:00:00.000Z'),
      move('s2', 'h1', 'h2', '2026-11-02T01:00:00.000Z'),
      move('s2', 'h2', 'h1', '2026-11-03T02:00:00.000Z'),
      move('s3', 'h1', 'h2', '2026-11-02T01:00:00.000Z'),
      move('s3', 'h2', 'h3', '2026-11-02T02:00:00.000Z'),
    ]);
    const back = movesBack(moves, () => 6 * 3_600_000);
    expect(back).toEqual([
      {
        serverId: 's1',
        host: 'h1',
        leftAt: '2026-11-02T01:00:00.000Z',
        returnedAt: '2026-11-02T03:00:00.000Z',
      },
    ]);
  });
});

describe('replaying a day of the Bitbrains-driven simulator in active mode', () => {
  it('moves no server back within its cooldown and accounts for every move once', async () => {
    const run = await runReplay({
      cloud: { hosts: 12, servers: 260, groups: 6, seed: 11, aggregates: 2, disabled: 0 },
      days: 1,
      speed: 900,
      config: replayConfig({
        cycleInterval: '15m',
        windows: ['Mon-Sun 01:00 - 05:00 UTC', 'Mon-Sun 13:00 - 17:00 UTC'],
        defaults: { cooldowns: { server: '6h', aggregate: '15m' } },
      }),
    });
    try {
      const r = run.report;
      console.log(
        `replay (1 day, ${r.cloud.hosts} hosts, ${r.cloud.servers} servers): ${r.cycles} cycles, moves ${JSON.stringify(r.moves)}, moved more than once ${r.serversMovedMoreThanOnce}, back within cooldown ${r.movesBackWithinCooldown.length}, wall ${r.wallSeconds} s`,
      );
      // 96 quarter-hours, fewer only if an execution outlasted a cycle interval.
      expect(r.cycles).toBeGreaterThanOrEqual(90);
      expect(r.failedCycles).toBe(0);
      // The loop acted: without moves the oscillation check would prove nothing.
      expect(r.moves.completed).toBeGreaterThan(0);
      expect(r.movesBackWithinCooldown).toEqual([]);
      // Every migration Nova ran is in the store once, in the state Nova ended it in.
      expect(r.accounting.novaMigrations).toBeGreaterThan(0);
      expect(r.accounting.unrecorded).toEqual([]);
      expect(r.accounting.recordedTwice).toEqual([]);
      expect(r.accounting.stateMismatches).toEqual([]);
      // Every move the store says completed is a completed Nova migration of that server.
      const novaDone = new Set(run.migrations.filter((m) => m.status === 'completed').map((m) => m.id));
      for (const m of run.moves.filter((x) => x.state === 'completed'))
        expect(novaDone.has(m.novaMigrationId!)).toBe(true);
      expect(run.moves.filter((m) => m.state === 'completed')).toHaveLength(novaDone.size);
      // Where every server ended is where its last completed move took it, or where it started.
      const last = new Map<string, string>();
      for (const m of completedMoves(run.moves)) last.set(m.serverId, m.to);
      for (const [id, host] of run.hostsAtEnd) expect(host).toBe(last.get(id) ?? run.hostsAtStart.get(id));
      // The imbalance was followed through the day for both aggregates.
      for (const a of r.cloud.aggregates) expect(r.imbalance[a]?.series.length).toBe(r.cycles);
    } finally {
      await run.close();
    }
  }, 120_000);
});
