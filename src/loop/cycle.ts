// One level-triggered cycle of the control loop: read the cloud, then per configured aggregate
// gate on data health, plan (pure) with cooled-down and quarantined servers held, decide by mode,
// window and budgets what may start, store the plan with its decision, and hand what starts to
// the executor. Nothing here remembers anything between cycles but through the store (and the
// hot-host clock, which only delays emergencies), so a restarted loop picks up where it was.
import { checkPlan, type ViolationCode } from '../checker/index.js';
import { budgetLeft, emergencyBudgetLeft, tightestBudget } from '../config/budget.js';
import { windowState } from '../config/windows.js';
import type { AggregatePlan, Move, Plan } from '../model/plan.js';
import type { Snapshot } from '../model/snapshot.js';
import { planSnapshot } from '../planner/index.js';
import type { DimensionDef } from '../policy/types.js';
import { type Decision, decide } from './decide.js';
import { assessEmergencies } from './emergencies.js';
import {
  absorbedChange,
  fingerprintChange,
  loadTolerance,
  type PlanningFingerprint,
  planningFingerprint,
  touchedHosts,
} from './fingerprint.js';
import { measuredBalance, recheckGain } from './gain.js';
import { assessHealth, type HealthInput, type HealthVerdict } from './health.js';
import { abortHolds, applyHolds, cooldownHolds, hostHolds, markHeldHosts, type ServerHold } from './holds.js';
import type {
  CloudReader,
  ExecutorPort,
  LastExecution,
  LoopStore,
  PlanProgress,
  StoredPlanStatus,
  StoredPlanView,
} from './ports.js';
import type { AggregateLoopSettings, LoopSettings } from './settings.js';
import { AggregateSlices } from './slices.js';

/** The executor's `startedBy` of an emergency execution: budgets count these apart. */
export const EMERGENCY_STARTER = 'loop:emergency';

export interface AggregateOutcome {
  aggregate: string;
  /** What happened, in one line. */
  summary: string;
  verdict: HealthVerdict | null;
  planId: string | null;
  started: number;
  decision: Decision | null;
  /**
   * The aggregate's imbalance measured on this cycle's snapshot (not a stored plan's figure);
   * absent when nothing was planned.
   */
  imbalance?: number;
  /** The same, per dimension; absent when nothing was planned. */
  stats?: AggregatePlan['before'];
  /** Moves in the plan this cycle made or kept; absent when no plan was made. */
  planMoves?: number;
  /** Servers the plan was not allowed to move this cycle, each with why (cooldowns, aborts, quarantine, tasks). */
  held?: ServerHold[];
  /**
   * The planning inputs were those of the aggregate's last plan (loads within the tolerance):
   * nothing was planned, checked or stored, and `planId` is that plan's (null when it had no move).
   */
  unchanged?: boolean;
}

export interface CycleReport {
  at: string;
  aggregates: AggregateOutcome[];
}

export interface LoopDeps {
  reader: CloudReader;
  store: LoopStore;
  executor: ExecutorPort;
  now: () => Date;
  /**
   * Hosts an operator task holds (host locks not held by the executor), each with why: the loop
   * plans no move from or to them. Throws when the locks cannot be read: the aggregate waits.
   */
  heldHosts?: () => Promise<ReadonlyMap<string, string>>;
}

/** The plan of one aggregate as its own document (what the store keeps and the checker replays). */
function single(plan: Plan, agg: AggregatePlan): Plan {
  return { ...plan, aggregates: [agg] };
}

/**
 * The moves of a stored plan not yet handed to an execution; a prerequisite that completed in an
 * earlier execution is met (one that ran and failed still holds its dependents back).
 */
function remainingMoves(agg: AggregatePlan, progress: PlanProgress): AggregatePlan {
  return {
    ...agg,
    moves: agg.moves
      .filter((m) => !progress.started.has(m.step))
      .map((m) => {
        if (m.after === undefined) return m;
        const after = m.after.filter((st) => !progress.completed.has(st));
        const { after: _done, ...rest } = m;
        return after.length > 0 ? { ...rest, after } : rest;
      }),
  };
}

