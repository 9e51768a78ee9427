import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const T0 = '2026-11-30T12:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'tasks on %s',
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

      const request = (batch: string, hosts: string[][]) =>
        store.tasks.create({
          requestedBy: 'operator:alice',
          requestedAt: T0,
          batch,
          tasks: hosts.map((h, i) => ({
            kind: 'validate-compute',
            args: { host: h[0] ?? null, n: i },
            hosts: h,
            afterBatch: h.length === 0,
          })),
        });

      it('creates a request as SCHEDULED tasks of one batch, in order', async () => {
        const created = await request('b1', [['compute5'], ['compute_6'], []]);
        expect(created.map((t) => [t.state, t.hosts, t.afterBatch, t.version])).toEqual([
          ['SCHEDULED', ['compute5'], false, 1],
          ['SCHEDULED', ['compute_6'], false, 1],
          ['SCHEDULED', [], true, 1],
        ]);
        expect(created[0]).toMatchObject({
          kind: 'validate-compute',
          args: { host: 'compute5', n: 0 },
          requestedBy: 'operator:alice',
          requestedAt: T0,
          batch: 'b1',
          progress: { done: 0, total: null, detail: 'scheduled' },
          result: null,
          error: null,
          checkpoint: null,
          owner: null,
          cancelRequested: false,
          attempts: 0,
          endedAt: null,
        });
        expect(await store.tasks.get(created[1]!.id)).toEqual(created[1]);
        expect(await store.tasks.get('nope')).toBeNull();
      });

      it('lists newest first with filters and pages that join up', async () => {
        const a = await request('b1', [['compute5'], ['computeX6']]);
        const b = await request('b2', [['compute6']]);
        const all = [...a, ...b].map((t) => t.id).reverse();
        const first = await store.tasks.list({}, { limit: 2 });
        expect(first.items.map((t) => t.id)).toEqual(all.slice(0, 2));
        const second = await store.tasks.list({}, { limit: 2, cursor: first.nextCursor });
        expect(second.items.map((t) => t.id)).toEqual(all.slice(2));
        expect(second.nextCursor).toBeNull();
        expect((await store.tasks.list({ batch: 'b1' })).items).toHaveLength(2);
        // `_` in a host name is no wildcard: compute_6 does not match computeX6.
        await request('b3', [['compute_6']]);
        expect((await store.tasks.list({ host: 'compute_6' })).items.map((t) => t.hosts)).toEqual([
          ['compute_6'],
        ]);
        expect((await store.tasks.list({ host: 'compute6' })).items.map((t) => t.id)).toEqual([b[0]!.id]);
        expect((await store.tasks.list({ state: 'RUNNING' })).items).toEqual([]);
        expect((await store.tasks.list({ kind: 'validate-compute' })).items).toHaveLength(4);
      });

      it('switches state only from the version it read', async () => {
        const [t] = await request('b1', [['compute5']]);
        const running = await store.tasks.update(
          t!.id,
          t!.version,
          { state: 'RUNNING', owner: 'w1', attempts: 1, startedAt: at(1), heartbeatAt: at(1) },
          at(1),
        );
        expect(running).toMatchObject({
          state: 'RUNNING',
          owner: 'w1',
          attempts: 1,
          version: 2,
          updatedAt: at(1),
        });
        // A second worker that read version 1 decides nothing.
        expect(
          await store.tasks.update(t!.id, t!.version, { state: 'RUNNING', owner: 'w2' }, at(1)),
        ).toBeNull();
        expect((await store.tasks.get(t!.id))?.owner).toBe('w1');
      });

      it("keeps a running task's own writes to its owner", async () => {
        const [t] = await request('b1', [['compute5']]);
        await store.tasks.update(t!.id, t!.version, { state: 'RUNNING', owner: 'w1' }, at(1));
        const saved = await store.tasks.updateRunning(
          t!.id,
          'w1',
          {
            progress: { done: 2, total: 5, detail: 'moving web-2' },
            checkpoint: { phase: 'live', done: ['a'] },
          },
          at(2),
        );
        expect(saved).toMatchObject({
          progress: { done: 2, total: 5, detail: 'moving web-2' },
          checkpoint: { phase: 'live', done: ['a'] },
          version: 3,
        });
        expect(await store.tasks.updateRunning(t!.id, 'w2', { heartbeatAt: at(3) }, at(3))).toBeNull();
        await store.tasks.update(t!.id, 3, { state: 'DONE', endedAt: at(4), result: { moved: 2 } }, at(4));
        expect(await store.tasks.updateRunning(t!.id, 'w1', { heartbeatAt: at(5) }, at(5))).toBeNull();
      });

      it('lists unfinished tasks oldest first and purges only DONE tasks past the cutoff', async () => {
        const ts = await request('b1', [['c1'], ['c2'], ['c3'], ['c4']]);
        const [done, error, old, waiting] = ts as [
          (typeof ts)[0],
          (typeof ts)[0],
          (typeof ts)[0],
          (typeof ts)[0],
        ];
        await store.tasks.update(done.id, 1, { state: 'DONE', endedAt: at(10) }, at(10));
        await store.tasks.update(error.id, 1, { state: 'ERROR', endedAt: at(5), error: 'boom' }, at(5));
        await store.tasks.update(old.id, 1, { state: 'DONE', endedAt: at(60) }, at(60));
        await store.tasks.update(
          waiting.id,
          1,
          { state: 'WAITING', waitingReason: 'host c4 is held' },
          at(1),
        );
        expect((await store.tasks.unfinished()).map((t) => t.id)).toEqual([waiting.id]);
        expect(await store.tasks.deleteDone(at(30))).toBe(1);
        expect(await store.tasks.get(done.id)).toBeNull();
        expect((await store.tasks.get(error.id))?.error).toBe('boom');
        expect(await store.tasks.get(old.id)).not.toBeNull();
        expect(await store.tasks.deleteDone(at(24 * 60))).toBe(1);
        expect((await store.tasks.list()).items.map((t) => t.state).sort()).toEqual(['ERROR', 'WAITING']);
      });
    });
  },
);
