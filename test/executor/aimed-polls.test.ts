// The listing of migrations aimed at their expected ends (issue 27): a migration whose call this
// process sent is listed when it is expected to end, not only at the regular cadence; the aim
// learns from what those listings show; a migration found after a restart (no send time) is
// followed at the regular cadence alone.
import { describe, expect, it } from 'vitest';
import { MigrationWatch } from '../../src/executor/migration-watch.js';
import type { Clock, ExecutorCloud, LiveMigrationView } from '../../src/executor/ports.js';
import { manualClock } from './manual-clock.js';

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

/**
 * One live migration per server, running from `createdAt` and completed at `endsAt` (Nova's
 * clock is ours here); the listing shows each as of the moment it is asked, and records when.
 */
function cloudOf(clock: Clock, migrations: { serverId: string; createdAt: number; endsAt: number }[]) {
  const askedAt: number[] = [];
  const view = (m: (typeof migrations)[number], i: number): LiveMigrationView => {
    const ended = clock.now() >= m.endsAt;
    return {
      id: i + 1,
      serverId: m.serverId,
      status: ended ? 'completed' : 'running',
      source: 'c1',
      dest: 'c2',
      createdAt: m.createdAt,
      updatedAt: ended ? m.endsAt : m.createdAt + 1000,
    };
  };
  const unused = (): never => {
    throw new Error('not used by the watch');
  };
  const cloud: ExecutorCloud = {
    getServer: unused,
    listServersChangedSince: unused,
    listLiveMigrations: unused,
    listLiveMigrationsChangedSince: () => {
      askedAt.push(clock.now());
      const records = migrations.map(view);
      return Promise.resolve({ records, newestOnFirstPage: null });
    },
    getComputeService: unused,
    listComputeServices: unused,
    getHostRoom: unused,
    getHostInventories: unused,
    getHostUsages: unused,
    listHostAllocations: unused,
    getServerAllocation: unused,
    liveMigrate: unused,
    abortLiveMigration: unused,
  };
  return { cloud, askedAt };
}

/** Moves the clock by `stepMs` until `untilMs` after the start, letting the watch run in between. */
async function runFor(clock: ReturnType<typeof manualClock>, untilMs: number, stepMs = 100) {
  const end = clock.now() + untilMs;
  while (clock.now() < end) {
    clock.advance(stepMs);
    await settle();
  }
}

// pollSeconds 20: the regular cadence for one migration of 50 s is every 20 s (20, 40, 60 s).
const settings = { pollSeconds: 20, clockSkewSeconds: 60 };

describe('listings aimed at expected ends', () => {
  it('lists when a migration is expected to end, between two regular listings', async () => {
    const clock = manualClock();
    const t0 = clock.now();
    const { cloud, askedAt } = cloudOf(clock, [{ serverId: 's1', createdAt: t0, endsAt: t0 + 50_000 }]);
    const watch = new MigrationWatch(cloud, clock, settings);
    const handle = watch.follow('s1', { expectedSeconds: 50, reachBackTo: null, sentAt: t0 });
    let endSeenAt: number | null = null;
    void (async () => {
      for (;;) {
        const seen = handle.version();
        if (handle.records()[0]?.status === 'completed') {
          endSeenAt = clock.now();
          return;
        }
        await handle.changed(seen, 60_000);
      }
    })();
    await runFor(clock, 55_000);
    handle.close();
    await runFor(clock, 30_000);
    expect(askedAt.map((t) => t - t0)).toEqual([20_000, 40_000, 50_000]);
    expect(endSeenAt).toBe(t0 + 50_000);
    expect(watch.counters).toMatchObject({ aimedHits: 1, aimedMisses: 0 });
  });

  it('follows a miss up shortly after, and aims later at the next migrations', async () => {
    const clock = manualClock();
    const t0 = clock.now();
    // Every migration ends 3 s after its estimate (Nova's own seconds around the copy).
    const migrations = [0, 1, 2, 3, 4, 5].map((i) => ({
      serverId: `s${i}`,
      createdAt: t0 + i * 60_000,
      endsAt: t0 + i * 60_000 + 53_000,
    }));
    const { cloud, askedAt } = cloudOf(clock, migrations);
    const watch = new MigrationWatch(cloud, clock, settings);
    for (const m of migrations) {
      const handle = watch.follow(m.serverId, {
        expectedSeconds: 50,
        reachBackTo: null,
        sentAt: m.createdAt,
      });
      await runFor(clock, 60_000);
      handle.close();
    }
    const first = askedAt.filter((t) => t < t0 + 60_000).map((t) => t - t0);
    // Aimed at 50 s (nothing yet), followed up 2 s later (0.1 of a poll), then the cadence.
    expect(first.slice(0, 4)).toEqual([20_000, 40_000, 50_000, 52_000]);
    // The aim moves later by 1.6 s per miss and earlier by 0.4 s per hit (a fifth of the aimed
    // listings miss): from the third migration on, its aimed listing comes within 2 s after
    // the end, where the regular cadence alone would be up to 20 s late.
    expect(watch.counters.aimedHits).toBeGreaterThanOrEqual(2);
    for (const m of migrations.slice(2)) {
      const seenBy = askedAt.find((t) => t >= m.endsAt);
      expect((seenBy ?? Number.POSITIVE_INFINITY) - m.endsAt).toBeLessThanOrEqual(2_000);
    }
  });

  it('follows a migration found after a restart (no send time) at the regular cadence only', async () => {
    const clock = manualClock();
    const t0 = clock.now();
    const { cloud, askedAt } = cloudOf(clock, [{ serverId: 's1', createdAt: t0, endsAt: t0 + 50_000 }]);
    const watch = new MigrationWatch(cloud, clock, settings);
    const handle = watch.follow('s1', { expectedSeconds: 50, reachBackTo: null, sentAt: null });
    await runFor(clock, 65_000);
    handle.close();
    await runFor(clock, 30_000);
    expect(askedAt.map((t) => t - t0)).toEqual([20_000, 40_000, 60_000]);
    expect(watch.counters).toMatchObject({ aimedHits: 0, aimedMisses: 0 });
  });
});
