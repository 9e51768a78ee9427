// What an executor may do and how patiently: concurrency limits, retries, polling, and what a
// pause does to migrations in flight. Validated once; an error names the key and the value.

export interface ConcurrencyLimits {
  /** Outgoing live migrations per source host: Nova's max_concurrent_live_migrations (default 1). */
  perSourceHost: number;
  /** Per-host overrides of perSourceHost, by nova-compute host name. */
  perSourceHostOverrides: Record<string, number>;
  /** Incoming live migrations per destination host. */
  perDestinationHost: number;
  /** Live migrations in flight per aggregate. */
  perAggregate: number;
  /** Live migrations in flight in the whole cloud (all executions that share one slot pool). */
  global: number;
  /**
   * An aggregate's own limits, where its configuration sets them: its executions and hosts are
   * held to these, not to the defaults above, while several aggregates share the one pool.
   */
  byAggregate?: Record<string, AggregateLimits>;
}

export type AggregateLimits = Pick<
  ConcurrencyLimits,
  'perSourceHost' | 'perDestinationHost' | 'perAggregate'
>;

export interface RetrySettings {
  /** Tries per move, the first included; after the last failure the server is quarantined. */
  attempts: number;
  /** Wait after the first failure; each further failure doubles it, up to backoffMaxSeconds. */
  backoffBaseSeconds: number;
  backoffMaxSeconds: number;
}

export interface ExecutorSettings {
  limits: ConcurrencyLimits;
  retry: RetrySettings;
  /** How often Nova is asked about a migration in flight. */
  pollSeconds: number;
  /** On pause (shouldStop): let migrations in flight finish, or abort them. */
  onStop: 'finish' | 'abort';
  /**
   * How far Nova's clock may be behind ours: a migration record created up to this long before
   * the intent was stored can still be the one our call started.
   */
  clockSkewSeconds: number;
  /**
   * After a call whose answer was lost (timeout, 5xx, crash), how long to wait before reading
   * Nova's records to learn whether it acted: a request still travelling must have landed.
   */
  settleSeconds: number;
  /**
   * How long Nova may take to show the migration record of an accepted call (the conductor
   * creates it after the API answers) before the attempt is counted as failed.
   */
  recordWaitSeconds: number;
  /** Sends of one attempt whose answer was lost and that Nova never saw, before the attempt fails. */
  maxResends: number;
  /**
   * How long an abort may wait for Nova to confirm it (the migration cancelled, or completed
   * first) before the move ends `failed` ("abort not confirmed") and its server is quarantined:
   * where it ends up is then Nova's to say, and nobody should plan it until a person looks.
   * Counted from when this process began the abort (or resumed it after a restart).
   */
  abortGiveUpSeconds: number;
  /**
   * When an execution ends aborted, the servers of its moves that did not complete: left to the
   * loop's afterAbort hold ('cooldown'), or quarantined until an operator releases them.
   */
  onAbort: 'cooldown' | 'quarantine';
}

export const DEFAULT_LIMITS: ConcurrencyLimits = {
  perSourceHost: 1,
  perSourceHostOverrides: {},
  perDestinationHost: 2,
  perAggregate: 10,
  global: 20,
};

export const DEFAULT_EXECUTOR_SETTINGS: ExecutorSettings = {
  limits: DEFAULT_LIMITS,
  retry: { attempts: 3, backoffBaseSeconds: 60, backoffMaxSeconds: 900 },
  pollSeconds: 2,
  onStop: 'finish',
  clockSkewSeconds: 60,
  settleSeconds: 5,
  recordWaitSeconds: 120,
  maxResends: 5,
  abortGiveUpSeconds: 900,
  onAbort: 'cooldown',
};

export interface ExecutorSettingsInput {
  limits?: Partial<ConcurrencyLimits>;
  retry?: Partial<RetrySettings>;
  pollSeconds?: number;
  onStop?: 'finish' | 'abort';
  clockSkewSeconds?: number;
  settleSeconds?: number;
  recordWaitSeconds?: number;
  maxResends?: number;
  abortGiveUpSeconds?: number;
  onAbort?: 'cooldown' | 'quarantine';
}

