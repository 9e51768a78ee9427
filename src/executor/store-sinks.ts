// The executor's sinks on the store: quarantine entries, cost samples of its own completed
// migrations, server cooldowns and the audit log, each written through the store's repositories.
import type { Store } from '../store/index.js';
import type { AuditSink, CooldownSink, CostSampleSink, QuarantineSink } from './ports.js';

export interface StoreSinks {
  quarantine: QuarantineSink;
  costs: CostSampleSink;
  cooldowns: CooldownSink;
  audit: AuditSink;
}

export function storeSinks(
  store: Pick<Store, 'quarantine' | 'costSamples' | 'cooldowns' | 'audit'>,
): StoreSinks {
  return {
    quarantine: {
      quarantine: async (e) => {
        await store.quarantine.quarantine({
          serverId: e.serverId,
          aggregate: e.aggregate,
          reason: e.reason,
          novaFault: e.novaFault,
          attempts: e.attempts,
          at: e.at,
        });
      },
    },
    costs: {
      record: async (s) => {
        // The learned model fits seconds against RAM: a sample without RAM teaches it nothing.
        if (s.ramMB === null) return;
        await store.costSamples.add([
          {
            aggregate: s.aggregate,
            serverId: s.serverId,
            ramMB: s.ramMB,
            durationSeconds: s.seconds,
            outcome: 'completed',
            source: 'own',
            sourceKey: String(s.novaMigrationId),
            at: s.at,
          },
        ]);
      },
    },
    cooldowns: store.cooldowns,
    audit: {
      record: async (a) => {
        await store.audit.record({
          actor: a.actor,
          action: `executor.${a.action}`,
          target: a.serverId !== null ? `server:${a.serverId}` : `execution:${a.executionId}`,
          detail: { executionId: a.executionId, step: a.step, detail: a.detail },
          at: a.at,
        });
      },
    },
  };
}