/**
 * Keeps the approved moves that still hold on the fresh snapshot, replayed by the independent
 * checker; a move that breaks a guarantee now (its server moved, its destination filled up...)
 * is dropped with the checker's words, and so is every move that needed it.
 */
/**
 * What an approved subset of a plan is not judged on again: its figures and words describe the
 * whole plan as it was made (a subset renumbered quotes other states), and whether a move still
 * pays is judged on the fresh figures apart (loop/gain.ts). What stays is whether it is safe.
 */
const JUDGED_AT_PLANNING: ReadonlySet<ViolationCode> = new Set<ViolationCode>([
  'stats-mismatch',
  'hosts-freed-mismatch',
  'reason-mismatch',
  'below-threshold',
  'nonpositive-gain',
  'exchange-unpaid',
  'hot-not-first',
  'host-send-receive',
  'mandatory-mislabelled',
]);

export function revalidate(
  snapshot: Snapshot,
  plan: Plan,
  approved: ReadonlySet<number>,
): { moves: Move[]; dropped: { step: number; why: string }[] } {
  const agg = plan.aggregates[0]!;
  let moves = agg.moves.filter((m) => approved.has(m.step));
  const dropped: { step: number; why: string }[] = [];
  for (let round = 0; round < agg.moves.length + 1 && moves.length > 0; round++) {
    // The sub-plan is renumbered (steps 1..n, dense waves) so the checker judges the moves, not
    // the gaps left by the unapproved ones; its findings are mapped back to the plan's steps.
    const stepOf = new Map(moves.map((m, i) => [m.step, i + 1]));
    const waves = [...new Set(moves.map((m) => m.wave))].sort((a, b) => a - b);
    const waveOf = new Map(waves.map((w, i) => [w, i + 1]));
    const trial: Plan = {
      ...plan,
      limits: undefined,
      aggregates: [
        {
          ...agg,
          moves: moves.map((m, i) => {
            const after = (m.after ?? []).flatMap((st) => (stepOf.has(st) ? [stepOf.get(st)!] : []));
            const { after: _unused, ...rest } = m;
            return { ...rest, step: i + 1, wave: waveOf.get(m.wave)!, ...(after.length ? { after } : {}) };
          }),
        },
      ],
    };
    const bad = checkPlan(snapshot, trial)
      .violations.filter((v) => v.step !== undefined && !JUDGED_AT_PLANNING.has(v.code))
      .map((v) => ({ ...v, step: moves[v.step! - 1]?.step ?? v.step }));
    if (bad.length === 0) break;
    const badSteps = new Map<number, string>();
    for (const v of bad) if (!badSteps.has(v.step!)) badSteps.set(v.step!, `${v.code}: ${v.detail}`);
    for (const [step, why] of badSteps) dropped.push({ step, why: `no longer valid: ${why}` });
    const gone = new Set(badSteps.keys());
    const next: Move[] = [];
    for (const m of moves) {
      if (gone.has(m.step)) continue;
      const needs = (m.after ?? []).filter((s) => gone.has(s));
      if (needs.length > 0) {
        gone.add(m.step);
        dropped.push({ step: m.step, why: `needed step ${needs.join(', ')}, no longer valid` });
        continue;
      }
      next.push(m);
    }
    moves = next;
  }
  return { moves, dropped };
}

/**
 * Per host on either end of the execution's migrations, when the last one there ended. Only
 * migrations that moved their server count: one aborted or failed with the server still on its
 * source changed no placement, and waiting for its hosts' samples blocked the cycle after every
 * abort (seen on the lab). A move that did not complete but whose server is no longer on its
 * source (or no longer in the aggregate) counts, on its source and wherever the server is now.
 */
