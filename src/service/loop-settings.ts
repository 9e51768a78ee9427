// From the service configuration to what the control loop and the executor consult, aggregate by
// aggregate: the configuration speaks in operator units (durations, fractions, named limits), the
// loop in the seconds and shapes its pure parts take.
import { aggregateConfig } from '../config/aggregate.js';
import type { AggregateConfig, ServiceConfig } from '../config/types.js';
import type { TimeoutSettings } from '../costs/estimator.js';
import type { ExecutorSettingsInput } from '../executor/settings.js';
import { DEFAULT_HEALTH_THRESHOLDS } from '../loop/health.js';
import type { AggregateLoopSettings, LoopSettings } from '../loop/settings.js';
import type { CostModelPolicy } from '../policy/types.js';
import { defaultRatioSettings, type RatioSettings } from '../prevention/settings.js';

/**
 * A balancing plan starts only from this multiple of the planner's target imbalance: between the
 * target (where the planner stops) and this, the loop stands still, so noise around the target
 * never starts a round of migrations.
 */
export const START_IMBALANCE_FACTOR = 1.5;

const secondsOf = (ms: number) => ms / 1000;

export function aggregateLoopSettings(
  a: AggregateConfig,
  costModel?: CostModelPolicy,
): AggregateLoopSettings {
  const e = a.emergencies;
  const sustain = [e.cpu?.forMs, e.memory?.forMs].filter((x): x is number => x !== undefined);
  return {
    name: a.name,
    mode: a.mode,
    paused: a.paused,
    windows: a.windows,
    budget: { perCycle: a.budgets.perCycle, perWindow: a.budgets.perWindow, perDay: a.budgets.perDay },
    emergencyBudget: { perCycle: a.budgets.emergency.perCycle, perDay: a.budgets.emergency.perDay },
    emergencies: {
      evacuateReasonPrefix: e.evacuateDisabledReasonPrefix ?? '',
      cpuLimit: e.cpu?.above,
      memoryLimit: e.memory?.above,
      // One clock per host: the shorter of the two sustain times applies to whichever limit is crossed.
      sustainSeconds: sustain.length > 0 ? secondsOf(Math.min(...sustain)) : 0,
    },
    policy: costModel ? { ...a.policy, costModel } : a.policy,
    startImbalance: a.policy.mode === 'spread' ? a.policy.spread.targetImbalance * START_IMBALANCE_FACTOR : 0,
    serverCooldownSeconds: secondsOf(a.cooldowns.serverMs),
    aggregateCooldownSeconds: secondsOf(a.cooldowns.aggregateMs),
    abortHoldSeconds: secondsOf(a.cooldowns.afterAbortMs),
    approvalExpirySeconds: secondsOf(a.approvalExpiryMs),
    health: {
      ...DEFAULT_HEALTH_THRESHOLDS,
      maxSnapshotAgeSeconds: secondsOf(a.dataHealth.maxSnapshotAgeMs),
      maxMissingLoadFraction: a.dataHealth.maxMissingFraction,
      settleMaxSeconds: secondsOf(a.dataHealth.maxMetricAgeMs),
    },
  };
}

/**
 * The loop's settings for the aggregates of the cloud as last recorded: each one listed in the
 * configuration, and every other one the cloud has with the configured defaults (a new aggregate
 * is observed, never acted on, unless the defaults say otherwise).
 */
export function loopSettings(
  config: ServiceConfig,
  cloudAggregates: readonly string[],
  costModelOf: (aggregate: string, policyModel: CostModelPolicy) => CostModelPolicy = (_a, m) => m,
): LoopSettings {
  const names = [...new Set([...Object.keys(config.aggregates), ...cloudAggregates])].sort();
  return {
    paused: config.paused,
    globalBudget: { perCycle: config.budgets.perCycle, perDay: config.budgets.perDay },
    aggregates: names.map((n) => {
      const a = aggregateConfig(config, n);
      return aggregateLoopSettings(a, costModelOf(n, a.policy.costModel));
    }),
  };
}

/**
 * One aggregate's executor settings: its own `retry` and `onPause` on top of the pool's
 * (`executorSettings`), which its executions run with.
 */
export function executorSettingsFor(config: ServiceConfig, aggregate: string): ExecutorSettingsInput {
  const a = aggregateConfig(config, aggregate);
  return {
    ...executorSettings(config),
    retry: {
      attempts: a.retry.attempts,
      backoffBaseSeconds: secondsOf(a.retry.backoffBaseMs),
      backoffMaxSeconds: secondsOf(a.retry.backoffMaxMs),
    },
    onStop: a.onPause,
    abortGiveUpSeconds: secondsOf(a.migrationTimeout.abortGiveUpMs),
    onAbort: a.cooldowns.onAbort,
  };
}

/**
 * The executor runs every aggregate from one slot pool: the defaults' limits, every host
 * override, and each configured aggregate's own limits for its moves.
 */
export function executorSettings(config: ServiceConfig): ExecutorSettingsInput {
  const d = config.defaults;
  const overrides: Record<string, number> = {};
  for (const a of [d, ...Object.values(config.aggregates)])
    Object.assign(overrides, a.concurrency.perSourceHostOverrides);
  return {
    limits: {
      perSourceHost: d.concurrency.perSourceHost,
      perSourceHostOverrides: overrides,
      perDestinationHost: d.concurrency.perDestinationHost,
      perAggregate: d.concurrency.perAggregate,
      global: config.concurrency.global,
      byAggregate: Object.fromEntries(
        Object.values(config.aggregates).map((a) => [
          a.name,
          {
            perSourceHost: a.concurrency.perSourceHost,
            perDestinationHost: a.concurrency.perDestinationHost,
            perAggregate: a.concurrency.perAggregate,
          },
        ]),
      ),
    },
    retry: {
      attempts: d.retry.attempts,
      backoffBaseSeconds: secondsOf(d.retry.backoffBaseMs),
      backoffMaxSeconds: secondsOf(d.retry.backoffMaxMs),
    },
    onStop: d.onPause,
    abortGiveUpSeconds: secondsOf(d.migrationTimeout.abortGiveUpMs),
    onAbort: d.cooldowns.onAbort,
  };
}

export function timeoutSettings(a: AggregateConfig): TimeoutSettings {
  return {
    margin: a.migrationTimeout.margin,
    floorSeconds: secondsOf(a.migrationTimeout.floorMs),
    ceilingSeconds: secondsOf(a.migrationTimeout.ceilingMs),
  };
}

export function ratioSettings(a: AggregateConfig): RatioSettings | null {
  const r = a.vcpuRatio;
  if (!r) return null;
  // Contention (steal) limits come from the configuration; utilization limits keep prevention's
  // defaults, so a host is relieved when either its CPUs are busy or its guests wait for them.
  return {
    ...defaultRatioSettings(r.target, r.floor),
    stepDown: r.step,
    stepUp: r.step / 2,
    hotSteal: r.lowerAbove,
    coolSteal: r.restoreBelow,
  };
}
