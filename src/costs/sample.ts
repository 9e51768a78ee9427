// One observed live migration: what the cost learner fits. Samples come from Nova's
// os-migrations history (the cloud's past) and from the executor's own executions; the store
// keeps the executor's, Nova keeps the rest.

export const COST_OUTCOMES = ['completed', 'failed', 'error', 'cancelled', 'timeout'] as const;
/**
 * completed: the server arrived. failed/error: Nova gave up (error: refused before copying).
 * cancelled: aborted (by an operator or by us). timeout: our executor aborted it at its timeout,
 * so the true duration is at least `seconds` (a censored sample).
 */
export type CostOutcome = (typeof COST_OUTCOMES)[number];

export const COST_SOURCES = ['nova-history', 'executor'] as const;
export type CostSource = (typeof COST_SOURCES)[number];

export interface CostSample {
  aggregate: string;
  serverId: string;
  ramMB: number;
  /** Page dirty rate, MiB/s, when measured (Prometheus); absent otherwise. */
  dirtyRateMBps?: number | undefined;
  /** From the request (or, for queued history records, the estimated start) to the final status. */
  seconds: number;
  outcome: CostOutcome;
  source: CostSource;
  /** When it ended (ISO-8601 UTC): the newest samples are the ones kept when there are too many. */
  endedAt: string;
  /** Nova's migration id, when known: the same migration seen in history and by the executor counts once. */
  novaMigrationId?: number | undefined;
  /** Seconds subtracted from Nova's created_at..updated_at because the migration waited behind others on its source. */
  queuedSeconds?: number | undefined;
}

/**
 * The executor's samples win over Nova's record of the same migration: the executor timed it
 * itself and knows when it aborted at a timeout, which Nova records only as "cancelled".
 */
export function mergeSamples(history: readonly CostSample[], executor: readonly CostSample[]): CostSample[] {
  const ours = new Set(executor.flatMap((s) => (s.novaMigrationId === undefined ? [] : [s.novaMigrationId])));
  return [
    ...history.filter((s) => s.novaMigrationId === undefined || !ours.has(s.novaMigrationId)),
    ...executor,
  ];
}

/** A sample from one of the executor's own moves: timed from the stored intent to the final state. */
export function executorSample(e: {
  aggregate: string;
  serverId: string;
  ramMB: number;
  dirtyRateMBps?: number | undefined;
  issuedAt: string;
  endedAt: string;
  outcome: CostOutcome;
  novaMigrationId?: number | null | undefined;
}): CostSample {
  const seconds = (Date.parse(e.endedAt) - Date.parse(e.issuedAt)) / 1000;
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new RangeError(
      `cost sample of server ${e.serverId}: endedAt ${e.endedAt} is not after issuedAt ${e.issuedAt}`,
    );
  return {
    aggregate: e.aggregate,
    serverId: e.serverId,
    ramMB: e.ramMB,
    ...(e.dirtyRateMBps !== undefined ? { dirtyRateMBps: e.dirtyRateMBps } : {}),
    seconds,
    outcome: e.outcome,
    source: 'executor',
    endedAt: new Date(Date.parse(e.endedAt)).toISOString(),
    ...(e.novaMigrationId !== undefined && e.novaMigrationId !== null
      ? { novaMigrationId: e.novaMigrationId }
      : {}),
  };
}
