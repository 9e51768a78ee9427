// Before each wave after the first, the wave's moves are judged again on a fresh reading
// (issue 24). The earlier waves changed the aggregate, and time has passed since the plan was
// made. A balancing move that no longer lowers the measured imbalance is dropped with the
// figures, and so is a move that needed it. This is the same rule the loop applies before an
// approved plan starts (src/loop/gain.ts).
import type { WaveGainCheck } from '../executor/ports.js';
import { recheckGain } from '../loop/gain.js';
import type { Move, Plan } from '../model/plan.js';
import type { Snapshot } from '../model/snapshot.js';
import type { DimensionDef } from '../policy/types.js';

export interface WaveCheckDeps {
  /** The stored plan an execution runs, or null when it is gone (purged). */
  plan(planId: string): Promise<Plan | null>;
  /** A fresh reading of the cloud; it throws when the cloud cannot be read. */
  read(): Promise<Snapshot>;
  dimensions(aggregate: string): readonly DimensionDef[];
}

export function waveGainCheck(deps: WaveCheckDeps): WaveGainCheck {
  return async ({ execution, moves }) => {
    // An operator task's moves (planId null) empty or repair hosts: they are not made for balance.
    if (execution.planId === null) return [];
    const plan = await deps.plan(execution.planId);
    if (plan === null) return [];
    const byStep = new Map<number, Move>();
    for (const a of plan.aggregates)
      if (a.name === execution.aggregate) for (const m of a.moves) byStep.set(m.step, m);
    const planned = moves
      .map((r) => byStep.get(r.step))
      .filter(
        (m): m is Move => m !== undefined && moves.some((r) => r.step === m.step && r.serverId === m.server),
      );
    if (planned.length === 0) return [];
    const snapshot = await deps.read();
    return recheckGain(snapshot, execution.aggregate, planned, deps.dimensions(execution.aggregate)).dropped;
  };
}
