// Retry with exponential backoff and jitter, and a circuit breaker, from cockatiel. Only
// transient failures (5xx, timeouts, connection errors) count; a 4xx is an answer, not a fault.
import {
  type CircuitBreakerPolicy,
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleWhen,
  retry,
} from 'cockatiel';

export interface RetrySettings {
  /** Attempts after the first one. */
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export interface BreakerSettings {
  /** Consecutive transient failures that open the circuit. */
  consecutiveFailures: number;
  /** How long the circuit stays open before one trial request. */
  halfOpenAfterMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { maxRetries: 3, initialDelayMs: 200, maxDelayMs: 5000 };
export const DEFAULT_BREAKER: BreakerSettings = { consecutiveFailures: 5, halfOpenAfterMs: 30_000 };

/** A failure worth retrying: thrown inside the policies, unwrapped by the transport. */
export class TransientFailure extends Error {
  constructor(
    message: string,
    readonly payload: unknown,
  ) {
    super(message);
    this.name = 'TransientFailure';
  }
}

const isTransient = handleWhen((e) => e instanceof TransientFailure);

export function createBreaker(s: BreakerSettings): CircuitBreakerPolicy {
  return circuitBreaker(isTransient, {
    halfOpenAfter: s.halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(s.consecutiveFailures),
  });
}

export function createRetry(s: RetrySettings) {
  return retry(isTransient, {
    maxAttempts: s.maxRetries,
    backoff: new ExponentialBackoff({ initialDelay: s.initialDelayMs, maxDelay: s.maxDelayMs }),
  });
}