function settlingOf(e: LastExecution, snapshot: Snapshot): HealthInput['settling'] {
  const hostOf = new Map(snapshot.servers.map((s) => [s.id, s.host]));
  const hosts: Record<string, string> = {};
  for (const m of e.moves) {
    const now = hostOf.get(m.serverId);
    if (m.state !== 'completed' && now === m.from) continue;
    const end = m.endedAt ?? e.endedAt.toISOString();
    const ends = m.state === 'completed' || now === undefined ? [m.from, m.to] : [m.from, now];
    for (const h of ends) if (hosts[h] === undefined || hosts[h] < end) hosts[h] = end;
  }
  return { execution: e.id, endedAt: e.endedAt.toISOString(), hosts };
}

/** What the loop remembers of an aggregate's last plan: enough to know the next cycle's is the same. */
interface LastPlan {
  /** The inputs it was made from (loads as they were then: a slow drift adds up). */
  inputs: PlanningFingerprint;
  plan: Plan;
  /** The checker's refusal, when it refused the plan (it is not offered again unchanged). */
  refused: string | null;
  /** The stored plan (null: it had no move, nothing was stored) and the status it was stored in. */
  planId: string | null;
  status: StoredPlanStatus | null;
  /**
   * Kept across servers booted or deleted (stillHolds): the slice the checker last accepted it
   * on, so an unchanged slice is not checked again every cycle.
   */
  checkedWith?: PlanningFingerprint;
}

/** Whether two single-aggregate plans propose the same moves (figures and times aside). */
export function sameMoves(a: Plan, b: Plan): boolean {
  const x = a.aggregates[0];
  const y = b.aggregates[0];
  if (x === undefined || y === undefined || a.mode !== b.mode || a.repairOnly !== b.repairOnly) return false;
  if (x.name !== y.name || x.moves.length !== y.moves.length) return false;
  return x.moves.every((m, i) => {
    const n = y.moves[i]!;
    return (
      m.step === n.step &&
      m.server === n.server &&
      m.from === n.from &&
      m.to === n.to &&
      m.wave === n.wave &&
      m.phase === n.phase &&
      (m.softGroup ?? false) === (n.softGroup ?? false) &&
      (m.after ?? []).join(',') === (n.after ?? []).join(',')
    );
  });
}

// Without the gap: no one reads a stored plan's lower bound to decide, and it was a third of
// re-planning a 10,000-server aggregate after one of its servers changed.
const LOOP_PLAN_OPTIONS = { lowerBound: false } as const;

const FIGURES_ONLY: ReadonlySet<ViolationCode> = new Set(['stats-mismatch', 'reason-mismatch']);

/**
 * Whether the last plan's conclusion holds after servers were booted or deleted in the aggregate:
 * each host's figure moved by at most the tolerance counting them (absorbedChange), and the
 * independent checker still accepts the plan on today's snapshot (a new server may have taken a
 * destination's room). Checking costs a fraction of planning 10,000 servers again, and is only
 * done when a change is on a host one of the plan's moves leaves or enters.
 */
function stillHolds(
  last: LastPlan,
  planning: Snapshot,
  aggregate: string,
  fingerprint: PlanningFingerprint,
  tolerance: number,
  dimensions: readonly DimensionDef[],
): boolean {
  const agg = last.plan.aggregates.length === 1 ? last.plan.aggregates[0] : undefined;
  if (agg === undefined || agg.name !== aggregate) return false;
  if (absorbedChange(fingerprint, last.inputs, tolerance, dimensions) !== null) return false;
  // The checker accepted the plan on the slice it was made from, or on the one it was last
  // checked on; what can have changed its answer since, loads aside (they are within the
  // tolerance, as for any plan kept), is on the hosts whose servers came, went or changed.
  // Beyond its moves' own hosts, the checker reads the aggregate's other hosts only for figures
  // made of loads (balance, gains, hot hosts) or, for a plan balanced on the forecast, counts of
  // servers with a profile: such a plan is checked again on any change.
  const touched = touchedHosts(fingerprint, last.checkedWith ?? last.inputs);
  if (
    touched !== null &&
    (touched.size === 0 ||
      (agg.forecast === undefined && agg.moves.every((m) => !touched.has(m.from) && !touched.has(m.to))))
  )
    return true;
  // Its figures (before and after, the imbalance each reason quotes) are those of the day it was
  // made, as for any plan kept across loads within the tolerance; everything else must hold.
  return checkPlan(planning, last.plan).violations.every((v) => FIGURES_ONLY.has(v.code));
}

