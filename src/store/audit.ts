// The audit log: every action taken, by whom, with which credential, on what. Append-only (only
// retention deletes), read newest first with filters.

import type { Selectable } from 'kysely';
import type { StoreContext } from './backend.js';
import { StoreError } from './errors.js';
import { type JsonValue, parseJson } from './json.js';
import { idCursor, type Page, type PageRequest, pageLimit, toPage } from './paging.js';
import type { AuditLogTable } from './schema.js';
import { fromMs, toMs } from './time.js';

export interface NewAuditEntry {
  /** Who: "operator:alice", "loop:gold", "executor". */
  actor: string;
  /** The credential used (a token id or name, never the secret), when a person acted. */
  credential?: string | null;
  /** What: "plan.approve", "quarantine.release", "migration.start"... */
  action: string;
  /** On what: "plan:12", "server:8d3c…", "host:compute-01". */
  target: string;
  detail?: JsonValue;
  at: string;
}

export interface AuditEntry {
  id: string;
  actor: string;
  credential: string | null;
  action: string;
  target: string;
  detail: JsonValue;
  at: string;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  target?: string;
  /** At or after. */
  from?: string;
  /** Before. */
  before?: string;
}

export interface AuditLogRepository {
  record(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Newest first. */
  list(filter?: AuditFilter, page?: PageRequest): Promise<Page<AuditEntry>>;
}

function entryFromRow(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: String(row.id),
    actor: row.actor,
    credential: row.credential,
    action: row.action,
    target: row.target,
    detail: parseJson(row.detail),
    at: fromMs(row.at),
  };
}

export function createAuditLogRepository(ctx: StoreContext): AuditLogRepository {
  const { db } = ctx;
  return {
    async record(entry) {
      if (entry.actor === '' || entry.action === '' || entry.target === '')
        throw new StoreError('store: an audit entry names its actor, action and target');
      const row = {
        actor: entry.actor,
        credential: entry.credential ?? null,
        action: entry.action,
        target: entry.target,
        detail: JSON.stringify(entry.detail ?? null),
        at: toMs(entry.at, `audit entry ${entry.action}: at`),
      };
      const result = await db.insertInto('audit_log').values(row).executeTakeFirstOrThrow();
      return entryFromRow({ ...row, id: Number(result.insertId) });
    },

    async list(filter = {}, page) {
      const limit = pageLimit(page);
      const after = idCursor(page);
      let q = db.selectFrom('audit_log').selectAll();
      if (filter.actor !== undefined) q = q.where('actor', '=', filter.actor);
      if (filter.action !== undefined) q = q.where('action', '=', filter.action);
      if (filter.target !== undefined) q = q.where('target', '=', filter.target);
      if (filter.from !== undefined) q = q.where('at', '>=', toMs(filter.from, 'audit filter from'));
      if (filter.before !== undefined) q = q.where('at', '<', toMs(filter.before, 'audit filter before'));
      if (after !== null) q = q.where('id', '<', after);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return toPage(rows, limit, entryFromRow, (r) => String(r.id));
    },
  };
}
