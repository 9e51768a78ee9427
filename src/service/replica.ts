// What a replica does when it takes or gives back an aggregate, for the service and for tests
// that run replicas without the whole loop: on taking it, record the new fence in the store
// (from then on the previous owner's writes are refused) and resume the executions the previous
// owner left running, each reconciled with Nova first; on giving it back, wait until its
// executions here have stopped (they stop on their own once ownership is gone).

import type { Logger } from '../cloud/log.js';
import type { OwnershipHooks } from '../coordination/ownership.js';
import type { ExecutorService } from '../executor/service.js';
import type { Store } from '../store/store.js';

export interface ReplicaHookDeps {
  store: Pick<Store, 'ownership'>;
  executor: Pick<ExecutorService, 'recoverAggregate' | 'settled'>;
  replicaId: string;
  now: () => number;
  logger: Logger;
  /** Called after an aggregate was taken (e.g. to run a cycle soon). */
  onAcquired?: (aggregate: string, resumed: string[]) => void;
}

export function replicaOwnershipHooks(deps: ReplicaHookDeps): OwnershipHooks {
  return {
    async acquired(aggregate, lease) {
      await deps.store.ownership.claim(
        { aggregate, fence: lease.fence, owner: deps.replicaId },
        new Date(deps.now()).toISOString(),
      );
      const resumed = await deps.executor.recoverAggregate(aggregate);
      if (resumed.length > 0)
        deps.logger.warn(`replica ${deps.replicaId}: took over aggregate ${aggregate} mid-execution`, {
          fence: lease.fence,
          resumed,
        });
      deps.onAcquired?.(aggregate, resumed);
    },
    releasing: (aggregate) => deps.executor.settled(aggregate),
    lost(aggregate) {
      deps.logger.warn(
        `replica ${deps.replicaId}: lost the lease of aggregate ${aggregate}; its executions here stop`,
      );
    },
  };
}