const OBSERVE_SUMMARY = 'observe mode: plan stored, nothing executed';

export class ControlLoop {
  /** Host → when it was first seen hot, per aggregate; only delays emergencies, so losing it is safe. */
  private readonly hotSince = new Map<string, Map<string, string>>();
  /**
   * Per aggregate, the inputs and outcome of its last plan. Losing it (a restart) costs one
   * planning per aggregate; the plan is still not stored again if its moves are the same.
   */
  private readonly lastPlans = new Map<string, LastPlan>();
  /**
   * Per aggregate, the planning fingerprint of the last cycle that took one: the next one copies
   * what it can of it (the figures of servers that are the same objects), so taking it costs what
   * changed. Only work is saved: the fingerprint is the same without it.
   */
  private readonly lastFingerprints = new Map<string, PlanningFingerprint>();

  constructor(
    private readonly deps: LoopDeps,
    private settings: LoopSettings,
  ) {}

  updateSettings(settings: LoopSettings): void {
    this.settings = settings;
  }

  currentSettings(): LoopSettings {
    return this.settings;
  }

  async runCycle(): Promise<CycleReport> {
    const cycleStartedAt = this.deps.now();
    const read = await this.deps.reader.read();
    const slices = new AggregateSlices(read.snapshot);
    const out: AggregateOutcome[] = [];
    for (const agg of this.settings.aggregates) {
      out.push(await this.runAggregate(agg, slices, read.problems, cycleStartedAt));
    }
    return { at: cycleStartedAt.toISOString(), aggregates: out };
  }

