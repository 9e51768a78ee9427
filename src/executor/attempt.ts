// Reading Nova's records about one attempt of a move: which migration record our call started,
// and what a server plus that record say happened. Pure functions over what was read, so the
// awkward cases (a record that shows up late, a server that finishes before its record) are
// tested without a cloud.
import type { MoveRecord } from './journal.js';
import type { LiveMigrationView, ServerView } from './ports.js';

export const MIGRATION_SUCCESS = 'completed';
/** Statuses after which a live migration never moves the server any more. */
export const MIGRATION_FAILED = new Set(['failed', 'error', 'cancelled', 'aborted']);

export function isFinalMigration(status: string): boolean {
  return status === MIGRATION_SUCCESS || MIGRATION_FAILED.has(status);
}

/**
 * The record the current attempt started: a live migration of this server off the move's
 * source towards its destination, created no earlier than the intent (less the clock skew),
 * and newer than the migration of the previous attempt (kept in `novaMigrationId` while a new
 * attempt is `issuing`). The newest wins: while our call holds the server's task state, no
 * other migration of it can start.
 */
export function findAttemptMigration(
  move: Pick<MoveRecord, 'from' | 'to' | 'issuedAt' | 'novaMigrationId' | 'state'>,
  migrations: LiveMigrationView[],
  clockSkewMs: number,
): LiveMigrationView | undefined {
  if (move.state === 'migrating' || move.state === 'aborting') {
    if (move.novaMigrationId !== null) return migrations.find((m) => m.id === move.novaMigrationId);
  }
  const since = move.issuedAt === null ? -Infinity : Date.parse(move.issuedAt) - clockSkewMs;
  const floor = move.state === 'issuing' ? (move.novaMigrationId ?? 0) : 0;
  let best: LiveMigrationView | undefined;
  for (const m of migrations) {
    if (m.id <= floor || m.createdAt < since) continue;
    if (m.source !== null && m.source !== move.from) continue;
    if (m.dest !== null && m.dest !== move.to) continue;
    if (!best || m.id > best.id) best = m;
  }
  return best;
}

export type Outcome =
  /** Nothing final yet (or Nova's two views disagree for now): ask again. */
  | { kind: 'running'; status: string }
  /** The server is ACTIVE on the destination with no task state AND the record is completed. */
  | { kind: 'completed' }
  /** The record ended without moving the server, which is idle on its source. */
  | { kind: 'failed'; status: string; fault: string | null }
  /** Something no retry should touch: the server moved elsewhere, is in ERROR, or is gone. */
  | { kind: 'anomaly'; detail: string; fault: string | null };

/**
 * What a server and its migration record say together. Nova clears the server's task state
 * before the record says `completed` (about 0.4 s on a real cloud), so neither alone decides.
 */
export function judge(
  move: Pick<MoveRecord, 'from' | 'to'>,
  server: ServerView | null,
  migration: LiveMigrationView,
): Outcome {
  if (!server) return { kind: 'anomaly', detail: 'server no longer exists', fault: null };
  if (!isFinalMigration(migration.status)) return { kind: 'running', status: migration.status };
  if (server.taskState !== null)
    return { kind: 'running', status: `${migration.status}, server ${server.taskState}` };
  if (server.status === 'ERROR') {
    return {
      kind: 'anomaly',
      detail: `server is in ERROR on ${server.host ?? 'no host'} after migration ${migration.id} ended ${migration.status}`,
      fault: server.fault ?? `migration ${migration.id} ${migration.status}`,
    };
  }
  if (migration.status === MIGRATION_SUCCESS) {
    if (server.host === move.to && server.status === 'ACTIVE') return { kind: 'completed' };
    return {
      kind: 'anomaly',
      detail: `migration ${migration.id} is completed but the server is ${server.status} on ${server.host ?? 'no host'}, not ACTIVE on ${move.to}`,
      fault: server.fault,
    };
  }
  if (server.host === move.from) {
    return { kind: 'failed', status: migration.status, fault: server.fault };
  }
  return {
    kind: 'anomaly',
    detail: `migration ${migration.id} ended ${migration.status} but the server is on ${server.host ?? 'no host'}, not on its source ${move.from}`,
    fault: server.fault ?? `migration ${migration.id} ${migration.status}`,
  };
}
