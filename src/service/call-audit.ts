// Every call the actuator makes goes into the audit log, with the credential that made it: what
// was asked of the cloud (method, path), what it answered (status, request id) and when. Never
// the secret nor the token: a CallRecord carries neither.
import type { CallRecord } from '../cloud/http/service-client.js';
import type { Logger } from '../cloud/log.js';
import type { AuditLogRepository } from '../store/audit.js';

export const CLOUD_CALL_ACTION = 'cloud.call';

export function auditCalls(
  audit: Pick<AuditLogRepository, 'record'>,
  logger: Logger,
  now: () => Date = () => new Date(),
): (call: CallRecord) => Promise<void> {
  return async (call) => {
    try {
      await audit.record({
        actor: 'service',
        credential: call.credential,
        action: CLOUD_CALL_ACTION,
        target: `${call.service}:${call.method} ${call.path}`,
        detail: {
          service: call.service,
          method: call.method,
          path: call.path,
          status: call.status ?? null,
          requestId: call.requestId ?? null,
          ms: call.ms,
        },
        at: now().toISOString(),
      });
    } catch (e) {
      // The call happened whatever the store says; losing its audit line is worth a loud log.
      logger.error('audit: a cloud call could not be recorded', {
        credential: call.credential,
        call: `${call.method} ${call.path}`,
        status: call.status,
        error: e instanceof Error ? e.message : String(e),
      });
    }
  };
}