function positiveInt(key: string, v: number): number {
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`executor.${key}: expected an integer >= 1, got ${v}`);
  return v;
}

function nonNegative(key: string, v: number): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`executor.${key}: expected a number >= 0, got ${v}`);
  return v;
}

/** Defaults filled in and every value checked; a bad one throws naming `executor.<key>`. */
export function resolveExecutorSettings(input: ExecutorSettingsInput = {}): ExecutorSettings {
  const d = DEFAULT_EXECUTOR_SETTINGS;
  const l = { ...d.limits, ...input.limits };
  const overrides: Record<string, number> = {};
  for (const [host, n] of Object.entries(l.perSourceHostOverrides)) {
    overrides[host] = positiveInt(`limits.perSourceHostOverrides.${host}`, n);
  }
  const r = { ...d.retry, ...input.retry };
  const onStop = input.onStop ?? d.onStop;
  if (onStop !== 'finish' && onStop !== 'abort') {
    throw new RangeError(`executor.onStop: expected "finish" or "abort", got ${JSON.stringify(onStop)}`);
  }
  const onAbort = input.onAbort ?? d.onAbort;
  if (onAbort !== 'cooldown' && onAbort !== 'quarantine') {
    throw new RangeError(
      `executor.onAbort: expected "cooldown" or "quarantine", got ${JSON.stringify(onAbort)}`,
    );
  }
  const abortGiveUpSeconds = nonNegative(
    'abortGiveUpSeconds',
    input.abortGiveUpSeconds ?? d.abortGiveUpSeconds,
  );
  if (abortGiveUpSeconds === 0)
    throw new RangeError('executor.abortGiveUpSeconds: expected a number > 0, got 0');
  const pollSeconds = nonNegative('pollSeconds', input.pollSeconds ?? d.pollSeconds);
  if (pollSeconds === 0) throw new RangeError('executor.pollSeconds: expected a number > 0, got 0');
  const base = nonNegative('retry.backoffBaseSeconds', r.backoffBaseSeconds);
  const max = nonNegative('retry.backoffMaxSeconds', r.backoffMaxSeconds);
  if (max < base) {
    throw new RangeError(
      `executor.retry.backoffMaxSeconds: expected at least backoffBaseSeconds (${base}), got ${max}`,
    );
  }
  return {
    limits: {
      perSourceHost: positiveInt('limits.perSourceHost', l.perSourceHost),
      perSourceHostOverrides: overrides,
      perDestinationHost: positiveInt('limits.perDestinationHost', l.perDestinationHost),
      perAggregate: positiveInt('limits.perAggregate', l.perAggregate),
      global: positiveInt('limits.global', l.global),
      byAggregate: Object.fromEntries(
        Object.entries(l.byAggregate ?? {}).map(([a, x]) => [
          a,
          {
            perSourceHost: positiveInt(`limits.byAggregate.${a}.perSourceHost`, x.perSourceHost),
            perDestinationHost: positiveInt(
              `limits.byAggregate.${a}.perDestinationHost`,
              x.perDestinationHost,
            ),
            perAggregate: positiveInt(`limits.byAggregate.${a}.perAggregate`, x.perAggregate),
          },
        ]),
      ),
    },
    retry: {
      attempts: positiveInt('retry.attempts', r.attempts),
      backoffBaseSeconds: base,
      backoffMaxSeconds: max,
    },
    pollSeconds,
    onStop,
    clockSkewSeconds: nonNegative('clockSkewSeconds', input.clockSkewSeconds ?? d.clockSkewSeconds),
    settleSeconds: nonNegative('settleSeconds', input.settleSeconds ?? d.settleSeconds),
    recordWaitSeconds: nonNegative('recordWaitSeconds', input.recordWaitSeconds ?? d.recordWaitSeconds),
    maxResends: positiveInt('maxResends', input.maxResends ?? d.maxResends),
    abortGiveUpSeconds,
    onAbort,
  };
}

/** Wait before the next try after `failedAttempt` failed: base x 2^(n-1), at most max. */
export function backoffSeconds(failedAttempt: number, retry: RetrySettings): number {
  return Math.min(retry.backoffMaxSeconds, retry.backoffBaseSeconds * 2 ** Math.max(0, failedAttempt - 1));
}
