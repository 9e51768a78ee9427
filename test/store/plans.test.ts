import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { openFresh, type TestBackend, testBackends } from './backends.js';
import { planFor } from './fixtures/plan.js';

const T0 = '2026-11-30T12:00:00.000Z';
const T1 = '2026-11-30T12:10:00.000Z';
const T2 = '2026-11-30T13:00:00.000Z';

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'plans on %s',
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

      it('stores a plan with its metadata and returns the document unchanged', async () => {
        const plan = planFor('gold', 3);
        const stored = await store.plans.create({
          aggregate: 'gold',
          mode: 'assisted',
          plan,
          createdAt: T0,
          expiresAt: T2,
        });
        expect(stored).toMatchObject({
          aggregate: 'gold',
          mode: 'assisted',
          status: 'proposed',
          snapshotTakenAt: '2026-11-30T11:59:00.000Z',
          createdAt: T0,
          statusChangedAt: T0,
          expiresAt: T2,
          moveCount: 3,
        });
        const read = await store.plans.get(stored.id);
        expect(read).toEqual(stored);
        expect(read?.plan).toEqual(plan);
        expect(await store.plans.get('999')).toBeNull();
        expect(await store.plans.get('not-an-id')).toBeNull();
      });

      it('refuses a plan that is invalid or covers another aggregate, storing nothing', async () => {
        const bad = { ...planFor('gold', 1), format: 'aicerine-plan/9' } as unknown as ReturnType<
          typeof planFor
        >;
        await expect(
          store.plans.create({ aggregate: 'gold', mode: 'observe', plan: bad, createdAt: T0 }),
        ).rejects.toThrow(/format/);
        await expect(
          store.plans.create({
            aggregate: 'silver',
            mode: 'observe',
            plan: planFor('gold', 1),
            createdAt: T0,
          }),
        ).rejects.toThrow(/no aggregate "silver"/);
        await expect(
          store.plans.create({
            aggregate: 'gold',
            mode: 'observe',
            plan: planFor('gold', 1),
            createdAt: 'yesterday',
          }),
        ).rejects.toThrow(/createdAt must be an ISO-8601 time/);
        expect((await store.plans.list()).items).toEqual([]);
      });

      it('derives the status from per-move decisions and keeps who decided', async () => {
        const { id } = await store.plans.create({
          aggregate: 'gold',
          mode: 'assisted',
          plan: planFor('gold', 3),
          createdAt: T0,
        });
        let summary = await store.plans.decide(id, {
          steps: [1],
          decision: 'approved',
          by: 'operator:alice',
          at: T1,
        });
        expect(summary.status).toBe('partially-approved');
        expect(summary.statusChangedAt).toBe(T1);
        summary = await store.plans.decide(id, {
          steps: [2, 3],
          decision: 'rejected',
          by: 'operator:bob',
          comment: 'not during the sale',
          at: T1,
        });
        expect(summary.status).toBe('partially-approved');
        summary = await store.plans.decide(id, {
          steps: [1],
          decision: 'rejected',
          by: 'operator:bob',
          at: T1,
        });
        expect(summary.status).toBe('rejected');
        await expect(
          store.plans.decide(id, { steps: 'all', decision: 'approved', by: 'x', at: T1 }),
        ).rejects.toThrow(/is rejected; decisions are taken on open plans only/);
        expect(await store.plans.decisions(id)).toEqual([
          {
            planId: id,
            step: 1,
            decision: 'rejected',
            decidedBy: 'operator:bob',
            comment: null,
            decidedAt: T1,
          },
          {
            planId: id,
            step: 2,
            decision: 'rejected',
            decidedBy: 'operator:bob',
            comment: 'not during the sale',
            decidedAt: T1,
          },
          {
            planId: id,
            step: 3,
            decision: 'rejected',
            decidedBy: 'operator:bob',
            comment: 'not during the sale',
            decidedAt: T1,
          },
        ]);

        const whole = await store.plans.create({
          aggregate: 'gold',
          mode: 'assisted',
          plan: planFor('gold', 2),
          createdAt: T0,
        });
        const approved = await store.plans.decide(whole.id, {
          steps: 'all',
          decision: 'approved',
          by: 'operator:alice',
          at: T1,
          expiresAt: T2,
        });
        expect(approved).toMatchObject({ status: 'approved', expiresAt: T2 });
        await expect(
          store.plans.decide(whole.id, { steps: [7], decision: 'approved', by: 'a', at: T1 }),
        ).rejects.toThrow(/has no step 7/);
        await expect(
          store.plans.decide('424242', { steps: 'all', decision: 'approved', by: 'a', at: T1 }),
        ).rejects.toThrow(/no plan 424242/);
      });

      it('expires open plans past their expiry and refuses decisions on them', async () => {
        const soon = await store.plans.create({
          aggregate: 'gold',
          mode: 'assisted',
          plan: planFor('gold', 1),
          createdAt: T0,
          expiresAt: T1,
        });
        const never = await store.plans.create({
          aggregate: 'gold',
          mode: 'assisted',
          plan: planFor('gold', 1),
          createdAt: T0,
        });
        await expect(
          store.plans.decide(soon.id, { steps: 'all', decision: 'approved', by: 'a', at: T2 }),
        ).rejects.toThrow(/expired at 2026-11-30T12:10:00.000Z/);
        expect(await store.plans.expireDue(T0)).toEqual([]);
        expect(await store.plans.expireDue(T2)).toEqual([soon.id]);
        expect((await store.plans.get(soon.id))?.status).toBe('expired');
        expect((await store.plans.get(never.id))?.status).toBe('proposed');
      });

      it('moves status by compare-and-set, and supersedes older open plans of the aggregate', async () => {
        const a = await store.plans.create({
          aggregate: 'gold',
          mode: 'active',
          plan: planFor('gold', 1),
          createdAt: T0,
          status: 'approved',
        });
        const b = await store.plans.create({
          aggregate: 'gold',
          mode: 'active',
          plan: planFor('gold', 1),
          createdAt: T0,
        });
        const other = await store.plans.create({
          aggregate: 'silver',
          mode: 'active',
          plan: planFor('silver', 1),
          createdAt: T0,
        });
        expect(await store.plans.setStatus(a.id, ['approved'], 'executed', T1)).toBe(true);
        expect(await store.plans.setStatus(a.id, ['approved'], 'executed', T1)).toBe(false);
        await expect(store.plans.setStatus('777', ['approved'], 'executed', T1)).rejects.toThrow(
          /no plan 777/,
        );
        const c = await store.plans.create({
          aggregate: 'gold',
          mode: 'active',
          plan: planFor('gold', 1),
          createdAt: T1,
        });
        expect(await store.plans.supersedeOthers('gold', c.id, T1)).toEqual([b.id]);
        expect((await store.plans.get(a.id))?.status).toBe('executed');
        expect((await store.plans.get(b.id))?.status).toBe('superseded');
        expect((await store.plans.get(c.id))?.status).toBe('proposed');
        expect((await store.plans.get(other.id))?.status).toBe('proposed');
      });

      it('lists newest first, filtered and paged without gaps or repeats', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 7; i++) {
          const aggregate = i % 2 === 0 ? 'gold' : 'silver';
          const createdAt = new Date(Date.parse(T0) + i * 60_000).toISOString();
          ids.push(
            (await store.plans.create({ aggregate, mode: 'observe', plan: planFor(aggregate, i), createdAt }))
              .id,
          );
        }
        await store.plans.setStatus(ids[0]!, ['proposed'], 'superseded', T1);
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await store.plans.list({ aggregate: 'gold' }, { limit: 2, cursor });
          expect(page.items.length).toBeLessThanOrEqual(2);
          seen.push(...page.items.map((p) => p.id));
          cursor = page.nextCursor;
        } while (cursor !== null);
        expect(seen).toEqual([ids[6], ids[4], ids[2], ids[0]]);
        const open = await store.plans.list({ statuses: ['proposed'], createdFrom: '2026-11-30T12:02:00Z' });
        expect(open.items.map((p) => p.id)).toEqual([ids[6], ids[5], ids[4], ids[3], ids[2]]);
        expect(open.nextCursor).toBeNull();
        expect(
          (await store.plans.list({ createdBefore: '2026-11-30T12:01:00Z' })).items.map((p) => p.id),
        ).toEqual([ids[0]]);
        await expect(store.plans.list({}, { limit: 0 })).rejects.toThrow(/page limit/);
        await expect(store.plans.list({}, { cursor: 'abc' })).rejects.toThrow(/not a cursor/);
      });
    });
  },
);
