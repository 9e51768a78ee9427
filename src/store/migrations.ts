// The one schema, as an ordered list of migrations that run on SQLite and MariaDB alike (Kysely's
// Migrator records what ran in `aicerine_migration` and takes a lock so two replicas starting at
// once do not both migrate). A migration is never edited once released: a schema change is a new
// entry at the end of the list.

import { type CreateTableBuilder, type Kysely, type Migration, Migrator, sql } from 'kysely';
import { longTextType, type StoreBackend } from './backend.js';
import { StoreError } from './errors.js';
import type { Database } from './schema.js';

/** Every key and short label: indexable on MariaDB (utf8mb4, 4 bytes a character, 3072-byte keys). */
const KEY = 'varchar(255)';
/** Epoch milliseconds. */
const TIME = 'bigint';
const REAL = 'double precision';

function tableOptions<T extends string, C extends string>(
  backend: StoreBackend,
  table: CreateTableBuilder<T, C>,
): CreateTableBuilder<T, C> {
  // Binary collation: server ids and host names compare exactly, as they do in Nova and on SQLite
  // (MariaDB's default collation is case- and accent-insensitive).
  return backend === 'mysql'
    ? table.modifyEnd(sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`)
    : table;
}

function initialSchema(backend: StoreBackend): Migration {
  const LONG = longTextType(backend);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await tableOptions(
        backend,
        s
          .createTable('executions')
          .addColumn('id', KEY, (c) => c.primaryKey())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('plan_id', KEY)
          .addColumn('state', 'varchar(16)', (c) => c.notNull())
          .addColumn('started_at', TIME, (c) => c.notNull())
          .addColumn('ended_at', TIME)
          .addColumn('started_by', KEY, (c) => c.notNull()),
      ).execute();
      await s.createIndex('executions_state').on('executions').columns(['state', 'started_at']).execute();
      await s
        .createIndex('executions_aggregate')
        .on('executions')
        .columns(['aggregate', 'started_at'])
        .execute();

      await tableOptions(
        backend,
        s
          .createTable('execution_moves')
          .addColumn('execution_id', KEY, (c) => c.notNull())
          .addColumn('step', 'integer', (c) => c.notNull())
          .addColumn('wave', 'integer', (c) => c.notNull())
          .addColumn('server_id', KEY, (c) => c.notNull())
          .addColumn('server_name', KEY)
          .addColumn('from_host', KEY, (c) => c.notNull())
          .addColumn('to_host', KEY, (c) => c.notNull())
          .addColumn('after_steps', 'text')
          .addColumn('estimated_seconds', REAL, (c) => c.notNull())
          .addColumn('state', 'varchar(16)', (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('nova_migration_id', 'bigint')
          .addColumn('issued_at', TIME)
          .addColumn('ended_at', TIME)
          .addColumn('detail', 'text')
          .addPrimaryKeyConstraint('execution_moves_pk', ['execution_id', 'step'])
          .addForeignKeyConstraint('execution_moves_execution', ['execution_id'], 'executions', ['id'], (c) =>
            c.onDelete('cascade'),
          ),
      ).execute();
      await s.createIndex('execution_moves_server').on('execution_moves').column('server_id').execute();

      await tableOptions(
        backend,
        s
          .createTable('plans')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('mode', 'varchar(16)', (c) => c.notNull())
          .addColumn('status', 'varchar(24)', (c) => c.notNull())
          .addColumn('snapshot_taken_at', TIME, (c) => c.notNull())
          .addColumn('created_at', TIME, (c) => c.notNull())
          .addColumn('status_changed_at', TIME, (c) => c.notNull())
          .addColumn('expires_at', TIME)
          .addColumn('move_count', 'integer', (c) => c.notNull())
          .addColumn('plan_json', LONG, (c) => c.notNull()),
      ).execute();
      await s.createIndex('plans_aggregate').on('plans').columns(['aggregate', 'id']).execute();
      await s.createIndex('plans_status').on('plans').columns(['status', 'id']).execute();

      await tableOptions(
        backend,
        s
          .createTable('plan_decisions')
          .addColumn('plan_id', 'integer', (c) => c.notNull())
          .addColumn('step', 'integer', (c) => c.notNull())
          .addColumn('decision', 'varchar(16)', (c) => c.notNull())
          .addColumn('decided_by', KEY, (c) => c.notNull())
          .addColumn('comment', 'text')
          .addColumn('decided_at', TIME, (c) => c.notNull())
          .addPrimaryKeyConstraint('plan_decisions_pk', ['plan_id', 'step'])
          .addForeignKeyConstraint('plan_decisions_plan', ['plan_id'], 'plans', ['id'], (c) =>
            c.onDelete('cascade'),
          ),
      ).execute();

      await tableOptions(
        backend,
        s
          .createTable('server_cooldowns')
          .addColumn('server_id', KEY, (c) => c.primaryKey())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('last_moved_at', TIME, (c) => c.notNull())
          .addColumn('from_host', KEY, (c) => c.notNull())
          .addColumn('to_host', KEY, (c) => c.notNull()),
      ).execute();
      await s
        .createIndex('server_cooldowns_aggregate')
        .on('server_cooldowns')
        .columns(['aggregate', 'server_id'])
        .execute();

      await tableOptions(
        backend,
        s
          .createTable('aggregate_cooldowns')
          .addColumn('aggregate', KEY, (c) => c.primaryKey())
          .addColumn('last_moved_at', TIME, (c) => c.notNull())
          .addColumn('server_id', KEY, (c) => c.notNull()),
      ).execute();

      await tableOptions(
        backend,
        s
          .createTable('quarantine')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('server_id', KEY, (c) => c.notNull())
          .addColumn('active_server_id', KEY, (c) => c.unique())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('nova_fault', 'text')
          .addColumn('since', TIME, (c) => c.notNull())
          .addColumn('updated_at', TIME, (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('released_by', KEY)
          .addColumn('released_at', TIME),
      ).execute();
      await s.createIndex('quarantine_server').on('quarantine').columns(['server_id', 'id']).execute();

      await tableOptions(
        backend,
        s
          .createTable('cost_samples')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('server_id', KEY, (c) => c.notNull())
          .addColumn('ram_mb', 'integer', (c) => c.notNull())
          .addColumn('dirty_rate_mbps', REAL)
          .addColumn('duration_seconds', REAL, (c) => c.notNull())
          .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
          .addColumn('source', 'varchar(16)', (c) => c.notNull())
          .addColumn('source_key', KEY)
          .addColumn('at', TIME, (c) => c.notNull())
          .addUniqueConstraint('cost_samples_source_key', ['source', 'source_key']),
      ).execute();
      await s.createIndex('cost_samples_aggregate').on('cost_samples').columns(['aggregate', 'id']).execute();

      await tableOptions(
        backend,
        s
          .createTable('ratio_changes')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('host', KEY, (c) => c.notNull())
          .addColumn('resource_class', KEY, (c) => c.notNull())
          .addColumn('old_ratio', REAL, (c) => c.notNull())
          .addColumn('new_ratio', REAL, (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('generation', 'bigint', (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull())
          .addColumn('changed_by', KEY, (c) => c.notNull()),
      ).execute();
      await s.createIndex('ratio_changes_host').on('ratio_changes').columns(['host', 'id']).execute();

      await tableOptions(
        backend,
        s
          .createTable('data_health')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('verdict', 'varchar(16)', (c) => c.notNull())
          .addColumn('reasons', 'text', (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull()),
      ).execute();
      await s.createIndex('data_health_aggregate').on('data_health').columns(['aggregate', 'id']).execute();

      await tableOptions(
        backend,
        s
          .createTable('snapshots')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('taken_at', TIME, (c) => c.notNull())
          .addColumn('aggregate', KEY)
          .addColumn('path', 'text')
          .addColumn('size_bytes', 'bigint')
          .addColumn('recorded_at', TIME, (c) => c.notNull()),
      ).execute();

      await tableOptions(
        backend,
        s
          .createTable('audit_log')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('actor', KEY, (c) => c.notNull())
          .addColumn('credential', KEY)
          .addColumn('action', KEY, (c) => c.notNull())
          .addColumn('target', KEY, (c) => c.notNull())
          .addColumn('detail', LONG, (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull()),
      ).execute();
      await s.createIndex('audit_log_actor').on('audit_log').columns(['actor', 'id']).execute();
      await s.createIndex('audit_log_action').on('audit_log').columns(['action', 'id']).execute();
      await s.createIndex('audit_log_target').on('audit_log').columns(['target', 'id']).execute();
      await s.createIndex('audit_log_at').on('audit_log').column('at').execute();
      for (const table of ['cost_samples', 'ratio_changes', 'data_health', 'snapshots'] as const) {
        await s
          .createIndex(`${table}_at`)
          .on(table)
          .column(table === 'snapshots' ? 'recorded_at' : 'at')
          .execute();
      }
    },
  };
}

// Prevention keeps an intent before each Placement write and its outcome after (so a restart
// never mistakes its own write for someone else's), and a list of hosts it stopped writing.
function preventionRecords(backend: StoreBackend): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await tableOptions(
        backend,
        s
          .createTable('ratio_intents')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('change_id', KEY, (c) => c.notNull())
          .addColumn('host', KEY, (c) => c.notNull())
          .addColumn('rp_uuid', KEY, (c) => c.notNull())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('from_ratio', REAL, (c) => c.notNull())
          .addColumn('to_ratio', REAL, (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('state', 'varchar(16)', (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull())
          .addColumn('detail', 'text'),
      ).execute();
      await s.createIndex('ratio_intents_host').on('ratio_intents').columns(['host', 'id']).execute();
      await s.createIndex('ratio_intents_at').on('ratio_intents').column('at').execute();
      await tableOptions(
        backend,
        s
          .createTable('ratio_pins')
          .addColumn('host', KEY, (c) => c.primaryKey())
          .addColumn('rp_uuid', KEY, (c) => c.notNull())
          .addColumn('expected', REAL, (c) => c.notNull())
          .addColumn('found', REAL, (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull()),
      ).execute();
    },
  };
}

// The running service's own state: run-time pauses an operator made (so they survive a restart,
// unlike an in-memory flag), and each cycle's imbalance per aggregate (the API's history charts).
function serviceControl(backend: StoreBackend): Migration {
  const LONG = longTextType(backend);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await tableOptions(
        backend,
        s
          .createTable('service_pauses')
          // '' is the global pause (an aggregate name is never empty).
          .addColumn('scope', KEY, (c) => c.primaryKey())
          .addColumn('paused_by', KEY, (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull())
          .addColumn('reason', 'text'),
      ).execute();
      await tableOptions(
        backend,
        s
          .createTable('aggregate_history')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull())
          .addColumn('imbalance', REAL, (c) => c.notNull())
          .addColumn('dimensions', LONG, (c) => c.notNull())
          .addColumn('hosts', 'integer', (c) => c.notNull())
          .addColumn('plan_moves', 'integer', (c) => c.notNull()),
      ).execute();
      await s
        .createIndex('aggregate_history_aggregate')
        .on('aggregate_history')
        .columns(['aggregate', 'at'])
        .execute();
      await s.createIndex('aggregate_history_at').on('aggregate_history').column('at').execute();
    },
  };
}

// Operator tasks (docs/tasks.md): one row per task. `version` grows with every write, so a
// decision made on a stale read (a second worker, a lapsed lock) changes nothing.
function taskTable(backend: StoreBackend): Migration {
  const LONG = longTextType(backend);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await tableOptions(
        backend,
        s
          .createTable('tasks')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('kind', KEY, (c) => c.notNull())
          .addColumn('args', LONG, (c) => c.notNull())
          .addColumn('requested_by', KEY, (c) => c.notNull())
          .addColumn('requested_at', TIME, (c) => c.notNull())
          .addColumn('batch', KEY, (c) => c.notNull())
          .addColumn('after_batch', 'integer', (c) => c.notNull())
          .addColumn('state', 'varchar(16)', (c) => c.notNull())
          .addColumn('progress_done', 'integer', (c) => c.notNull())
          .addColumn('progress_total', 'integer')
          .addColumn('progress_detail', 'text', (c) => c.notNull())
          .addColumn('result', LONG)
          .addColumn('error', 'text')
          .addColumn('waiting_reason', 'text')
          .addColumn('hosts', 'text', (c) => c.notNull())
          .addColumn('checkpoint', LONG)
          .addColumn('owner', KEY)
          .addColumn('cancel_requested', 'integer', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('started_at', TIME)
          .addColumn('heartbeat_at', TIME)
          .addColumn('updated_at', TIME, (c) => c.notNull())
          .addColumn('ended_at', TIME),
      ).execute();
      await s.createIndex('tasks_state').on('tasks').columns(['state', 'id']).execute();
      await s.createIndex('tasks_kind').on('tasks').columns(['kind', 'id']).execute();
      await s.createIndex('tasks_batch').on('tasks').columns(['batch', 'id']).execute();
      await s.createIndex('tasks_ended_at').on('tasks').columns(['state', 'ended_at']).execute();
    },
  };
}

// Replicas: the newest owner's fence per aggregate (a write with an older one is refused), and the
// fence that wrote each move's current state.
function ownership(backend: StoreBackend): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await tableOptions(
        backend,
        s
          .createTable('aggregate_owners')
          .addColumn('aggregate', KEY, (c) => c.primaryKey())
          .addColumn('fence', 'bigint', (c) => c.notNull())
          .addColumn('owner', KEY, (c) => c.notNull())
          .addColumn('claimed_at', TIME, (c) => c.notNull()),
      ).execute();
      await s.alterTable('execution_moves').addColumn('fence', 'bigint').execute();
    },
  };
}

// Rolling maintenance (docs/maintenance.md): one row per campaign, its hosts' progress as JSON
// (a campaign has tens of hosts, read and written whole). `version` makes every write a
// compare-and-set, so the driver and an operator's pause or "done" never overwrite each other.
function maintenanceCampaigns(backend: StoreBackend): Migration {
  const LONG = longTextType(backend);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await tableOptions(
        backend,
        s
          .createTable('maintenance_campaigns')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('aggregate', KEY, (c) => c.notNull())
          .addColumn('state', 'varchar(16)', (c) => c.notNull())
          .addColumn('requested_by', KEY, (c) => c.notNull())
          .addColumn('requested_at', TIME, (c) => c.notNull())
          .addColumn('settings', LONG, (c) => c.notNull())
          .addColumn('hosts', LONG, (c) => c.notNull())
          .addColumn('note', 'text')
          .addColumn('task_id', KEY)
          .addColumn('abort_requested', 'integer', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('updated_at', TIME, (c) => c.notNull())
          .addColumn('ended_at', TIME),
      ).execute();
      await s
        .createIndex('maintenance_campaigns_state')
        .on('maintenance_campaigns')
        .columns(['state', 'id'])
        .execute();
    },
  };
}

/** The migrations in order; their names sort in that order (the Migrator runs them sorted). */
export function storeMigrations(backend: StoreBackend): Record<string, Migration> {
  return {
    '0001-initial-schema': initialSchema(backend),
    '0002-prevention-records': preventionRecords(backend),
    '0003-service-control': serviceControl(backend),
    '0004-tasks': taskTable(backend),
    '0005-ownership': ownership(backend),
    '0006-abort-requests': abortRequests(backend),
    '0007-maintenance-campaigns': maintenanceCampaigns(backend),
    '0008-history-plan': historyPlan(),
    '0009-load-profiles': loadProfiles(backend),
  };
}

// Each history point names the plan its cycle made or kept, and whether the cycle found the
// planning inputs unchanged since that plan (so it planned, checked and stored nothing).
function historyPlan(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('aggregate_history').addColumn('plan_id', KEY).execute();
      await db.schema
        .alterTable('aggregate_history')
        .addColumn('unchanged', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}

// Replicas: an operator's abort asked of a replica that does not run the execution, for the
// replica that runs it (only the executor that issued a migration can abort it in Nova).
function abortRequests(backend: StoreBackend): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await tableOptions(
        backend,
        db.schema
          .createTable('abort_requests')
          .addColumn('execution_id', KEY, (c) => c.primaryKey())
          .addColumn('requested_by', KEY, (c) => c.notNull())
          .addColumn('at', TIME, (c) => c.notNull()),
      ).execute();
    },
  };
}

// Load profiles (issue 28): each aggregate's reduced history, kept so a restart does not read two
// weeks of Prometheus history again.
function loadProfiles(backend: StoreBackend): Migration {
  const LONG = longTextType(backend);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await tableOptions(
        backend,
        db.schema
          .createTable('load_profiles')
          .addColumn('aggregate', KEY, (c) => c.primaryKey())
          .addColumn('refreshed_at', TIME, (c) => c.notNull())
          .addColumn('document', LONG, (c) => c.notNull()),
      ).execute();
    },
  };
}

export const MIGRATION_TABLE = 'aicerine_migration';
export const MIGRATION_LOCK_TABLE = 'aicerine_migration_lock';

/**
 * Brings the schema to the latest migration this build knows. Refuses (throws) a database that a
 * newer build migrated further: its migrations are missing here, and running old code on a newer
 * schema could lose data.
 */
export async function migrateToLatest(db: Kysely<Database>, backend: StoreBackend): Promise<string[]> {
  if (backend === 'mysql') return runMigrator(db, backend, false);
  // Kysely's migration lock is a no-op on SQLite (it assumes one connection), so two processes
  // opening a new file at once would both migrate. One IMMEDIATE transaction around the whole
  // run makes the second wait (busy timeout) and then find the work done; DDL is transactional
  // in SQLite, so a failed migration leaves nothing half-made.
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const ran = await runMigrator(conn, backend, true);
      await sql`commit`.execute(conn);
      return ran;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}

async function runMigrator(
  db: Kysely<Database>,
  backend: StoreBackend,
  inOuterTransaction: boolean,
): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => storeMigrations(backend) },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    disableTransactions: inOuterTransaction,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const why = error instanceof Error ? error.message : String(error);
    throw new StoreError(
      failed !== undefined
        ? `store: migration ${failed} failed: ${why}`
        : `store: cannot migrate the schema: ${why}`,
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
