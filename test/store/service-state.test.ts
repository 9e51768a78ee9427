// The service's own state on both backends: run-time pauses (durable, one per scope, replaced
// not duplicated) and the imbalance history per aggregate, with retention.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const T0 = '2026-11-30T12:00:00.000Z';
const minutes = (n: number) => new Date(Date.parse(T0) + n * 60_000).toISOString();

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'service state on %s',
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

      it('pauses: global and per aggregate, replaced by a second pause, lifted once', async () => {
        expect(await store.pauses.list()).toEqual([]);
        await store.pauses.set({ aggregate: null, by: 'operator:alice', at: T0, reason: 'incident 42' });
        await store.pauses.set({ aggregate: 'gold', by: 'operator:bob', at: minutes(1), reason: null });
        await store.pauses.set({ aggregate: 'gold', by: 'operator:carol', at: minutes(2), reason: 'again' });
        expect(await store.pauses.list()).toEqual([
          { aggregate: null, by: 'operator:alice', at: T0, reason: 'incident 42' },
          { aggregate: 'gold', by: 'operator:carol', at: minutes(2), reason: 'again' },
        ]);
        expect(await store.pauses.clear('gold')).toBe(true);
        expect(await store.pauses.clear('gold')).toBe(false);
        expect(await store.pauses.clear(null)).toBe(true);
        expect(await store.pauses.list()).toEqual([]);
        await expect(store.pauses.set({ aggregate: '', by: 'x', at: T0, reason: null })).rejects.toThrow(
          /needs a name/,
        );
      });

      it('abort requests: the first request stands, listed oldest first, cleared once', async () => {
        expect(await store.abortRequests.list()).toEqual([]);
        await store.abortRequests.request({ executionId: 'e2', by: 'operator:bob', at: minutes(1) });
        await store.abortRequests.request({ executionId: 'e1', by: 'operator:alice', at: T0 });
        await store.abortRequests.request({ executionId: 'e1', by: 'operator:carol', at: minutes(2) });
        expect(await store.abortRequests.list()).toEqual([
          { executionId: 'e1', by: 'operator:alice', at: T0 },
          { executionId: 'e2', by: 'operator:bob', at: minutes(1) },
        ]);
        expect(await store.abortRequests.clear('e1')).toBe(true);
        expect(await store.abortRequests.clear('e1')).toBe(false);
        expect((await store.abortRequests.list()).map((r) => r.executionId)).toEqual(['e2']);
      });

      it('an aggregate named like a case variant of another is its own scope (binary collation)', async () => {
        await store.pauses.set({ aggregate: 'Gold', by: 'a', at: T0, reason: null });
        await store.pauses.set({ aggregate: 'gold', by: 'b', at: T0, reason: null });
        expect((await store.pauses.list()).map((p) => p.aggregate)).toEqual(['Gold', 'gold']);
      });

      it('history: points per aggregate, newest first, since a time, paged, purged by retention', async () => {
        for (let i = 0; i < 5; i++)
          await store.history.record({
            aggregate: i % 2 === 0 ? 'gold' : 'silver',
            at: minutes(i),
            imbalance: 0.1 * (i + 1),
            dimensions: {
              cpu: { stddev: 0.01 * i, max: 0.5, mean: 0.3 },
              memory: { stddev: 0.02, max: 0.4 },
            },
            hosts: 3,
            planMoves: i,
          });
        const gold = await store.history.list({ aggregate: 'gold' });
        expect(gold.items.map((p) => p.at)).toEqual([minutes(4), minutes(2), minutes(0)]);
        expect(gold.items[0]).toMatchObject({
          imbalance: 0.5,
          dimensions: { cpu: { stddev: 0.04, max: 0.5, mean: 0.3 }, memory: { stddev: 0.02, max: 0.4 } },
          hosts: 3,
          planMoves: 4,
        });
        expect((await store.history.list({ aggregate: 'gold', since: minutes(1) })).items).toHaveLength(2);
        const first = await store.history.list({}, { limit: 2 });
        expect(first.items).toHaveLength(2);
        const second = await store.history.list({}, { limit: 2, cursor: first.nextCursor });
        expect(second.items.map((p) => p.at)).toEqual([minutes(2), minutes(1)]);
        await expect(
          store.history.record({
            aggregate: 'x',
            at: T0,
            imbalance: Number.NaN,
            dimensions: {},
            hosts: 1,
            planMoves: 0,
          }),
        ).rejects.toThrow(/imbalance must be a number/);
        const counts = await store.retention.purge({ history: 1 / 24 / 60 }, minutes(3));
        expect(counts.history).toBe(2);
        expect((await store.history.list({})).items.map((p) => p.at)).toEqual([
          minutes(4),
          minutes(3),
          minutes(2),
        ]);
      });
    });
  },
);
