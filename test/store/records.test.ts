import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewCostSample, Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';

const T0 = '2026-11-30T12:00:00.000Z';
const T1 = '2026-11-30T12:10:00.000Z';
const T2 = '2026-11-30T13:00:00.000Z';
const minutes = (n: number) => new Date(Date.parse(T0) + n * 60_000).toISOString();

/** Reads every page of a list with a small page size, checking the pages join up exactly. */
async function allPages<T>(
  read: (page: {
    limit: number;
    cursor: string | null;
  }) => Promise<{ items: T[]; nextCursor: string | null }>,
  limit = 2,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const page = await read({ limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    all.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) return all;
  }
  throw new Error('paging never ended');
}

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'records on %s',
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

      it('cooldowns: the latest move per server and per aggregate, never moved back in time', async () => {
        await store.cooldowns.recordMove({
          serverId: 's1',
          aggregate: 'gold',
          lastMovedAt: T1,
          from: 'c1',
          to: 'c2',
        });
        // A late record of an older move (reconciled after a restart) changes nothing.
        await store.cooldowns.recordMove({
          serverId: 's1',
          aggregate: 'gold',
          lastMovedAt: T0,
          from: 'c9',
          to: 'c1',
        });
        expect(await store.cooldowns.getServer('s1')).toEqual({
          serverId: 's1',
          aggregate: 'gold',
          lastMovedAt: T1,
          from: 'c1',
          to: 'c2',
        });
        expect(await store.cooldowns.getAggregate('gold')).toEqual({
          aggregate: 'gold',
          lastMovedAt: T1,
          serverId: 's1',
        });
        await store.cooldowns.recordMove({
          serverId: 's1',
          aggregate: 'gold',
          lastMovedAt: T2,
          from: 'c2',
          to: 'c3',
        });
        await store.cooldowns.recordMove({
          serverId: 's2',
          aggregate: 'gold',
          lastMovedAt: T0,
          from: 'c1',
          to: 'c3',
        });
        await store.cooldowns.recordMove({
          serverId: 'S1',
          aggregate: 'silver',
          lastMovedAt: T0,
          from: 'x',
          to: 'y',
        });
        expect(await store.cooldowns.getServer('s1')).toMatchObject({
          lastMovedAt: T2,
          from: 'c2',
          to: 'c3',
        });
        // Ids compare exactly (MariaDB's default collation would call s1 and S1 the same).
        expect(await store.cooldowns.getServer('S1')).toMatchObject({ aggregate: 'silver' });
        expect(await store.cooldowns.getAggregate('gold')).toEqual({
          aggregate: 'gold',
          lastMovedAt: T2,
          serverId: 's1',
        });
        expect(await store.cooldowns.getServer('nope')).toBeNull();
        const gold = await allPages((p) => store.cooldowns.listServers({ aggregate: 'gold' }, p), 1);
        expect(gold.map((c) => c.serverId)).toEqual(['s1', 's2']);
        const recent = await store.cooldowns.listServers({ movedSince: T1 });
        expect(recent.items.map((c) => c.serverId)).toEqual(['s1']);
        expect((await allPages((p) => store.cooldowns.listAggregates(p), 1)).map((a) => a.aggregate)).toEqual(
          ['gold', 'silver'],
        );
      });

      it('quarantine: one unreleased entry per server, updated by later failures, released by an operator', async () => {
        const first = await store.quarantine.quarantine({
          serverId: 's1',
          aggregate: 'gold',
          reason: 'live migration failed 3 times',
          novaFault: 'MigrationPreCheckError',
          attempts: 3,
          at: T0,
        });
        expect(first).toMatchObject({
          serverId: 's1',
          since: T0,
          updatedAt: T0,
          attempts: 3,
          releasedAt: null,
        });
        const again = await store.quarantine.quarantine({
          serverId: 's1',
          aggregate: 'gold',
          reason: 'failed again',
          novaFault: null,
          attempts: 4,
          at: T1,
        });
        expect(again).toMatchObject({
          id: first.id,
          since: T0,
          updatedAt: T1,
          attempts: 4,
          reason: 'failed again',
          novaFault: null,
        });
        expect(await store.quarantine.active('s1')).toEqual(again);
        expect(await store.quarantine.release('s1', '', T2).catch((e: Error) => e.message)).toMatch(
          /names who releases/,
        );
        const released = await store.quarantine.release('s1', 'operator:alice', T2);
        expect(released).toMatchObject({ id: first.id, releasedBy: 'operator:alice', releasedAt: T2 });
        expect(await store.quarantine.active('s1')).toBeNull();
        expect(await store.quarantine.release('s1', 'operator:alice', T2)).toBeNull();
        // Quarantined again after release: a new entry; the old one stays as history.
        const second = await store.quarantine.quarantine({
          serverId: 's1',
          aggregate: 'gold',
          reason: 'r',
          attempts: 1,
          at: T2,
        });
        expect(second.id).not.toBe(first.id);
        await store.quarantine.quarantine({
          serverId: 's2',
          aggregate: 'silver',
          reason: 'r',
          attempts: 1,
          at: T2,
        });
        expect((await store.quarantine.list()).items.map((q) => q.id)).toEqual([
          (await store.quarantine.active('s2'))!.id,
          second.id,
        ]);
        expect((await store.quarantine.list({ state: 'released' })).items.map((q) => q.id)).toEqual([
          first.id,
        ]);
        const all = await allPages((p) => store.quarantine.list({ state: 'all', serverId: 's1' }, p), 1);
        expect(all.map((q) => q.id)).toEqual([second.id, first.id]);
        expect((await store.quarantine.list({ aggregate: 'silver' })).items).toHaveLength(1);
      });

      it('quarantine: concurrent quarantines of one server leave one unreleased entry', async () => {
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.quarantine.quarantine({
              serverId: 's1',
              aggregate: 'gold',
              reason: `r${i}`,
              attempts: i,
              at: T0,
            }),
          ),
        );
        expect((await store.quarantine.list({ state: 'all' })).items).toHaveLength(1);
      });

      it('cost samples: added once per source key, listed newest first with filters', async () => {
        const sample = (i: number, over: Partial<NewCostSample> = {}): NewCostSample => ({
          aggregate: 'gold',
          serverId: `s${i}`,
          ramMB: 1024 * i,
          dirtyRateMBps: i % 2 === 0 ? 12.5 : null,
          durationSeconds: 10 + i,
          outcome: 'completed',
          source: 'nova-history',
          sourceKey: `mig-${i}`,
          at: minutes(i),
          ...over,
        });
        expect(await store.costSamples.add([sample(1), sample(2), sample(3)])).toBe(3);
        // The history re-read next cycle: only the new one is added (and duplicates within a batch once).
        expect(await store.costSamples.add([sample(2), sample(3), sample(4), sample(4)])).toBe(1);
        // The same key from another source is another sample; samples without a key always add.
        expect(
          await store.costSamples.add([
            sample(1, { source: 'own' }),
            sample(5, { source: 'own', sourceKey: null }),
          ]),
        ).toBe(2);
        expect(await store.costSamples.add([sample(6, { source: 'own', sourceKey: null })])).toBe(1);
        const all = await allPages((p) => store.costSamples.list({}, p));
        expect(all).toHaveLength(7);
        expect(all[0]).toMatchObject({
          serverId: 's6',
          source: 'own',
          sourceKey: null,
          dirtyRateMBps: 12.5,
          ramMB: 6144,
        });
        expect(all.find((s) => s.serverId === 's1' && s.source === 'nova-history')).toMatchObject({
          dirtyRateMBps: null,
          durationSeconds: 11,
          outcome: 'completed',
          at: minutes(1),
        });
        expect((await store.costSamples.list({ source: 'own' })).items).toHaveLength(3);
        expect((await store.costSamples.list({ serverId: 's2' })).items).toHaveLength(1);
        expect(
          (await store.costSamples.list({ since: minutes(4) })).items.map((s) => s.serverId).sort(),
        ).toEqual(['s4', 's5', 's6']);
        await expect(store.costSamples.add([sample(9, { durationSeconds: -1 })])).rejects.toThrow(
          /\[0\]\.durationSeconds must be a number >= 0/,
        );
        await expect(
          store.costSamples.add([sample(9, { outcome: 'lost' as NewCostSample['outcome'] })]),
        ).rejects.toThrow(/outcome must be one of/);
      });

      it('ratio changes: recorded with reason and generation, latest per host and class', async () => {
        const base = {
          host: 'c1',
          resourceClass: 'VCPU',
          reason: 'CPU contention 31% for 15 min',
          by: 'prevention',
        };
        await store.ratioChanges.record({ ...base, oldRatio: 4, newRatio: 3, generation: 7, at: T0 });
        const last = await store.ratioChanges.record({
          ...base,
          oldRatio: 3,
          newRatio: 2.5,
          generation: 9,
          at: T1,
        });
        await store.ratioChanges.record({
          ...base,
          host: 'c2',
          oldRatio: 4,
          newRatio: 3.5,
          generation: 1,
          at: T1,
        });
        expect(await store.ratioChanges.latest('c1', 'VCPU')).toEqual(last);
        expect(last).toMatchObject({ oldRatio: 3, newRatio: 2.5, generation: 9, at: T1, by: 'prevention' });
        expect(await store.ratioChanges.latest('c1', 'MEMORY_MB')).toBeNull();
        expect(
          (await allPages((p) => store.ratioChanges.list({ host: 'c1' }, p), 1)).map((c) => c.generation),
        ).toEqual([9, 7]);
        expect((await store.ratioChanges.list({ since: T1 })).items).toHaveLength(2);
        await expect(
          store.ratioChanges.record({ ...base, oldRatio: 0, newRatio: 2, generation: 1, at: T0 }),
        ).rejects.toThrow(/oldRatio must be a number > 0/);
      });

      it('data health: verdicts with reasons, latest per aggregate', async () => {
        await store.dataHealth.record({ aggregate: 'gold', verdict: 'ok', reasons: [], at: T0 });
        const blocked = await store.dataHealth.record({
          aggregate: 'gold',
          verdict: 'blocked',
          reasons: ['Prometheus data is 14 min old', 'host c3 missing from Placement'],
          at: T1,
        });
        await store.dataHealth.record({ aggregate: 'silver', verdict: 'ok', reasons: [], at: T2 });
        expect(await store.dataHealth.latest('gold')).toEqual(blocked);
        expect(await store.dataHealth.latest('bronze')).toBeNull();
        expect((await store.dataHealth.list({ verdict: 'blocked' })).items).toEqual([blocked]);
        expect((await allPages((p) => store.dataHealth.list({}, p))).map((r) => r.aggregate)).toEqual([
          'silver',
          'gold',
          'gold',
        ]);
        await expect(
          store.dataHealth.record({ aggregate: 'gold', verdict: 'blocked', reasons: [], at: T0 }),
        ).rejects.toThrow(/must say why/);
      });

      it('snapshots: metadata recorded and listed', async () => {
        const a = await store.snapshots.record({
          takenAt: T0,
          aggregate: 'gold',
          path: '/var/lib/a.json.gz',
          sizeBytes: 123456,
          recordedAt: T0,
        });
        const b = await store.snapshots.record({ takenAt: T1, recordedAt: T1 });
        expect(await store.snapshots.get(a.id)).toEqual({
          id: a.id,
          takenAt: T0,
          aggregate: 'gold',
          path: '/var/lib/a.json.gz',
          sizeBytes: 123456,
          recordedAt: T0,
        });
        expect(b).toMatchObject({ aggregate: null, path: null, sizeBytes: null });
        expect((await store.snapshots.list()).items.map((s) => s.id)).toEqual([b.id, a.id]);
        expect((await store.snapshots.list({ aggregate: 'gold' })).items.map((s) => s.id)).toEqual([a.id]);
        expect(await store.snapshots.get('x')).toBeNull();
      });

      it('audit log: every action with actor and credential, filtered by actor, action, target and time', async () => {
        const entries = [
          {
            actor: 'operator:alice',
            credential: 'token:ops-1',
            action: 'plan.approve',
            target: 'plan:1',
            at: T0,
          },
          { actor: 'loop:gold', action: 'migration.start', target: 'server:s1', at: minutes(5) },
          {
            actor: 'operator:alice',
            credential: 'token:ops-1',
            action: 'quarantine.release',
            target: 'server:s1',
            at: T1,
          },
          { actor: 'operator:bob', action: 'plan.reject', target: 'plan:2', at: T2 },
        ];
        for (const e of entries)
          await store.audit.record({ ...e, detail: { note: `${e.action} ✓`, n: [1, 2] } });
        const alice = await store.audit.list({ actor: 'operator:alice' });
        expect(alice.items.map((e) => e.action)).toEqual(['quarantine.release', 'plan.approve']);
        expect(alice.items[1]).toMatchObject({
          credential: 'token:ops-1',
          target: 'plan:1',
          at: T0,
          detail: { note: 'plan.approve ✓', n: [1, 2] },
        });
        expect((await store.audit.list({ target: 'server:s1' })).items).toHaveLength(2);
        expect((await store.audit.list({ action: 'plan.reject' })).items[0]?.credential).toBeNull();
        expect((await store.audit.list({ from: minutes(5), before: T2 })).items.map((e) => e.action)).toEqual(
          ['quarantine.release', 'migration.start'],
        );
        expect((await allPages((p) => store.audit.list({}, p), 3)).map((e) => e.target)).toEqual([
          'plan:2',
          'server:s1',
          'server:s1',
          'plan:1',
        ]);
        await expect(store.audit.record({ actor: '', action: 'a', target: 't', at: T0 })).rejects.toThrow(
          /names its actor/,
        );
      });

      it('executions: listed newest first, filtered and paged', async () => {
        for (let i = 0; i < 5; i++)
          await store.createExecution(
            {
              id: `exec-${i}`,
              aggregate: i < 3 ? 'gold' : 'silver',
              planId: String(i),
              // Two executions start at the same instant: the id breaks the tie.
              startedAt: minutes(Math.min(i, 3)),
              startedBy: 'loop:active',
            },
            [],
          );
        await store.finishExecution('exec-1', 'finished', T1);
        const all = await allPages((p) => store.executions.list({}, p));
        expect(all.map((e) => e.id)).toEqual(['exec-4', 'exec-3', 'exec-2', 'exec-1', 'exec-0']);
        expect(
          (await store.executions.list({ aggregate: 'gold', state: 'running' })).items.map((e) => e.id),
        ).toEqual(['exec-2', 'exec-0']);
        expect((await store.executions.list({ planId: '1' })).items[0]).toMatchObject({
          id: 'exec-1',
          state: 'finished',
          endedAt: T1,
        });
        expect((await store.executions.list({ startedFrom: minutes(3) })).items).toHaveLength(2);
      });
    });
  },
);
