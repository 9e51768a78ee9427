// The planner: a snapshot and a policy in, a plan out. Pure and deterministic: no I/O, no
// clock (the caller may pass one to fill stats.planningMs), iteration in sorted-id order.
import { createHash } from 'node:crypto';
import { InputError } from '../errors.js';
import { type AggregatePlan, PLAN_FORMAT, type Plan } from '../model/plan.js';
import type { Snapshot } from '../model/snapshot.js';
import { aggregateScope, scopedSnapshot } from '../policy/aggregate-scope.js';
import { planThreshold } from '../policy/threshold.js';
import type { Policy } from '../policy/types.js';
import { PlanContext } from './context.js';
import { finalizeAggregate } from './finalize.js';
import { balanceStats, round } from './objectives/balance-stats.js';
import { forecastObjective } from './objectives/forecast-objective.js';
import { addForecastPeakWords } from './objectives/forecast-reasons.js';
import { imbalanceLowerBounds } from './objectives/lower-bound.js';
import { evacuate } from './phases/evacuate.js';
import { drainPinnedHosts, pack } from './phases/pack.js';
import { repair } from './phases/repair.js';
import { repairOnly } from './phases/repair-only.js';
import { spread } from './phases/spread.js';
import { ClusterState } from './state.js';

/** The empty hosts kept as spares (largest first), so the rest of the freed ones may be powered off. */
function spareHosts(state: ClusterState, agg: number, count: number): string[] {
  return state.aggregates[agg]!.hosts.filter((h) => state.hosts[h]!.usable && state.on[h]!.size === 0)
    .sort((a, b) => state.hosts[b]!.cap[1]! - state.hosts[a]!.cap[1]! || a - b)
    .slice(0, count)
    .map((h) => state.hosts[h]!.name);
}

export interface PlanOptions {
  /** Milliseconds clock for stats.planningMs; without it planningMs is 0 and the plan is byte-stable. */
  now?: () => number;
  /**
   * Whether spread plans carry the gap (stats.imbalanceLowerBound:<aggregate>, docs/planner.md).
   * Default true. The bound is for an operator reading one plan; at 10,000 servers it costs about
   * a third of the planning, so the control loop, which re-plans an aggregate whenever one of
   * its servers changes, leaves it out (docs/control-loop.md).
   */
  lowerBound?: boolean;
}

/**
 * Plans the aggregates the policy selects. Hosts of the other aggregates are left out entirely, so
 * they are neither sources nor destinations. Throws InputError when the policy names an aggregate
 * the snapshot lacks or two planned aggregates share a host.
 */
