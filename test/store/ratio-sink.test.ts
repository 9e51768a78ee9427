import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InMemoryRatioChangeSink,
  type RatioChangeRecord,
  type RatioChangeSink,
} from '../../src/prevention/sink.js';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const rec = (over: Partial<RatioChangeRecord>): RatioChangeRecord => ({
  changeId: 'c1',
  host: 'compute-1',
  rpUuid: 'rp-1',
  aggregate: 'gold',
  from: 4,
  to: 3.5,
  reason: 'cpu 91% >= 85%',
  state: 'intended',
  at: '2026-11-30T10:00:00.000Z',
  ...over,
});

// The same sequence on the reference sink and on the store must read back the same.
async function exercise(sink: RatioChangeSink) {
  await sink.record(rec({}));
  await sink.record(rec({ state: 'written', at: '2026-11-30T10:00:01.000Z' }));
  await sink.record(rec({ changeId: 'c2', host: 'compute-2', rpUuid: 'rp-2', state: 'intended' }));
  await sink.record(
    rec({
      changeId: 'c2',
      host: 'compute-2',
      rpUuid: 'rp-2',
      state: 'abandoned',
      detail: 'usage: would not fit',
    }),
  );
  await sink.pin({
    host: 'compute-3',
    rpUuid: 'rp-3',
    expected: 4,
    found: 16,
    at: '2026-11-30T10:00:02.000Z',
    reason: 'nova.conf',
  });
  await sink.pin({
    host: 'compute-4',
    rpUuid: 'rp-4',
    expected: 4,
    found: 8,
    at: '2026-11-30T10:00:02.000Z',
    reason: 'x',
  });
  await sink.pin({
    host: 'compute-4',
    rpUuid: 'rp-4',
    expected: 3,
    found: 9,
    at: '2026-11-30T10:00:03.000Z',
    reason: 'y',
  });
  await sink.unpin('compute-3');
  return {
    last: Object.fromEntries(await sink.lastChanges()),
    pinned: Object.fromEntries(await sink.pinned()),
  };
}

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'ratio change sink on %s',
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

      it('reads back like the reference sink: newest record per host, pins replaced and removed', async () => {
        const expected = await exercise(new InMemoryRatioChangeSink());
        const got = await exercise(store.ratioSink);
        expect(got).toEqual(expected);
        expect(got.last['compute-1']!.state).toBe('written');
        expect(got.last['compute-2']!.detail).toBe('usage: would not fit');
        expect(Object.keys(got.pinned)).toEqual(['compute-4']);
      });

      it('enters written changes in the ratio history people read', async () => {
        await exercise(store.ratioSink);
        const page = await store.ratioChanges.list({ host: 'compute-1' });
        expect(page.items).toEqual([
          expect.objectContaining({
            host: 'compute-1',
            resourceClass: 'VCPU',
            oldRatio: 4,
            newRatio: 3.5,
            by: 'prevention',
          }),
        ]);
        expect((await store.ratioChanges.list({ host: 'compute-2' })).items).toEqual([]);
      });
    });
  },
);
