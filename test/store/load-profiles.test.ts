// Load profiles on both backends: one row per aggregate, replaced whole, read back as written.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredAggregateProfiles } from '../../src/cloud/profiles/port.js';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const stored = (aggregate: string, refreshedAt: string, cpu: number): StoredAggregateProfiles => ({
  aggregate,
  refreshedAt,
  from: '2026-11-16T00:00:00.000Z',
  to: refreshedAt,
  settings: { resolution: 'hour-of-day', quantile: 0.9, timeZone: 'UTC', minSamples: 2, historyDays: 14 },
  servers: {
    s1: { cpu: Array.from({ length: 48 }, (_, i) => (i === 3 ? null : cpu)), samples: Array(48).fill(10) },
  },
  error: { meanAbsolute: 0.05, hours: 24, from: '2026-11-29T00:00:00.000Z', to: '2026-11-29T23:00:00.000Z' },
});

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'load profiles on %s',
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

      it('keeps one document per aggregate, replaced by the next refresh', async () => {
        expect(await store.profiles.list()).toEqual([]);
        await store.profiles.put(stored('gold', '2026-11-30T00:00:00.000Z', 1.5));
        await store.profiles.put(stored('bronze', '2026-11-30T00:00:00.000Z', 2));
        await store.profiles.put(stored('gold', '2026-12-01T00:00:00.000Z', 2.5));
        expect(await store.profiles.list()).toEqual([
          stored('bronze', '2026-11-30T00:00:00.000Z', 2),
          stored('gold', '2026-12-01T00:00:00.000Z', 2.5),
        ]);
        await expect(store.profiles.put(stored('', '2026-12-01T00:00:00.000Z', 1))).rejects.toThrow(
          /aggregate name/,
        );
      });
    });
  },
);
