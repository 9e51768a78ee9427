// When each server and each aggregate last had a server moved, and between which hosts: what the
// control loop's cooldowns read so a server is not moved again (or back) too soon.

import { sql } from 'kysely';
import { type StoreContext, writeTransaction } from './backend.js';
import { StoreError } from './errors.js';
import { keyCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { AggregateCooldownsTable, ServerCooldownsTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export interface ServerCooldown {
  serverId: string;
  aggregate: string;
  lastMovedAt: string;
  from: string;
  to: string;
}

export interface AggregateCooldown {
  aggregate: string;
  lastMovedAt: string;
  /** The server of that last move. */
  serverId: string;
}

export interface ServerCooldownFilter {
  aggregate?: string;
  /** Only servers moved at or after this time (those still cooling down). */
  movedSince?: string;
}

export interface CooldownRepository {
  /** Records a completed move for the server and its aggregate (replacing older records). */
  recordMove(move: ServerCooldown): Promise<void>;
  getServer(serverId: string): Promise<ServerCooldown | null>;
  getAggregate(aggregate: string): Promise<AggregateCooldown | null>;
  /** Ordered by server id. */
  listServers(filter?: ServerCooldownFilter, page?: PageRequest): Promise<Page<ServerCooldown>>;
  /** Ordered by aggregate name. */
  listAggregates(page?: PageRequest): Promise<Page<AggregateCooldown>>;
}

function serverFromRow(row: ServerCooldownsTable): ServerCooldown {
  return {
    serverId: row.server_id,
    aggregate: row.aggregate,
    lastMovedAt: fromMs(row.last_moved_at),
    from: row.from_host,
    to: row.to_host,
  };
}

function aggregateFromRow(row: AggregateCooldownsTable): AggregateCooldown {
  return { aggregate: row.aggregate, lastMovedAt: fromMs(row.last_moved_at), serverId: row.server_id };
}

export function createCooldownRepository(ctx: StoreContext): CooldownRepository {
  const { db, backend } = ctx;
  return {
    async recordMove(move) {
      if (move.serverId === '' || move.aggregate === '')
        throw new StoreError('store: a cooldown names its server and aggregate');
      const at = toMs(move.lastMovedAt, `cooldown of ${move.serverId}: lastMovedAt`);
      await writeTransaction(ctx, async (trx) => {
        const server = trx.insertInto('server_cooldowns').values({
          server_id: move.serverId,
          aggregate: move.aggregate,
          last_moved_at: at,
          from_host: move.from,
          to_host: move.to,
        });
        const aggregate = trx
          .insertInto('aggregate_cooldowns')
          .values({ aggregate: move.aggregate, last_moved_at: at, server_id: move.serverId });
        // A late record (an older move reconciled after a newer one) never moves the clock back.
        if (backend === 'mysql') {
          await server
            .onDuplicateKeyUpdate({
              aggregate: sql`if(values(last_moved_at) >= last_moved_at, values(aggregate), aggregate)`,
              from_host: sql`if(values(last_moved_at) >= last_moved_at, values(from_host), from_host)`,
              to_host: sql`if(values(last_moved_at) >= last_moved_at, values(to_host), to_host)`,
              last_moved_at: sql`greatest(last_moved_at, values(last_moved_at))`,
            })
            .execute();
          await aggregate
            .onDuplicateKeyUpdate({
              server_id: sql`if(values(last_moved_at) >= last_moved_at, values(server_id), server_id)`,
              last_moved_at: sql`greatest(last_moved_at, values(last_moved_at))`,
            })
            .execute();
        } else {
          await server
            .onConflict((oc) =>
              oc
                .column('server_id')
                .doUpdateSet((eb) => ({
                  aggregate: eb.ref('excluded.aggregate'),
                  last_moved_at: eb.ref('excluded.last_moved_at'),
                  from_host: eb.ref('excluded.from_host'),
                  to_host: eb.ref('excluded.to_host'),
                }))
                .where('server_cooldowns.last_moved_at', '<=', at),
            )
            .execute();
          await aggregate
            .onConflict((oc) =>
              oc
                .column('aggregate')
                .doUpdateSet((eb) => ({
                  last_moved_at: eb.ref('excluded.last_moved_at'),
                  server_id: eb.ref('excluded.server_id'),
                }))
                .where('aggregate_cooldowns.last_moved_at', '<=', at),
            )
            .execute();
        }
      });
    },

    async getServer(serverId) {
      const row = await db
        .selectFrom('server_cooldowns')
        .selectAll()
        .where('server_id', '=', serverId)
        .executeTakeFirst();
      return row === undefined ? null : serverFromRow(row);
    },

    async getAggregate(aggregate) {
      const row = await db
        .selectFrom('aggregate_cooldowns')
        .selectAll()
        .where('aggregate', '=', aggregate)
        .executeTakeFirst();
      return row === undefined ? null : aggregateFromRow(row);
    },

    async listServers(filter = {}, page) {
      const limit = pageLimit(page);
      const after = keyCursor(page);
      let q = db.selectFrom('server_cooldowns').selectAll();
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (filter.movedSince !== undefined)
        q = q.where('last_moved_at', '>=', toMs(filter.movedSince, 'cooldown filter movedSince'));
      if (after !== null) q = q.where('server_id', '>', after);
      const rows = await q
        .orderBy('server_id')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, serverFromRow, (r) => r.server_id);
    },

    async listAggregates(page) {
      const limit = pageLimit(page);
      const after = keyCursor(page);
      let q = db.selectFrom('aggregate_cooldowns').selectAll();
      if (after !== null) q = q.where('aggregate', '>', after);
      const rows = await q
        .orderBy('aggregate')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, aggregateFromRow, (r) => r.aggregate);
    },
  };
}
