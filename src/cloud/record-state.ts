// The last full picture of the cloud kept between cycles, and the pure steps that fold a
// cycle's changes into it: servers from `changes-since`, live migrations from `changes-since`
// plus the ones still `accepted`, Placement providers whose generation moved.
import type { NovaMigration, NovaServer } from './openstack/nova.js';
import { FINAL_MIGRATION_STATUSES } from './openstack/nova.js';
import type { ResourceProvider } from './openstack/placement.js';

/** Nova's status for a deleted server in a `changes-since` listing. */
export const DELETED_STATUS = 'DELETED';

/** Nova's first status of a live migration record; until its first update, updated_at is null. */
export const FRESH_MIGRATION_STATUS = 'accepted';

export interface ServerChanges {
  /** Servers seen for the first time (ids). */
  added: string[];
  /** Servers known before whose record changed (ids). */
  updated: string[];
  /** Servers listed again unchanged (the overlap of `changes-since` windows). */
  unchanged: number;
  /** Servers Nova lists as DELETED that were known (ids). */
  deleted: string[];
}

/** Folds a `changes-since` listing into the servers by id; deleted servers leave. */
export function applyServerChanges(servers: Map<string, NovaServer>, changed: NovaServer[]): ServerChanges {
  const out: ServerChanges = { added: [], updated: [], deleted: [], unchanged: 0 };
  for (const s of changed) {
    if (s.status === DELETED_STATUS) {
      if (servers.has(s.id)) {
        servers.delete(s.id);
        out.deleted.push(s.id);
      }
      continue;
    }
    const before = servers.get(s.id);
    // A server listed again unchanged (the changes-since overlap) keeps its object: what is
    // built from it is kept by identity (src/cloud/snapshot-memo.ts).
    if (!before) {
      servers.set(s.id, s);
      out.added.push(s.id);
    } else if (JSON.stringify(before) !== JSON.stringify(s)) {
      servers.set(s.id, s);
      out.updated.push(s.id);
    } else out.unchanged++;
  }
  return out;
}

/** When a migration record last changed as Nova's `changes-since` compares it (updated_at). */
function changedMs(m: NovaMigration): number | undefined {
  if (m.updatedAt === null) return undefined;
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(m.updatedAt) ? m.updatedAt : `${m.updatedAt}Z`);
}

export interface MigrationChanges {
  /** Migration ids new or changed this cycle. */
  changed: number[];
  /**
   * Migrations known with no updated_at that are neither still `accepted` nor in the
   * `changes-since` answer: their first update fell outside the window (clock skew larger than
   * the overlap) or the record went away. The picture can no longer be trusted.
   */
  lost: number[];
}

/**
 * Folds the cycle's two migration reads into the known ones. `fresh` must have been read
 * before `changed`: a record that left `accepted` after the first read got its updated_at
 * after it, so the second read shows it.
 */
export function applyMigrationChanges(
  migrations: Map<number, NovaMigration>,
  fresh: NovaMigration[],
  changed: NovaMigration[],
): MigrationChanges {
  const seen = new Set<number>();
  const out: MigrationChanges = { changed: [], lost: [] };
  for (const m of [...fresh, ...changed]) {
    seen.add(m.id);
    const old = migrations.get(m.id);
    if (!old || old.status !== m.status || old.updatedAt !== m.updatedAt || old.destCompute !== m.destCompute)
      out.changed.push(m.id);
    migrations.set(m.id, m);
  }
  for (const [id, m] of migrations) {
    if (m.updatedAt === null && !seen.has(id)) out.lost.push(id);
  }
  return out;
}

/**
 * Drops final migrations that left the history window (the full recorder's `changes-since`
 * would not list them any more). In-progress ones stay until they end.
 */
export function pruneMigrations(migrations: Map<number, NovaMigration>, windowStartMs: number): number {
  let n = 0;
  for (const [id, m] of migrations) {
    const t = changedMs(m);
    if (FINAL_MIGRATION_STATUSES.has(m.status) && t !== undefined && t < windowStartMs) {
      migrations.delete(id);
      n++;
    }
  }
  return n;
}

/** Providers among `wanted` whose generation in the list differs from the one last read. */
export function providersToRead(
  listed: ResourceProvider[],
  readAt: ReadonlyMap<string, number>,
  wanted: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const p of listed) if (wanted.has(p.uuid) && readAt.get(p.uuid) !== p.generation) out.push(p.uuid);
  return out;
}

/** Whether two sets hold the same strings. */
export function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** Nova's `changes-since` value: an instant in ISO 8601, seconds, UTC. */
export function novaInstant(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
