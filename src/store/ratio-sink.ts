// Prevention's change sink on the store: every intended, written, abandoned or adopted ratio
// change, and the hosts Aicerine stopped writing because someone else pins their ratio. Written
// changes are also entered in ratio_changes, the history people read.
import {
  type PinnedHost,
  RATIO_CHANGE_STATES,
  type RatioChangeRecord,
  type RatioChangeState,
} from '../records/ratio-changes.js';
import { type StoreContext, writeTransaction } from './backend.js';
import { StoreError } from './errors.js';
import { fromMs, toMs } from './time.js';

const isState = (s: string): s is RatioChangeState => (RATIO_CHANGE_STATES as readonly string[]).includes(s);

/**
 * Prevention's change sink on SQL. It implements prevention's port (RatioChangeSink,
 * src/prevention/sink.ts) by shape: the store does not import prevention, the service hands this
 * to it.
 */
export type SqlRatioChangeSink = ReturnType<typeof createRatioChangeSink>;

export function createRatioChangeSink(ctx: StoreContext) {
  const { db } = ctx;
  return {
    async record(c: RatioChangeRecord): Promise<void> {
      await writeTransaction(ctx, async (trx) => {
        await trx
          .insertInto('ratio_intents')
          .values({
            change_id: c.changeId,
            host: c.host,
            rp_uuid: c.rpUuid,
            aggregate: c.aggregate,
            from_ratio: c.from,
            to_ratio: c.to,
            reason: c.reason,
            state: c.state,
            at: toMs(c.at, 'at'),
            detail: c.detail ?? null,
          })
          .execute();
        if (c.state === 'written') {
          await trx
            .insertInto('ratio_changes')
            .values({
              host: c.host,
              resource_class: 'VCPU',
              old_ratio: c.from,
              new_ratio: c.to,
              reason: c.reason,
              // The writer re-reads and retries on generation conflicts; which generation won is not
              // carried to here, so the history says -1 (unknown).
              generation: -1,
              at: toMs(c.at, 'at'),
              changed_by: 'prevention',
            })
            .execute();
        }
      });
    },

    async lastChanges(): Promise<Map<string, RatioChangeRecord>> {
      const newest = db
        .selectFrom('ratio_intents')
        .select((eb) => ['host', eb.fn.max('id').as('id')])
        .groupBy('host')
        .as('n');
      const rows = await db
        .selectFrom('ratio_intents as r')
        .innerJoin(newest, 'n.id', 'r.id')
        .selectAll('r')
        .execute();
      const out = new Map<string, RatioChangeRecord>();
      for (const r of rows) {
        if (!isState(r.state)) throw new StoreError(`store: ratio_intents ${r.id}: unknown state ${r.state}`);
        out.set(r.host, {
          changeId: r.change_id,
          host: r.host,
          rpUuid: r.rp_uuid,
          aggregate: r.aggregate,
          from: r.from_ratio,
          to: r.to_ratio,
          reason: r.reason,
          state: r.state,
          at: fromMs(r.at),
          ...(r.detail !== null ? { detail: r.detail } : {}),
        });
      }
      return out;
    },

    async pinned(): Promise<Map<string, PinnedHost>> {
      const rows = await db.selectFrom('ratio_pins').selectAll().execute();
      return new Map<string, PinnedHost>(
        rows.map((r) => [
          r.host,
          {
            host: r.host,
            rpUuid: r.rp_uuid,
            expected: r.expected,
            found: r.found,
            at: fromMs(r.at),
            reason: r.reason,
          },
        ]),
      );
    },

    async pin(p: PinnedHost): Promise<void> {
      await writeTransaction(ctx, async (trx) => {
        await trx.deleteFrom('ratio_pins').where('host', '=', p.host).execute();
        await trx
          .insertInto('ratio_pins')
          .values({
            host: p.host,
            rp_uuid: p.rpUuid,
            expected: p.expected,
            found: p.found,
            at: toMs(p.at, 'at'),
            reason: p.reason,
          })
          .execute();
      });
    },

    async unpin(host: string): Promise<void> {
      await db.deleteFrom('ratio_pins').where('host', '=', host).execute();
    },
  };
}
