// What of an aggregate's plan may start now: the mode, the pauses, the data-health verdict, the
// maintenance window (with the time left in it), the budgets and, in assisted mode, the
// operator's approvals decide. Pure; every move left out carries the reason it waits, so the
// operator never has to guess why the balancer stood still.
import type { AggregatePlan, Move } from '../model/plan.js';
import type { HealthVerdict } from './health.js';

export const LOOP_MODES = ['observe', 'assisted', 'active'] as const;
export type LoopMode = (typeof LOOP_MODES)[number];

export interface WindowView {
  open: boolean;
  /** Seconds until the window closes (0 when closed). */
  secondsLeft: number;
}

export interface DecisionInput {
  mode: LoopMode;
  pausedGlobal: boolean;
  pausedAggregate: boolean;
  health: HealthVerdict;
  window: WindowView;
  plan: AggregatePlan;
  /** Hosts whose draining is a declared emergency (disabled with the configured reason, sustained overload). */
  emergencyHosts: ReadonlySet<string>;
  /** Assisted mode: steps an operator approved and whose approval has not expired. */
  approvedSteps: ReadonlySet<number>;
  /** Moves that may still start under the normal budgets (per cycle, window, day), and why that number. */
  budget: { remaining: number; binding: string };
  emergencyBudget: { remaining: number; binding: string };
  /**
   * A balancing plan (spread, pack and soft-group moves only) starts only when the aggregate's
   * imbalance is at or above this: the band between the planner's target and this value is the
   * hysteresis that stops the loop chasing noise. Evacuations and hard group repairs ignore it.
   */
  startImbalance: number;
  /**
   * The aggregate's cooldown after its last execution, until this time (ISO): no balancing move
   * starts whatever the imbalance, and the summary says so instead of quoting a threshold.
   */
  cooldownUntil?: string;
  /** Predicted seconds of one move (learned model or the plan's estimate). */
  secondsOf(move: Move): number;
}

export interface Waiting {
  step: number;
  why: string;
}

export interface Decision {
  /** Moves to hand to the executor now, in step order. */
  start: Move[];
  /** Whether the moves started are emergency moves (charged to the emergency budget). */
  emergency: boolean;
  waiting: Waiting[];
  /** One line for the operator. */
  summary: string;
}

// Optional moves: what the hysteresis band may hold back. Soft-group moves (phase affinity,
// softGroup) trade balance for a soft rule, so they wait with the balancing ones; only a hard
// group's repair is a repair.
const isBalancing = (m: Move) => m.phase === 'spread' || m.phase === 'pack' || m.softGroup === true;

function nothing(plan: AggregatePlan, why: string): Decision {
  return {
    start: [],
    emergency: false,
    waiting: plan.moves.map((m) => ({ step: m.step, why })),
    summary: why,
  };
}

/**
 * Keeps the moves of `candidates` whose `after` steps are all kept too (or already done before
 * this plan), in step order, up to `limit`; the rest wait with a reason.
 */
function closeOverDependencies(
  candidates: Move[],
  limit: number,
  limitWhy: string,
  waiting: Waiting[],
): Move[] {
  const kept = new Set<number>();
  const out: Move[] = [];
  for (const m of [...candidates].sort((a, b) => a.step - b.step)) {
    const missing = (m.after ?? []).filter((s) => !kept.has(s));
    if (missing.length > 0) {
      waiting.push({ step: m.step, why: `needs step ${missing.join(', ')} first, which does not start now` });
    } else if (out.length >= limit) {
      waiting.push({ step: m.step, why: limitWhy });
    } else {
      kept.add(m.step);
      out.push(m);
    }
  }
  return out;
}

