// The loop's side of the store on the real backends: the statuses the loop's plans get, and what
// became of a plan's moves (planProgress) read back from decisions and executions.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreLoopAdapter } from '../../src/loop/store-adapter.js';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from '../store/backends.js';
import { planFor } from '../store/fixtures/plan.js';

const T0 = '2026-11-30T12:00:00.000Z';

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'the loop store on %s',
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

      it('stores an observe-mode plan as observed, an assisted one as proposed', async () => {
        const loop = new StoreLoopAdapter(
          store,
          (a) => (a === 'gold' ? 'assisted' : 'observe'),
          () => 3_600_000,
        );
        const seen = await loop.storePlan({
          aggregate: 'silver',
          plan: planFor('silver', 2),
          status: 'observed',
          decision: 'observe mode',
          at: T0,
        });
        const open = await loop.storePlan({
          aggregate: 'gold',
          plan: planFor('gold', 3),
          status: 'proposed',
          decision: 'awaiting approval',
          at: T0,
        });
        expect((await store.plans.get(seen))?.status).toBe('observed');
        expect((await store.plans.get(open))?.status).toBe('proposed');
        expect((await loop.pendingPlan('gold'))?.id).toBe(open);
        expect(await loop.pendingPlan('silver')).toBeNull();
      });

      it("reads a plan's progress: rejected steps, and steps handed to executions and completed", async () => {
        const loop = new StoreLoopAdapter(
          store,
          () => 'assisted',
          () => 3_600_000,
        );
        const id = await loop.storePlan({
          aggregate: 'gold',
          plan: planFor('gold', 3),
          status: 'proposed',
          decision: 'awaiting approval',
          at: T0,
        });
        await store.plans.decide(id, { decision: 'approved', steps: [1, 2], by: 'alice', at: T0 });
        await store.plans.decide(id, { decision: 'rejected', steps: [3], by: 'alice', at: T0 });
        expect(await loop.planProgress(id)).toEqual({
          rejected: new Set([3]),
          started: new Set(),
          completed: new Set(),
        });
        const moves = planFor('gold', 3).aggregates[0]!.moves;
        await store.createExecution(
          { id: 'exec-1', aggregate: 'gold', planId: id, startedBy: 'loop:assisted', startedAt: T0 },
          [1, 2].map((step) => {
            const m = moves[step - 1]!;
            return {
              step,
              wave: m.wave,
              serverId: m.server,
              from: m.from,
              to: m.to,
              estimatedSeconds: m.estimatedSeconds,
            };
          }),
        );
        await store.transitionMove('exec-1', 1, 'pending', {
          state: 'skipped',
          at: T0,
          detail: 'pre-flight: no room',
        });
        await store.transitionMove('exec-1', 2, 'pending', { state: 'issuing', at: T0 });
        await store.transitionMove('exec-1', 2, 'issuing', { state: 'migrating', at: T0 });
        await store.transitionMove('exec-1', 2, 'migrating', { state: 'completed', at: T0 });
        expect(await loop.planProgress(id)).toEqual({
          rejected: new Set([3]),
          started: new Set([1, 2]),
          completed: new Set([2]),
        });
      });

      it("starts the aggregate cooldown at an aborted execution's end, as at a finished one's", async () => {
        const loop = new StoreLoopAdapter(
          store,
          () => 'active',
          () => 3_600_000,
        );
        const run = async (id: string, startedAt: string) =>
          store.createExecution(
            { id, aggregate: 'gold', planId: null, startedBy: 'loop:active', startedAt },
            [{ step: 1, wave: 1, serverId: `vm-${id}`, from: 'h1', to: 'h2', estimatedSeconds: 60 }],
          );
        expect(await loop.lastExecutionEnded('gold')).toBeNull();
        await run('exec-finished', T0);
        await store.transitionMove('exec-finished', 1, 'pending', {
          state: 'skipped',
          at: T0,
          detail: 'no room',
        });
        await store.finishExecution('exec-finished', 'finished', '2026-11-30T12:05:00.000Z');
        // Started before the finished one ended, aborted (its move never issued) after it.
        await run('exec-aborted', '2026-11-30T12:01:00.000Z');
        await store.finishExecution('exec-aborted', 'aborted', '2026-11-30T12:20:00.000Z');
        expect((await loop.lastExecutionEnded('gold'))?.toISOString()).toBe('2026-11-30T12:20:00.000Z');
        expect(await loop.lastExecutionEnded('silver')).toBeNull();
      });
    });
  },
);