  private async runAggregate(
    s: AggregateLoopSettings,
    slices: AggregateSlices,
    problems: Parameters<typeof assessHealth>[0]['problems'],
    cycleStartedAt: Date,
  ): Promise<AggregateOutcome> {
    const { store, executor } = this.deps;
    const now = this.deps.now();
    const base = { aggregate: s.name, verdict: null, planId: null, started: 0, decision: null };
    if (executor.isRunning(s.name)) {
      // Its execution changes the cloud under any plan remembered from before it.
      this.lastPlans.delete(s.name);
      return { ...base, summary: 'an execution is running: waiting for it to end' };
    }
    // Everything below looks only at the aggregate's hosts, their servers and their groups.
    const snapshot = slices.slice(s.name);

    const lastExecution = await store.lastExecution(s.name);
    // Read while that execution still ran (a process that resumed one after a restart reads the
    // cloud while it finishes): the snapshot shows its migrations' double claims, which Aicerine
    // no longer counts as its own, and not its outcome. Seen on the lab after a kill -9 while
    // aborting: a contradictory verdict on the aborted move's destination. The next read will do.
    if (lastExecution !== null && lastExecution.endedAt.getTime() > cycleStartedAt.getTime()) {
      this.lastPlans.delete(s.name);
      return {
        ...base,
        summary: `execution ${lastExecution.id} ended during this cycle's read (${lastExecution.endedAt.toISOString()}): waiting for a read of its outcome`,
      };
    }
    const settling = lastExecution === null ? undefined : settlingOf(lastExecution, snapshot);
    const verdict = assessHealth(
      {
        aggregate: s.name,
        snapshot,
        problems,
        ownInFlight: executor.inFlight(),
        now,
        ...(settling ? { settling } : {}),
      },
      s.health,
    );
    await store.recordVerdict(verdict);

    let heldHosts: ReadonlyMap<string, string> = new Map();
    try {
      heldHosts = (await this.deps.heldHosts?.()) ?? heldHosts;
    } catch (err) {
      return {
        ...base,
        summary: `host locks unreadable, nothing planned: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    const holds = [
      ...hostHolds(snapshot, heldHosts),
      ...cooldownHolds(
        await store.cooldowns(new Date(now.getTime() - s.serverCooldownSeconds * 1000)),
        s.serverCooldownSeconds,
        now,
      ),
      ...(await store.quarantined()),
      ...abortHolds(
        await store.abortedMoves(new Date(now.getTime() - s.abortHoldSeconds * 1000)),
        s.abortHoldSeconds,
        now,
      ),
    ];
    const planning = markHeldHosts(applyHolds(snapshot, holds), heldHosts);

    const hostNames = new Set(slices.hosts(s.name).map((h) => h.name));
    const emergencies = assessEmergencies(
      planning,
      hostNames,
      s.emergencies,
      this.hotSince.get(s.name) ?? new Map(),
      now,
    );
    this.hotSince.set(s.name, emergencies.hotSince);
    const emergencyHosts = new Set(emergencies.hosts.map((e) => e.host));

    let stored: StoredPlanView | null = null;
    let approved = new Set<number>();
    let plan: Plan;
    if (s.mode === 'assisted') {
      stored = await store.pendingPlan(s.name);
      const expiresAt = stored
        ? stored.expiresAt !== null
          ? Date.parse(stored.expiresAt)
          : Date.parse(stored.createdAt) + s.approvalExpirySeconds * 1000
        : 0;
      if (stored && now.getTime() >= expiresAt) {
        await store.setPlanStatus(stored.id, 'expired', now.toISOString());
        await this.audit('loop', 'plan.expire', stored.id, { aggregate: s.name }, now);
        stored = null;
        this.lastPlans.delete(s.name);
      }
      // Made on figures from before another plan's execution ended: it proposes what that
      // execution may already have done (or undone). A fresh plan replaces it.
      if (
        stored &&
        lastExecution !== null &&
        lastExecution.planId !== stored.id &&
        Date.parse(stored.plan.snapshotTakenAt) < lastExecution.endedAt.getTime()
      ) {
        await store.setPlanStatus(stored.id, 'superseded', now.toISOString());
        await this.audit(
          'loop',
          'plan.supersede',
          stored.id,
          {
            aggregate: s.name,
            why: `its snapshot (${stored.plan.snapshotTakenAt}) predates the end of execution ${lastExecution.id} (${lastExecution.endedAt.toISOString()})`,
          },
          now,
        );
        stored = null;
        this.lastPlans.delete(s.name);
      }
    }
    // An assisted plan approved in part runs in part; what ran is not offered again, and the
    // plan stays open for the moves still undecided or waiting.
    let progress: PlanProgress | null = null;
    let approvedAll = new Set<number>();
    if (stored) {
      progress = await store.planProgress(stored.id);
      const p = progress;
      const left = stored.plan.aggregates
        .flatMap((a) => a.moves)
        .filter((m) => !p.started.has(m.step) && !p.rejected.has(m.step));
      if (p.started.size > 0 && left.length === 0) {
        // What ran ran, the rest was rejected: the plan is done with, and a new one is made.
        await store.setPlanStatus(stored.id, 'executing', now.toISOString());
        stored = null;
        this.lastPlans.delete(s.name);
        progress = null;
      }
    }
    const policy = { ...s.policy, aggregates: [s.name] };
    let fingerprint: PlanningFingerprint | null = null;
    let reused: LastPlan | null = null;
    /** Set when the last plan was kept across servers booted or deleted, checked on this slice. */
    let checkedWith: PlanningFingerprint | undefined;
    if (stored && progress) {
      plan = stored.plan;
      approvedAll = await store.approvedSteps(stored.id);
      approved = new Set([...approvedAll].filter((st) => !progress!.started.has(st)));
      this.lastPlans.delete(s.name);
    } else {
      fingerprint = planningFingerprint(planning, s.name, policy, this.lastFingerprints.get(s.name));
      this.lastFingerprints.set(s.name, fingerprint);
      const last = this.lastPlans.get(s.name);
      const tolerance = loadTolerance(s.policy);
      if (last !== undefined && fingerprintChange(fingerprint, last.inputs, tolerance) === null)
        reused = last;
      else if (
        last !== undefined &&
        last.refused === null &&
        stillHolds(last, planning, s.name, fingerprint, tolerance, s.policy.dimensions)
      ) {
        reused = last;
        checkedWith = fingerprint;
      }
      plan = reused !== null ? reused.plan : planSnapshot(planning, policy, LOOP_PLAN_OPTIONS);
    }
    const planned = plan.aggregates.find((a) => a.name === s.name);
    if (!planned) return { ...base, verdict, summary: `aggregate ${s.name} is not in the snapshot` };
    const measured = measuredBalance(planning, s.name, s.policy.dimensions);
    const figures = { imbalance: measured.imbalance, stats: measured, held: holds };
    let aggPlan = progress === null ? planned : remainingMoves(planned, progress);

    // The planner's output goes through the independent checker before anything may run; a plan
    // it refused and whose inputs have not changed since is not offered to it again.
    if (reused !== null && reused.refused !== null)
      return {
        ...base,
        verdict,
        planId: reused.planId,
        summary: `unchanged since plan ${reused.planId}: ${reused.refused}`,
        ...figures,
        planMoves: aggPlan.moves.length,
        unchanged: true,
      };
    if (!stored && reused === null) {
      const refused = await this.check(s, planning, plan, aggPlan, now);
      if (refused !== null) {
        this.lastPlans.set(s.name, {
          inputs: fingerprint!,
          plan,
          refused: refused.why,
          planId: refused.planId,
          status: 'observed',
        });
        return {
          ...base,
          verdict,
          planId: refused.planId,
          summary: refused.why,
          ...figures,
          planMoves: aggPlan.moves.length,
        };
      }
    }

    let candidates = aggPlan;
    const dropped: { step: number; why: string }[] = [];
    if (stored && approved.size > 0) {
      const r = revalidate(planning, single(plan, aggPlan), approved);
      dropped.push(...r.dropped);
      const keep = new Set(r.moves.map((m) => m.step));
      candidates = {
        ...aggPlan,
        moves: aggPlan.moves.filter((m) => keep.has(m.step) || !approved.has(m.step)),
      };
      approved = new Set([...approved].filter((st) => keep.has(st)));
      // Approved on the figures the plan was made from: what still pays is judged on today's.
      const gain = recheckGain(
        planning,
        s.name,
        candidates.moves.filter((m) => approved.has(m.step)),
        s.policy.dimensions,
      );
      dropped.push(...gain.dropped);
      const paying = new Set(gain.kept.map((m) => m.step));
      candidates = {
        ...candidates,
        moves: candidates.moves.filter((m) => paying.has(m.step) || !approved.has(m.step)),
      };
      approved = new Set([...approved].filter((st) => paying.has(st)));
      if (dropped.length > 0)
        await this.audit('loop', 'plan.moves-dropped', stored.id, { aggregate: s.name, dropped }, now);
    }
    // Decisions weigh the balance measured now, whatever figure a stored plan carries.
    if (stored) candidates = { ...candidates, before: measured };

    const win = windowState(s.windows, now);
    const since = (ms: number) => new Date(now.getTime() - ms);
    const dayAgo = since(86_400_000);
    const started = await store.startedMoves(s.name, dayAgo);
    const everywhere = await store.startedMovesEverywhere(dayAgo);
    const moment = { now, cycleStartedAt, windowOpenedAt: win.open ? win.since : null };
    const normal = tightestBudget([
      budgetLeft(
        s.budget,
        started.filter((m) => !m.emergency).map((m) => m.at),
        moment,
        'aggregate',
      ),
      budgetLeft(
        this.settings.globalBudget,
        everywhere.filter((m) => !m.emergency).map((m) => m.at),
        moment,
        'global',
      ),
    ]);
    const emergency = emergencyBudgetLeft(
      s.emergencyBudget,
      started.filter((m) => m.emergency).map((m) => m.at),
      moment,
    );

    const lastEnded = await store.lastExecutionEnded(s.name);
    const cooldownEnds = lastEnded === null ? null : lastEnded.getTime() + s.aggregateCooldownSeconds * 1000;
    const cooling = cooldownEnds !== null && now.getTime() < cooldownEnds;

    const decideOn = (candidates: AggregatePlan) =>
      decide({
        mode: s.mode,
        pausedGlobal: this.settings.paused,
        pausedAggregate: s.paused,
        health: verdict,
        window: {
          open: win.open,
          secondsLeft: win.open
            ? win.closesAt
              ? (win.closesAt.getTime() - now.getTime()) / 1000
              : Number.POSITIVE_INFINITY
            : 0,
        },
        plan: candidates,
        emergencyHosts,
        approvedSteps: approved,
        budget: { remaining: normal.remaining, binding: normal.reason },
        emergencyBudget: { remaining: emergency.remaining, binding: emergency.reason },
        startImbalance: s.startImbalance,
        ...(cooling ? { cooldownUntil: new Date(cooldownEnds).toISOString() } : {}),
        secondsOf: (m) => m.estimatedSeconds,
      });
    let decision = decideOn(candidates);
    if (reused !== null && decision.start.length > 0) {
      // A cycle that acts does the whole work: the plan is made and checked on this cycle's
      // figures, not on those (within the tolerance) of the cycle that made the last one.
      reused = null;
      plan = planSnapshot(planning, policy, LOOP_PLAN_OPTIONS);
      const fresh = plan.aggregates.find((a) => a.name === s.name);
      if (!fresh) return { ...base, verdict, summary: `aggregate ${s.name} is not in the snapshot` };
      aggPlan = fresh;
      const refused = await this.check(s, planning, plan, aggPlan, now);
      if (refused !== null) {
        this.lastPlans.delete(s.name);
        return {
          ...base,
          verdict,
          planId: refused.planId,
          summary: refused.why,
          ...figures,
          planMoves: aggPlan.moves.length,
        };
      }
      decision = decideOn(aggPlan);
    }
    for (const d of dropped) decision.waiting.push(d);
    let summary = decision.summary;

    let planId = stored?.id ?? null;
    let unchanged = false;
    if (!stored) {
      // A plan made on data the gate does not trust (stale, contradictory, metrics still showing
      // the placement before the last execution) is kept for reading, never offered for approval.
      const status: StoredPlanStatus =
        decision.start.length > 0
          ? 'executing'
          : s.mode === 'assisted' && verdict.verdict === 'ok'
            ? 'proposed'
            : 'observed';
      // A plan that starts nothing and proposes what the stored one does is not stored again.
      const same =
        decision.start.length > 0
          ? null
          : reused !== null && reused.status === (aggPlan.moves.length > 0 ? status : null)
            ? { id: reused.planId }
            : aggPlan.moves.length > 0
              ? await this.sameStored(s.name, single(plan, aggPlan), status)
              : null;
      if (same !== null) {
        planId = same.id;
        unchanged = true;
        const why = summary === OBSERVE_SUMMARY ? 'observe mode, nothing executed' : summary;
        // With no move there is no plan to name, and nothing to do says it all.
        if (same.id !== null) summary = `unchanged since plan ${same.id}, not stored again: ${why}`;
      } else if (aggPlan.moves.length > 0) {
        planId = await store.storePlan({
          aggregate: s.name,
          plan: single(plan, aggPlan),
          status,
          decision: summary,
          at: now.toISOString(),
        });
      }
      if (fingerprint !== null)
        this.lastPlans.set(s.name, {
          // The reference stays that of the plan: loads drifting by small steps still add up.
          inputs: reused !== null ? reused.inputs : fingerprint,
          plan,
          refused: null,
          planId,
          status: aggPlan.moves.length > 0 ? status : null,
          ...(reused !== null
            ? checkedWith !== undefined
              ? { checkedWith }
              : reused.checkedWith !== undefined
                ? { checkedWith: reused.checkedWith }
                : {}
            : {}),
        });
      if (decision.start.length > 0) this.lastPlans.delete(s.name);
    } else if (stored && decision.start.length > 0 && progress !== null) {
      // Closed once nothing of it is left to decide or to run: every move rejected, run, starting
      // now, or approved but no longer valid.
      const starting = new Set(decision.start.map((m) => m.step));
      const invalid = new Set(dropped.map((d) => d.step));
      const open = planned.moves.filter(
        (m) =>
          !progress!.rejected.has(m.step) &&
          !progress!.started.has(m.step) &&
          !starting.has(m.step) &&
          !(approvedAll.has(m.step) && invalid.has(m.step)),
      );
      if (open.length === 0) await store.setPlanStatus(stored.id, 'executing', now.toISOString());
    }
    if (decision.start.length > 0 && planId !== null) {
      await executor.start({
        aggregate: s.name,
        planId,
        moves: decision.start,
        emergency: decision.emergency,
        deadline: decision.emergency ? null : win.open ? win.closesAt : null,
        startedBy: decision.emergency ? EMERGENCY_STARTER : `loop:${s.mode}`,
      });
      await this.audit(
        `loop:${s.mode}`,
        'execution.start',
        planId,
        {
          aggregate: s.name,
          moves: decision.start.length,
          emergency: decision.emergency,
          emergencyHosts: emergencies.hosts,
        },
        now,
      );
    }
    return {
      aggregate: s.name,
      verdict,
      planId,
      started: decision.start.length,
      decision,
      summary,
      ...figures,
      planMoves: aggPlan.moves.length,
      ...(unchanged ? { unchanged: true } : {}),
    };
  }

  /** The checker's verdict on a fresh plan; a refused plan is stored for reading, with why. */
  private async check(
    s: AggregateLoopSettings,
    planning: Snapshot,
    plan: Plan,
    aggPlan: AggregatePlan,
    now: Date,
  ): Promise<{ why: string; planId: string } | null> {
    const check = checkPlan(planning, single(plan, aggPlan));
    if (check.ok) return null;
    const why = `the checker refused the plan: ${check.violations[0]!.code}: ${check.violations[0]!.detail}`;
    const planId = await this.deps.store.storePlan({
      aggregate: s.name,
      plan: single(plan, aggPlan),
      status: 'observed',
      decision: why,
      at: now.toISOString(),
    });
    await this.audit('loop', 'plan.refused', planId, { violations: check.violations.length }, now);
    return { why, planId };
  }

  /** The aggregate's latest stored plan when it has these moves and this status, else null. */
  private async sameStored(
    aggregate: string,
    plan: Plan,
    status: StoredPlanStatus,
  ): Promise<{ id: string } | null> {
    const latest = await this.deps.store.latestPlan(aggregate);
    if (latest === null || latest.status !== status || !sameMoves(latest.plan, plan)) return null;
    return { id: latest.id };
  }

  private audit(actor: string, action: string, target: string, detail: Record<string, unknown>, at: Date) {
    return this.deps.store.audit({ actor, action, target, detail, at: at.toISOString() });
  }
}