export function planSnapshot(snapshot: Snapshot, policy: Policy, options: PlanOptions = {}): Plan {
  const started = options.now?.() ?? 0;
  const scope = aggregateScope(snapshot, policy);
  if (scope.issues.length > 0) throw new InputError([...scope.issues]);
  const scoped = scopedSnapshot(snapshot, scope);
  // With load: forecast the search runs on the forecast objective (objectives/forecast-objective.ts);
  // before/after stay on current load, as formats.md defines them, taken on a state of their own.
  const forecast = forecastObjective(scoped, policy);
  const state = new ClusterState(forecast?.snapshot ?? scoped, forecast?.policy ?? policy);
  const current = forecast && forecast.policy !== policy ? new ClusterState(scoped, policy) : state;
  const before = current.aggregates.map((a) => balanceStats(current, a.index));
  const objectiveBefore = state.aggregates.map((a) => state.imbalance(a.index));
  const initiallyOccupied = state.hosts.map((_, h) => state.on[h]!.size > 0);
  const lowerBound =
    policy.mode === 'spread' && options.lowerBound !== false ? imbalanceLowerBounds(state) : null;

  const ctx = new PlanContext(state, forecast?.policy ?? policy);
  let partlyDrained: number[][] = state.aggregates.map(() => []);
  if (policy.mode === 'repair-only') repairOnly(ctx);
  else {
    evacuate(ctx);
    repair(ctx);
    if (policy.mode === 'spread') spread(ctx);
    else {
      pack(ctx);
      partlyDrained = drainPinnedHosts(ctx);
    }
  }

  const limits = { perHostOutgoing: policy.concurrency.perHostOutgoing, global: policy.concurrency.global };
  // Step order, waves, and what each move is worth there: the plan as the operator reads it.
  state.undo(state.applied.length);
  const finals = state.aggregates.map((agg) =>
    finalizeAggregate(state, ctx.policy, agg.index, ctx.moves[agg.index]!, limits),
  );
  if (forecast) {
    const names = policy.dimensions.map((d) => d.name);
    for (const agg of state.aggregates) {
      const info = forecast.aggregates.get(agg.name);
      if (info?.load === 'forecast') addForecastPeakWords(state, finals[agg.index]!, info.peaks, names);
    }
  }
  for (const moves of finals) for (const m of moves) state.apply(m.server, m.to);
  if (current !== state) for (const moves of finals) for (const m of moves) current.apply(m.server, m.to);
  const aggregates: AggregatePlan[] = state.aggregates.map((agg) => {
    const scheduled = finals[agg.index]!;
    const stepOfSeq = new Map(scheduled.map((m, i) => [m.seq, i + 1]));
    return {
      name: agg.name,
      moves: scheduled.map((m, i) => {
        const s = state.servers[m.server]!;
        const afterSteps = m.needs.map((q) => stepOfSeq.get(q)!).sort((a, b) => a - b);
        return {
          step: i + 1,
          wave: m.wave,
          server: s.id,
          ...(s.name && s.name !== s.id ? { serverName: s.name } : {}),
          from: state.hosts[m.from]!.name,
          to: state.hosts[m.to]!.name,
          phase: m.phase,
          ...(m.softGroup ? { softGroup: true } : {}),
          reason: m.reason,
          estimatedSeconds: s.estSeconds,
          gain: round(m.gain),
          ...(afterSteps.length > 0 ? { after: afterSteps } : {}),
          ...(m.mandatory !== null ? { mandatory: m.mandatory } : {}),
          ...(m.threshold !== null
            ? { threshold: { worth: round(m.threshold.worth), bar: round(m.threshold.bar) } }
            : {}),
          ...(m.exchangeStep !== null ? { exchangeWith: m.exchangeStep } : {}),
          ...(m.makesRoomStep !== null ? { makesRoomFor: m.makesRoomStep } : {}),
        };
      }),
      before: before[agg.index]!,
      after: balanceStats(current, agg.index),
      hostsFreed: agg.hosts
        .filter((h) => initiallyOccupied[h] && state.on[h]!.size === 0)
        .map((h) => state.hosts[h]!.name),
      unresolved: ctx.unresolved[agg.index]!,
      ...(policy.mode === 'pack'
        ? {
            spareHosts: spareHosts(state, agg.index, policy.pack.spareHosts),
            hostsPartlyDrained: partlyDrained[agg.index]!.map((h) => state.hosts[h]!.name),
          }
        : {}),
      ...(forecast
        ? {
            forecast: {
              ...forecast.aggregates.get(agg.name)!,
              imbalanceBefore: round(objectiveBefore[agg.index]!),
              imbalanceAfter: round(state.imbalance(agg.index)),
            },
          }
        : {}),
    };
  });

  return {
    format: PLAN_FORMAT,
    snapshotTakenAt: snapshot.takenAt,
    // A repair-only policy's plan is a spread plan to /1 readers, flagged for ours.
    ...(policy.mode === 'repair-only' ? { mode: 'spread', repairOnly: true } : { mode: policy.mode }),
    aggregates,
    stats: {
      planningMs: options.now ? Math.round((options.now() - started) * 10) / 10 : 0,
      moves: aggregates.reduce((n, a) => n + a.moves.length, 0),
      hosts: state.hosts.length,
      servers: state.servers.length,
      evaluations: ctx.work.evaluations,
      // Per aggregate (spread): no plan of as many moves can reach an imbalance below this.
      ...(lowerBound !== null
        ? Object.fromEntries(
            aggregates.map((a, i) => [
              `imbalanceLowerBound:${a.name}`,
              Math.floor(lowerBound(i, a.moves.length, state) * 1e6) / 1e6,
            ]),
          )
        : {}),
    },
    limits: {
      maxMoves: policy.budget.maxMoves,
      perHostOutgoing: limits.perHostOutgoing,
      globalConcurrent: limits.global,
      threshold: planThreshold(
        policy.threshold,
        policy.minGain,
        policy.migrationCostPerSecond,
        policy.softGroupPenalty,
      ),
      hotThreshold: policy.hotThreshold,
    },
    policyHash: createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 16),
  };
}
