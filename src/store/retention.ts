// Retention: deletes records older than a configured age, table by table. It never deletes what
// is still live: a running execution, an open plan (proposed or approved, which the loop may still
// execute), an unreleased quarantine, an aggregate's latest data-health verdict, a host's latest
// ratio intent (prevention reads it to tell its own writes from someone else's), or a pinned host.

import { sql } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { OPEN_PLAN_STATUSES } from './plans.js';
import { toMs } from './time.js';

export const RETAINED_RECORDS = [
  'plans',
  'executions',
  'quarantine',
  'cooldowns',
  'costSamples',
  'ratioChanges',
  'ratioIntents',
  'dataHealth',
  'snapshots',
  'audit',
  'history',
] as const;
export type RetainedRecord = (typeof RETAINED_RECORDS)[number];

/**
 * Maximum age in days per kind of record; an absent kind is kept forever. Ages count from: a
 * plan's last status change, an execution's end, a quarantine's release, a server's last move,
 * and the time of everything else. Keep cooldowns at least as long as the longest cooldown.
 * Pinned hosts (`ratio_pins`) are live state, never purged.
 */
export type RetentionPolicy = Partial<Record<RetainedRecord, number>>;

export type PurgeCounts = Record<RetainedRecord, number>;

const DAY_MS = 86_400_000;

export interface RetentionRepository {
  /** Deletes what the policy says is too old at `now`; returns the rows deleted per kind. */
  purge(policy: RetentionPolicy, now: string): Promise<PurgeCounts>;
}

export function createRetention(ctx: StoreContext): RetentionRepository {
  const { db, backend } = ctx;
  return {
    async purge(policy, now) {
      const nowMs = toMs(now, 'retention now');
      const cutoff: Partial<Record<RetainedRecord, number>> = {};
      for (const [kind, days] of Object.entries(policy)) {
        if (!(RETAINED_RECORDS as readonly string[]).includes(kind))
          throw new StoreError(`store: retention has no record kind ${JSON.stringify(kind)}`);
        if (days === undefined) continue;
        if (!Number.isFinite(days) || days < 0)
          throw new StoreError(`store: retention.${kind} must be a number of days >= 0, got ${days}`);
        cutoff[kind as RetainedRecord] = nowMs - days * DAY_MS;
      }
      const counts: PurgeCounts = {
        plans: 0,
        executions: 0,
        quarantine: 0,
        cooldowns: 0,
        costSamples: 0,
        ratioChanges: 0,
        ratioIntents: 0,
        dataHealth: 0,
        snapshots: 0,
        audit: 0,
        history: 0,
      };
      const n = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);

      if (cutoff.plans !== undefined)
        // Decisions go with their plan (ON DELETE CASCADE).
        counts.plans = n(
          await db
            .deleteFrom('plans')
            .where('status', 'not in', [...OPEN_PLAN_STATUSES])
            .where('status_changed_at', '<', cutoff.plans)
            .executeTakeFirstOrThrow(),
        );
      if (cutoff.executions !== undefined)
        counts.executions = n(
          await db
            .deleteFrom('executions')
            .where('state', '!=', 'running')
            .where('ended_at', '<', cutoff.executions)
            .executeTakeFirstOrThrow(),
        );
      if (cutoff.quarantine !== undefined)
        counts.quarantine = n(
          await db
            .deleteFrom('quarantine')
            .where('active_server_id', 'is', null)
            .where('released_at', '<', cutoff.quarantine)
            .executeTakeFirstOrThrow(),
        );
      if (cutoff.cooldowns !== undefined) {
        const at = cutoff.cooldowns;
        counts.cooldowns =
          n(
            await db.deleteFrom('server_cooldowns').where('last_moved_at', '<', at).executeTakeFirstOrThrow(),
          ) +
          n(
            await db
              .deleteFrom('aggregate_cooldowns')
              .where('last_moved_at', '<', at)
              .executeTakeFirstOrThrow(),
          );
      }
      if (cutoff.costSamples !== undefined)
        counts.costSamples = n(
          await db.deleteFrom('cost_samples').where('at', '<', cutoff.costSamples).executeTakeFirstOrThrow(),
        );
      if (cutoff.ratioChanges !== undefined)
        counts.ratioChanges = n(
          await db
            .deleteFrom('ratio_changes')
            .where('at', '<', cutoff.ratioChanges)
            .executeTakeFirstOrThrow(),
        );
      if (cutoff.ratioIntents !== undefined) {
        const latest =
          backend === 'mysql'
            ? sql`select id from (select max(id) as id from ratio_intents group by host) as latest`
            : sql`select max(id) from ratio_intents group by host`;
        counts.ratioIntents = n(
          await db
            .deleteFrom('ratio_intents')
            .where('at', '<', cutoff.ratioIntents)
            .where(sql<boolean>`id not in (${latest})`)
            .executeTakeFirstOrThrow(),
        );
      }
      if (cutoff.dataHealth !== undefined) {
        // Each aggregate's latest verdict stays (what the status page shows). MariaDB cannot read
        // the table it deletes from in a subquery, hence the derived table.
        const latest =
          backend === 'mysql'
            ? sql`select id from (select max(id) as id from data_health group by aggregate) as latest`
            : sql`select max(id) from data_health group by aggregate`;
        counts.dataHealth = n(
          await db
            .deleteFrom('data_health')
            .where('at', '<', cutoff.dataHealth)
            .where(sql<boolean>`id not in (${latest})`)
            .executeTakeFirstOrThrow(),
        );
      }
      if (cutoff.snapshots !== undefined)
        counts.snapshots = n(
          await db
            .deleteFrom('snapshots')
            .where('recorded_at', '<', cutoff.snapshots)
            .executeTakeFirstOrThrow(),
        );
      if (cutoff.audit !== undefined)
        counts.audit = n(
          await db.deleteFrom('audit_log').where('at', '<', cutoff.audit).executeTakeFirstOrThrow(),
        );
      if (cutoff.history !== undefined)
        counts.history = n(
          await db.deleteFrom('aggregate_history').where('at', '<', cutoff.history).executeTakeFirstOrThrow(),
        );
      return counts;
    },
  };
}
