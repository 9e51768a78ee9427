// The executor's sinks on the service store: quarantine, cost samples and the audit trail. A
// completed move also starts its server's cooldown, which the loop reads before planning.
import type {
  AuditEntry,
  AuditSink,
  CostSample,
  CostSampleSink,
  QuarantineEntry,
  QuarantineSink,
} from '../executor/ports.js';
import type { Store } from '../store/store.js';

export function storeQuarantineSink(store: Store): QuarantineSink {
  return {
    async quarantine(e: QuarantineEntry) {
      const attempts = /(\d+) attempts?/.exec(e.reason);
      await store.quarantine.quarantine({
        serverId: e.serverId,
        aggregate: e.aggregate,
        reason: e.reason,
        novaFault: e.novaFault,
        attempts: attempts ? Number(attempts[1]) : 1,
        at: e.at,
      });
      await store.audit.record({
        actor: 'executor',
        action: 'server.quarantine',
        target: `server:${e.serverId}`,
        detail: { executionId: e.executionId, step: e.step, reason: e.reason, novaFault: e.novaFault },
        at: e.at,
      });
    },
  };
}

export function storeCostSampleSink(store: Store): CostSampleSink {
  return {
    async record(s: CostSample) {
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
  };
}

export function storeAuditSink(store: Store): AuditSink {
  return {
    async record(e: AuditEntry) {
      await store.audit.record({
        actor: e.actor,
        action: `executor.${e.action}`,
        target: e.serverId ? `server:${e.serverId}` : `execution:${e.executionId}`,
        detail: { executionId: e.executionId, step: e.step, detail: e.detail },
        at: e.at,
      });
      if (e.action === 'move-completed' && e.step !== null) {
        const moves = await store.listMoves(e.executionId);
        const m = moves.find((x) => x.step === e.step);
        const execution = await store.getExecution(e.executionId);
        if (m && execution)
          await store.cooldowns.recordMove({
            serverId: m.serverId,
            aggregate: execution.aggregate,
            lastMovedAt: e.at,
            from: m.from,
            to: m.to,
          });
      }
    },
  };
}