/** Whole waves, in order, while their predicted time fits in what is left of the window. */
function fitWaves(
  moves: Move[],
  secondsLeft: number,
  secondsOf: (m: Move) => number,
  waiting: Waiting[],
): Move[] {
  const waves = new Map<number, Move[]>();
  for (const m of moves) {
    const w = waves.get(m.wave) ?? [];
    w.push(m);
    waves.set(m.wave, w);
  }
  let used = 0;
  const out: Move[] = [];
  let full = false;
  for (const wave of [...waves.keys()].sort((a, b) => a - b)) {
    const ms = waves.get(wave)!;
    const seconds = Math.max(...ms.map(secondsOf));
    if (full || used + seconds > secondsLeft) {
      full = true;
      for (const m of ms)
        waiting.push({
          step: m.step,
          why: `does not fit in what is left of the window (${Math.round(secondsLeft - used)} s left, wave ${wave} needs ${Math.round(seconds)} s): next window`,
        });
      continue;
    }
    used += seconds;
    out.push(...ms);
  }
  return out;
}

export function decide(input: DecisionInput): Decision {
  const { plan } = input;
  if (plan.moves.length === 0) return { start: [], emergency: false, waiting: [], summary: 'nothing to do' };
  if (input.pausedGlobal) return nothing(plan, 'paused (global)');
  if (input.pausedAggregate) return nothing(plan, 'paused (this aggregate)');
  if (input.health.verdict !== 'ok')
    return nothing(plan, `data-health gate: ${input.health.reasons[0] ?? 'blocked'}`);
  if (input.mode === 'observe') return nothing(plan, 'observe mode: plan stored, nothing executed');

  const waiting: Waiting[] = [];
  let candidates = plan.moves;
  if (input.mode === 'assisted') {
    candidates = [];
    for (const m of plan.moves) {
      if (input.approvedSteps.has(m.step)) candidates.push(m);
      else waiting.push({ step: m.step, why: 'awaiting approval' });
    }
  }

  const onlyBalancing = candidates.every(isBalancing);
  if (onlyBalancing && input.cooldownUntil !== undefined) {
    const why = `aggregate cooldown until ${input.cooldownUntil}`;
    return {
      start: [],
      emergency: false,
      waiting: [...waiting, ...candidates.map((m) => ({ step: m.step, why }))],
      summary: `${why}: no balancing now (imbalance ${plan.before.imbalance})`,
    };
  }
  if (onlyBalancing && plan.before.imbalance < input.startImbalance) {
    return {
      start: [],
      emergency: false,
      waiting: [...waiting, ...candidates.map((m) => ({ step: m.step, why: 'within the hysteresis band' }))],
      summary: `imbalance ${plan.before.imbalance} is below the start threshold ${input.startImbalance}: no balancing now`,
    };
  }

  if (!input.window.open) {
    const urgent = candidates.filter((m) => input.emergencyHosts.has(m.from));
    for (const m of candidates)
      if (!input.emergencyHosts.has(m.from))
        waiting.push({ step: m.step, why: 'outside the maintenance window' });
    const start = closeOverDependencies(
      urgent,
      input.emergencyBudget.remaining,
      `emergency budget: ${input.emergencyBudget.binding}`,
      waiting,
    );
    waiting.sort((a, b) => a.step - b.step);
    return {
      start,
      emergency: start.length > 0,
      waiting,
      summary:
        start.length > 0
          ? `outside the window: ${start.length} emergency move(s) start`
          : 'outside the maintenance window: waiting',
    };
  }

  const budgeted = closeOverDependencies(
    candidates,
    input.budget.remaining,
    `budget: ${input.budget.binding}`,
    waiting,
  );
  const start = fitWaves(budgeted, input.window.secondsLeft, input.secondsOf, waiting);
  waiting.sort((a, b) => a.step - b.step);
  return {
    start,
    emergency: false,
    waiting,
    summary:
      start.length > 0
        ? `${start.length} of ${plan.moves.length} move(s) start${waiting.length ? `, ${waiting.length} wait` : ''}`
        : `nothing starts: ${waiting[0]?.why ?? 'no move qualifies'}`,
  };
}
