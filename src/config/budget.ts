// The budget ledger: how many more moves may start now, given those already started and the
// configured limits, and which limit binds (the reason operators see). Pure: the clock and the
// history are passed in. Emergency moves keep a ledger of their own (see emergencyBudgetLeft).

export const BUDGET_SCOPES = ['cycle', 'window', 'day'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

/** Whose limits these are, for the reason shown to operators. */
export type BudgetOwner = 'aggregate' | 'global' | 'emergency';

/** Maximum moves started per scope; an absent limit does not constrain. */
export interface BudgetLimits {
  perCycle?: number | null | undefined;
  perWindow?: number | null | undefined;
  perDay?: number | null | undefined;
}

export interface LedgerMoment {
  now: Date;
  /** When the current control-loop cycle began: moves started at or after it count for the cycle. */
  cycleStartedAt: Date;
  /**
   * When the current maintenance-window stretch opened (WindowState.since). Null or absent
   * outside a window, or when the windows never close: then the per-window limit does not apply.
   */
  windowOpenedAt?: Date | null | undefined;
}

export interface BudgetUse {
  scope: BudgetScope;
  limit: number;
  used: number;
  left: number;
}

export interface BudgetVerdict {
  owner: BudgetOwner;
  /** Moves that may start now (Infinity when no limit applies). */
  remaining: number;
  /** The limit that leaves the fewest moves; null when none applies. */
  binding: BudgetUse | null;
  /** Every limit that applies, with its use. */
  uses: BudgetUse[];
  /** One line for operators: "aggregate day budget: 100 of 100 moves started in the last 24 h, 0 left". */
  reason: string;
}

const DAY_MS = 86_400_000;

// On a tie the longest-lived limit binds: it tells the operator that waiting for the next
// cycle will not help.
const LIFETIME: Record<BudgetScope, number> = { cycle: 0, window: 1, day: 2 };

const SINCE: Record<BudgetScope, string> = {
  cycle: 'this cycle',
  window: 'since the window opened',
  day: 'in the last 24 h',
};

/**
 * Moves that may start now under `limits`. `startedAt` lists when each move already counted
 * against these limits started (any order; future timestamps are ignored). The day is the
 * rolling 24 hours before `now`, so no burst is allowed at midnight.
 */
export function budgetLeft(
  limits: BudgetLimits,
  startedAt: readonly Date[],
  moment: LedgerMoment,
  owner: BudgetOwner = 'aggregate',
): BudgetVerdict {
  const now = moment.now.getTime();
  const times = startedAt.map((d) => d.getTime()).filter((t) => t <= now);
  const countSince = (from: number) => times.filter((t) => t >= from).length;
  const uses: BudgetUse[] = [];
  const add = (scope: BudgetScope, limit: number | null | undefined, from: number) => {
    if (limit === null || limit === undefined) return;
    const used = countSince(from);
    uses.push({ scope, limit, used, left: Math.max(0, limit - used) });
  };
  add('cycle', limits.perCycle, moment.cycleStartedAt.getTime());
  if (moment.windowOpenedAt) add('window', limits.perWindow, moment.windowOpenedAt.getTime());
  add('day', limits.perDay, now - DAY_MS);
  let binding: BudgetUse | null = null;
  for (const u of uses) {
    if (
      !binding ||
      u.left < binding.left ||
      (u.left === binding.left && LIFETIME[u.scope] > LIFETIME[binding.scope])
    )
      binding = u;
  }
  return {
    owner,
    remaining: binding ? binding.left : Number.POSITIVE_INFINITY,
    binding,
    uses,
    reason: binding
      ? `${owner} ${binding.scope} budget: ${binding.used} of ${binding.limit} moves started ${SINCE[binding.scope]}, ${binding.left} left`
      : `no ${owner} budget limits these moves`,
  };
}

/** Emergency moves count only against the emergency budget, and normal moves never use it. */
export function emergencyBudgetLeft(
  limits: Pick<BudgetLimits, 'perCycle' | 'perDay'>,
  emergencyStartedAt: readonly Date[],
  moment: Omit<LedgerMoment, 'windowOpenedAt'>,
): BudgetVerdict {
  return budgetLeft(
    limits,
    emergencyStartedAt,
    { now: moment.now, cycleStartedAt: moment.cycleStartedAt },
    'emergency',
  );
}

/** The verdict that leaves the fewest moves (the aggregate's and the global one, say). */
export function tightestBudget(verdicts: readonly BudgetVerdict[]): BudgetVerdict {
  let best: BudgetVerdict | undefined;
  for (const v of verdicts) if (!best || v.remaining < best.remaining) best = v;
  if (!best)
    return {
      owner: 'global',
      remaining: Number.POSITIVE_INFINITY,
      binding: null,
      uses: [],
      reason: 'no budget limits these moves',
    };
  return best;
}
