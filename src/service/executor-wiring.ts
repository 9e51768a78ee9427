// How `serve` builds its executor, in one place: the journal (fenced per aggregate on replicas),
// the sinks into the store, one slot pool, the cluster-wide host locks with the coordination
// lease TTL, and on replicas the aggregate ownership whose hooks claim the store's fence and
// resume what a previous owner left. The service uses it, and so do the replica tests and the
// replica bench, so what they prove holds for what runs.

import type { Logger } from '../cloud/log.js';
import type { LockService } from '../coordination/locks.js';
import { AggregateOwnership } from '../coordination/ownership.js';
import type { ExecutionSummary } from '../executor/execution.js';
import { Executor } from '../executor/index.js';
import type { PlannedMove } from '../executor/journal.js';
import type { Clock, ExecutorCloud, WaveGainCheck } from '../executor/ports.js';
import { ExecutorService } from '../executor/service.js';
import type { ExecutorSettings } from '../executor/settings.js';
import { MigrationSlots } from '../executor/slots.js';
import { storeSinks } from '../executor/store-sinks.js';
import type { Store } from '../store/store.js';
import { replicaOwnershipHooks } from './replica.js';

/** Replicas: how this process shares the aggregates with the others (docs/replicas.md). */
export interface ServiceCoordination {
  locks: LockService;
  replicaId: string;
  leaseTtlMs: number;
  rebalanceIntervalMs: number;
}

export interface ExecutorWiringDeps {
  store: Store;
  cloud: ExecutorCloud;
  clock: Clock;
  settings: ExecutorSettings;
  /** An aggregate's own settings (retry, onPause) for its executions; absent: `settings`. */
  settingsFor?: (aggregate: string) => ExecutorSettings;
  /** The host locks every execution and operator task shares (on replicas: the coordination's). */
  locks: LockService;
  timeoutFor: (move: PlannedMove) => number;
  logger: Logger;
  isPaused: (aggregate: string) => boolean;
  /** Before each wave after the first: the moves that no longer pay on a fresh reading. */
  waveCheck?: WaveGainCheck;
  onEnded?: (summary: ExecutionSummary, aggregate: string) => void;
  /** Absent: one process that owns every aggregate. */
  coordination?: ServiceCoordination & {
    /** Every aggregate to share (configured and discovered). */
    aggregates: () => readonly string[];
    onAcquired?: (aggregate: string, resumed: string[]) => void;
    /** The aggregate's lease was lost or lapsed: its work here stopped. */
    onLost?: (aggregate: string) => void;
    /** A lapsed lease came back: its work here resumed under the same fence. */
    onRenewed?: (aggregate: string) => void;
    /** Where this replica's API answers (GET /v1/replicas shows it). */
    address?: string;
  };
}

export interface WiredExecutor {
  executor: ExecutorService;
  /** Shared with the operator tasks' own migrations. */
  slots: MigrationSlots;
  /** Replicas only. */
  ownership: AggregateOwnership | null;
}

export function wireExecutor(deps: ExecutorWiringDeps): WiredExecutor {
  const { store, coordination, logger } = deps;
  const slots = new MigrationSlots(deps.settings.limits);
  let ownership: AggregateOwnership | null = null;
  const fenceOf = (a: string) => {
    if (ownership === null) throw new Error(`aggregate ${a}: ownership not started`);
    return ownership.fenceOf(a);
  };
  const executor = new Executor({
    // Replicas: every journal write carries the aggregate's fence, refused once it is stale.
    journal: coordination === undefined ? store : store.fencedJournal(fenceOf),
    cloud: deps.cloud,
    clock: deps.clock,
    settings: deps.settings,
    ...(deps.settingsFor !== undefined ? { settingsFor: deps.settingsFor } : {}),
    slots,
    timeoutFor: deps.timeoutFor,
    ...storeSinks(store),
    logger,
    hostLocks: deps.locks,
    ...(deps.waveCheck !== undefined ? { waveCheck: deps.waveCheck } : {}),
    ...(coordination !== undefined ? { hostLockTtlMs: coordination.leaseTtlMs } : {}),
  });
  const service = new ExecutorService(executor, {
    isPaused: deps.isPaused,
    ...(coordination !== undefined
      ? {
          isOwned: (a: string) => ownership?.holds(a) ?? false,
          fenceOf: (a: string) => (ownership?.holds(a) ? ownership.fenceOf(a).fence : null),
        }
      : {}),
    logger,
    ...(deps.onEnded !== undefined ? { onEnded: deps.onEnded } : {}),
  });
  if (coordination !== undefined) {
    const hooks = replicaOwnershipHooks({
      store,
      executor: service,
      replicaId: coordination.replicaId,
      now: () => deps.clock.now(),
      logger,
      ...(coordination.onAcquired !== undefined ? { onAcquired: coordination.onAcquired } : {}),
    });
    ownership = new AggregateOwnership({
      locks: coordination.locks,
      replicaId: coordination.replicaId,
      aggregates: coordination.aggregates,
      ttlMs: coordination.leaseTtlMs,
      intervalMs: coordination.rebalanceIntervalMs,
      ...(coordination.address !== undefined ? { address: coordination.address } : {}),
      hooks: {
        ...hooks,
        lost: (a) => {
          hooks.lost(a);
          coordination.onLost?.(a);
        },
        renewed: (a) => coordination.onRenewed?.(a),
      },
      logger,
    });
  }
  return { executor: service, slots, ownership };
}
