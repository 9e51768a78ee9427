// The API's public surface, for `aicerine serve`.
import type { CloudSession } from '../cloud/session.js';
import { KeystoneTokenValidator } from './keystone.js';

export type { ZodApp } from './context.js';
export {
  type AbortResult,
  ControlError,
  type PauseEntry,
  type PauseScope,
  type PauseState,
  type ServiceControl,
  StoreServiceControl,
} from './control.js';
export {
  AuthUnavailableError,
  type Caller,
  KeystoneTokenValidator,
  type TokenValidator,
} from './keystone.js';
export { type ApiLogger, createApiLogger } from './logger.js';
export { ApiMetrics, type CycleEvent } from './metrics.js';
export {
  API_ACTIONS,
  type ApiAction,
  type ApiPolicy,
  DEFAULT_API_POLICY,
  loadApiPolicy,
  parseApiPolicy,
} from './policy.js';
export {
  type ApiAuth,
  type ApiOptions,
  buildApi,
  isLoopback,
  type ListenOptions,
  listenApi,
} from './server.js';

/** Validates callers' tokens with the service's own Keystone session (its reader credential). */
export function keystoneValidatorFor(session: CloudSession, cacheTtlMs?: number): KeystoneTokenValidator {
  return new KeystoneTokenValidator({
    identityUrl: session.config.auth.authUrl,
    serviceToken: async () => (await session.token()).token,
    invalidateServiceToken: (t) => session.auth.invalidate(t),
    ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
  });
}
