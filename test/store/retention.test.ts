import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';
import { planFor } from './fixtures/plan.js';

const NOW = '2026-11-30T12:00:00.000Z';
const daysAgo = (d: number) => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();

/** Fills every table with one old and one recent record, plus the live ones retention must keep. */
async function fill(store: Store): Promise<{ livePlan: string; oldPlan: string; recentPlan: string }> {
  const oldPlan = await store.plans.create({
    aggregate: 'gold',
    mode: 'observe',
    plan: planFor('gold', 2),
    createdAt: daysAgo(40),
  });
  await store.plans.decide(oldPlan.id, { steps: [1], decision: 'rejected', by: 'a', at: daysAgo(40) });
  await store.plans.setStatus(oldPlan.id, ['proposed'], 'superseded', daysAgo(40));
  const livePlan = await store.plans.create({
    aggregate: 'gold',
    mode: 'assisted',
    plan: planFor('gold', 1),
    createdAt: daysAgo(40),
  });
  const recentPlan = await store.plans.create({
    aggregate: 'gold',
    mode: 'observe',
    plan: planFor('gold', 1),
    createdAt: daysAgo(1),
  });
  await store.plans.setStatus(recentPlan.id, ['proposed'], 'expired', daysAgo(1));

  for (const [id, started, state] of [
    ['old-finished', 40, 'finished'],
    ['old-running', 40, 'running'],
    ['recent-finished', 1, 'finished'],
  ] as const) {
    await store.createExecution(
      { id, aggregate: 'gold', planId: null, startedAt: daysAgo(started), startedBy: 'loop' },
      [{ step: 1, wave: 1, serverId: 's1', from: 'c1', to: 'c2', estimatedSeconds: 1 }],
    );
    if (state === 'finished') {
      await store.transitionMove(id, 1, 'pending', { state: 'skipped', at: daysAgo(started) });
      await store.finishExecution(id, 'finished', daysAgo(started));
    }
  }

  await store.quarantine.quarantine({
    serverId: 'q-old',
    aggregate: 'gold',
    reason: 'r',
    attempts: 3,
    at: daysAgo(50),
  });
  await store.quarantine.release('q-old', 'operator:a', daysAgo(40));
  await store.quarantine.quarantine({
    serverId: 'q-live',
    aggregate: 'gold',
    reason: 'r',
    attempts: 3,
    at: daysAgo(50),
  });

  await store.cooldowns.recordMove({
    serverId: 'c-old',
    aggregate: 'old-agg',
    lastMovedAt: daysAgo(40),
    from: 'a',
    to: 'b',
  });
  await store.cooldowns.recordMove({
    serverId: 'c-new',
    aggregate: 'gold',
    lastMovedAt: daysAgo(1),
    from: 'a',
    to: 'b',
  });

  for (const d of [40, 1]) {
    await store.costSamples.add([
      {
        aggregate: 'gold',
        serverId: 's',
        ramMB: 1,
        durationSeconds: 1,
        outcome: 'completed',
        source: 'own',
        at: daysAgo(d),
      },
    ]);
    await store.ratioChanges.record({
      host: 'h',
      resourceClass: 'VCPU',
      oldRatio: 4,
      newRatio: 3,
      reason: 'r',
      generation: d,
      at: daysAgo(d),
      by: 'prevention',
    });
    await store.snapshots.record({ takenAt: daysAgo(d), recordedAt: daysAgo(d) });
    await store.audit.record({ actor: 'a', action: 'x', target: 't', at: daysAgo(d) });
  }
  // Prevention's intents: h1 has an old and a recent one, h2 only an old one (its latest: kept).
  const intent = (host: string, days: number) =>
    store.ratioSink.record({
      changeId: `${host}-${days}`,
      host,
      rpUuid: `rp-${host}`,
      aggregate: 'gold',
      from: 4,
      to: 3,
      reason: 'hot',
      state: 'intended',
      at: daysAgo(days),
    });
  await intent('h1', 40);
  await intent('h1', 1);
  await intent('h2', 40);
  // gold: an old verdict and a recent one; silver: only an old one, which stays as its latest.
  await store.dataHealth.record({ aggregate: 'gold', verdict: 'ok', reasons: [], at: daysAgo(40) });
  await store.dataHealth.record({ aggregate: 'gold', verdict: 'ok', reasons: [], at: daysAgo(1) });
  await store.dataHealth.record({
    aggregate: 'silver',
    verdict: 'blocked',
    reasons: ['stale'],
    at: daysAgo(40),
  });
  return { livePlan: livePlan.id, oldPlan: oldPlan.id, recentPlan: recentPlan.id };
}

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'retention on %s',
  (_name, backend: TestBackend) => {
    describe.skipIf(!backend.available)('', () => {
      let store: Store;
      let dispose: () => Promise<void>;
      beforeEach(async () => {
        ({ store, dispose } = await openFresh(backend));
      });
      afterEach(async () => {
        await dispose();
      });

      it('deletes what is older than each age and never what is live', async () => {
        const { livePlan, oldPlan, recentPlan } = await fill(store);
        const counts = await store.retention.purge(
          {
            plans: 30,
            executions: 30,
            quarantine: 30,
            cooldowns: 30,
            costSamples: 30,
            ratioChanges: 30,
            ratioIntents: 30,
            dataHealth: 30,
            snapshots: 30,
            audit: 30,
          },
          NOW,
        );
        expect(counts).toEqual({
          plans: 1,
          executions: 1,
          quarantine: 1,
          cooldowns: 2,
          costSamples: 1,
          ratioChanges: 1,
          ratioIntents: 1,
          dataHealth: 1,
          snapshots: 1,
          audit: 1,
          history: 0,
        });
        expect(await store.plans.get(oldPlan)).toBeNull();
        expect(await store.plans.decisions(oldPlan)).toEqual([]);
        expect((await store.plans.get(livePlan))?.status).toBe('proposed');
        expect(await store.plans.get(recentPlan)).not.toBeNull();
        expect(await store.getExecution('old-finished')).toBeNull();
        expect(await store.listMoves('old-finished')).toEqual([]);
        expect((await store.getExecution('old-running'))?.state).toBe('running');
        expect(await store.listMoves('old-running')).toHaveLength(1);
        expect(await store.getExecution('recent-finished')).not.toBeNull();
        expect(await store.quarantine.active('q-live')).not.toBeNull();
        expect((await store.quarantine.list({ state: 'released' })).items).toEqual([]);
        expect(await store.cooldowns.getServer('c-old')).toBeNull();
        expect(await store.cooldowns.getAggregate('old-agg')).toBeNull();
        expect(await store.cooldowns.getServer('c-new')).not.toBeNull();
        expect((await store.dataHealth.list()).items.map((r) => r.aggregate)).toEqual(['silver', 'gold']);
        const last = await store.ratioSink.lastChanges();
        expect([...last.values()].map((c) => c.changeId).sort()).toEqual(['h1-1', 'h2-40']);
        expect((await store.audit.list()).items).toHaveLength(1);
        expect((await store.costSamples.list()).items).toHaveLength(1);
        expect((await store.ratioChanges.list()).items).toHaveLength(1);
        expect((await store.snapshots.list()).items).toHaveLength(1);
      });

      it('keeps what the policy does not name, and refuses a bad policy', async () => {
        await fill(store);
        const counts = await store.retention.purge({ audit: 0 }, NOW);
        expect(counts.audit).toBe(2);
        expect(counts.plans + counts.executions + counts.snapshots).toBe(0);
        expect((await store.snapshots.list()).items).toHaveLength(2);
        await expect(store.retention.purge({ audit: -1 }, NOW)).rejects.toThrow(
          /retention.audit must be a number of days >= 0/,
        );
        await expect(store.retention.purge({ plans: 1, logs: 3 } as never, NOW)).rejects.toThrow(
          /no record kind "logs"/,
        );
      });
    });
  },
);
