// The maintenance campaigns table on SQLite and MariaDB: a campaign round-trips whole (settings
// and every host's progress), lists newest first with filters, and every write is a
// compare-and-set: one made on a stale version writes nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newHostProgress } from '../../src/maintenance/types.js';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const T0 = '2026-11-30T12:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const settings = {
  parallel: 2,
  validate: true,
  returnWhen: 'done' as const,
  webhook: null,
  command: ['/bin/true'],
};

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'maintenance campaigns on %s',
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

      const create = (aggregate: string, hosts: string[]) =>
        store.maintenance.create({
          aggregate,
          requestedBy: 'operator:alice',
          requestedAt: T0,
          settings,
          hosts: hosts.map(newHostProgress),
        });

      it('keeps a campaign whole, RUNNING, at version 1', async () => {
        const c = await create('rack-1', ['Compute5', 'compute5']);
        expect(c).toEqual({
          id: c.id,
          aggregate: 'rack-1',
          state: 'RUNNING',
          requestedBy: 'operator:alice',
          requestedAt: T0,
          settings,
          hosts: [newHostProgress('Compute5'), newHostProgress('compute5')],
          note: null,
          taskId: null,
          abortRequested: false,
          version: 1,
          updatedAt: T0,
          endedAt: null,
        });
        expect(await store.maintenance.get(c.id)).toEqual(c);
        expect(await store.maintenance.get('nope')).toBeNull();
        await expect(create('rack-1', [])).rejects.toThrow(/at least one host/);
      });

      it('writes only on the version read; lists newest first, by state and aggregate', async () => {
        const a = await create('rack-1', ['h1']);
        const b = await create('rack-2', ['h2']);
        const hosts = [{ ...a.hosts[0]!, state: 'draining' as const, startedAt: at(1), note: 'evacuating' }];
        const written = await store.maintenance.update(a.id, 1, { hosts, taskId: '7', note: 'x' }, at(1));
        expect(written).toMatchObject({ version: 2, hosts, taskId: '7', note: 'x', updatedAt: at(1) });
        // A write on the stale version changes nothing.
        expect(await store.maintenance.update(a.id, 1, { state: 'PAUSED' }, at(2))).toBeNull();
        expect((await store.maintenance.get(a.id))?.state).toBe('RUNNING');
        await store.maintenance.update(
          b.id,
          1,
          { state: 'DONE', endedAt: at(3), abortRequested: true },
          at(3),
        );
        expect((await store.maintenance.list()).items.map((c) => c.id)).toEqual([b.id, a.id]);
        expect((await store.maintenance.list({ state: 'DONE' })).items.map((c) => c.id)).toEqual([b.id]);
        expect((await store.maintenance.list({ aggregate: 'rack-1' })).items.map((c) => c.id)).toEqual([
          a.id,
        ]);
        expect((await store.maintenance.unfinished()).map((c) => c.id)).toEqual([a.id]);
        expect(await store.maintenance.get(b.id)).toMatchObject({ abortRequested: true, endedAt: at(3) });
        const page = await store.maintenance.list({}, { limit: 1 });
        expect(page.items.map((c) => c.id)).toEqual([b.id]);
        expect(
          (await store.maintenance.list({}, { limit: 1, cursor: page.nextCursor })).items.map((c) => c.id),
        ).toEqual([a.id]);
      });
    });
  },
);
