// The maintenance campaigns (docs/maintenance.md): one row per campaign, its hosts' progress kept
// as JSON. Every write after the insert is a compare-and-set on `version`: the driver and an
// operator's pause, abort or "done" read, change and write, and a write made on a stale read
// changes nothing (the caller reads again).

import type { Selectable } from 'kysely';
import {
  CAMPAIGN_STATES,
  type Campaign,
  type CampaignFilter,
  type CampaignPatch,
  type CampaignSettings,
  type CampaignState,
  type HostProgress,
  type NewCampaign,
} from '../records/campaigns.js';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { parseJson } from './json.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { MaintenanceCampaignsTable } from './schema.js';
import { fromMs, fromMsOrNull, toMs } from './time.js';

function fromRow(row: Selectable<MaintenanceCampaignsTable>): Campaign {
  return {
    id: String(row.id),
    aggregate: row.aggregate,
    state: row.state as CampaignState,
    requestedBy: row.requested_by,
    requestedAt: fromMs(row.requested_at),
    settings: parseJson(row.settings) as unknown as CampaignSettings,
    hosts: parseJson(row.hosts) as unknown as HostProgress[],
    note: row.note,
    taskId: row.task_id,
    abortRequested: Number(row.abort_requested) === 1,
    version: Number(row.version),
    updatedAt: fromMs(row.updated_at),
    endedAt: fromMsOrNull(row.ended_at),
  };
}

/**
 * The campaign records on SQL. They implement maintenance's port (CampaignRepository,
 * src/maintenance/ports.ts) by shape: the store does not import maintenance, the service hands
 * this to it.
 */
export type SqlCampaignTable = ReturnType<typeof createCampaignRepository>;

export function createCampaignRepository(ctx: StoreContext) {
  const { db } = ctx;
  const get = async (id: string): Promise<Campaign | null> => {
    if (!/^\d{1,15}$/.test(id)) return null;
    const row = await db
      .selectFrom('maintenance_campaigns')
      .selectAll()
      .where('id', '=', Number(id))
      .executeTakeFirst();
    return row === undefined ? null : fromRow(row);
  };
  return {
    async create(c: NewCampaign): Promise<Campaign> {
      if (c.hosts.length === 0) throw new StoreError('store: a maintenance campaign has at least one host');
      const at = toMs(c.requestedAt, 'campaign requestedAt');
      const result = await db
        .insertInto('maintenance_campaigns')
        .values({
          aggregate: c.aggregate,
          state: 'RUNNING',
          requested_by: c.requestedBy,
          requested_at: at,
          settings: JSON.stringify(c.settings),
          hosts: JSON.stringify(c.hosts),
          note: null,
          task_id: null,
          abort_requested: 0,
          version: 1,
          updated_at: at,
          ended_at: null,
        })
        .executeTakeFirstOrThrow();
      const created = await get(String(result.insertId));
      if (created === null) throw new StoreError('store: the campaign just created cannot be read back');
      return created;
    },

    get,

    async list(filter: CampaignFilter = {}, page?: PageRequest): Promise<Page<Campaign>> {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('maintenance_campaigns').selectAll();
      if (filter.state !== undefined) q = q.where('state', '=', filter.state);
      if (filter.aggregate !== undefined) q = q.where('aggregate', '=', filter.aggregate);
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, fromRow, (r) => String(r.id));
    },

    async unfinished(): Promise<Campaign[]> {
      const rows = await db
        .selectFrom('maintenance_campaigns')
        .selectAll()
        .where('state', 'in', ['RUNNING', 'PAUSED'])
        .orderBy('id')
        .execute();
      return rows.map(fromRow);
    },

    async update(id: string, version: number, patch: CampaignPatch, at: string): Promise<Campaign | null> {
      if (!/^\d{1,15}$/.test(id)) return null;
      const set: Partial<Selectable<MaintenanceCampaignsTable>> = {
        updated_at: toMs(at, 'campaign update at'),
        version: version + 1,
      };
      if (patch.state !== undefined) {
        if (!CAMPAIGN_STATES.includes(patch.state))
          throw new StoreError(`store: not a campaign state: ${patch.state}`);
        set.state = patch.state;
      }
      if (patch.hosts !== undefined) set.hosts = JSON.stringify(patch.hosts);
      if (patch.note !== undefined) set.note = patch.note;
      if (patch.taskId !== undefined) set.task_id = patch.taskId;
      if (patch.abortRequested !== undefined) set.abort_requested = patch.abortRequested ? 1 : 0;
      if (patch.endedAt !== undefined)
        set.ended_at = patch.endedAt === null ? null : toMs(patch.endedAt, 'campaign endedAt');
      const result = await db
        .updateTable('maintenance_campaigns')
        .set(set)
        .where('id', '=', Number(id))
        .where('version', '=', version)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return null;
      return get(id);
    },
  };
}
