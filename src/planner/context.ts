// What the phases share: the state, the policy, the one move budget and the per-aggregate
// results (moves in selection order, what stays unresolved).
import type { MovePhase } from '../model/plan.js';
import type { Policy } from '../policy/types.js';
import type { ClusterState } from './state.js';

export interface PlannedMove {
  server: number;
  from: number;
  to: number;
  phase: MovePhase;
  /** Phase affinity made for a soft group (Move.softGroup). */
  softGroup: boolean;
  reason: string;
  /** Imbalance before minus after this move (negative when the move costs balance). */
  gain: number;
  /** The other half of a declared exchange (two servers trading hosts, worth it only as a pair). */
  exchangeWith?: PlannedMove;
  /** The later move this one frees room for (pack's make-room moves). */
  makesRoomFor?: PlannedMove;
}

export class PlanContext {
  budgetLeft: number;
  readonly moves: PlannedMove[][];
  readonly unresolved: string[][];
  /** Moves scored by the spread search and improvement stage (reported as stats.evaluations). */
  readonly work = { evaluations: 0 };

  constructor(
    readonly state: ClusterState,
    readonly policy: Policy,
  ) {
    this.budgetLeft = policy.budget.maxMoves;
    this.moves = state.aggregates.map(() => []);
    this.unresolved = state.aggregates.map(() => []);
  }

  /** Applies a move to the state and records it against the budget. */
  record(server: number, to: number, phase: MovePhase, reason: string, softGroup = false): PlannedMove {
    const state = this.state;
    const from = state.at[server]!;
    const agg = state.hosts[from]!.aggregate;
    const before = state.imbalance(agg);
    state.apply(server, to);
    const move: PlannedMove = {
      server,
      from,
      to,
      phase,
      softGroup,
      reason,
      gain: before - state.imbalance(agg),
    };
    this.moves[agg]!.push(move);
    this.budgetLeft--;
    return move;
  }

  /** Takes back the last `count` recorded moves of an aggregate (a unit that could not complete). */
  unrecord(agg: number, count: number): void {
    this.state.undo(count);
    this.moves[agg]!.splice(this.moves[agg]!.length - count, count);
    this.budgetLeft += count;
  }

  note(agg: number, text: string): void {
    this.unresolved[agg]!.push(text);
  }

  /** Whether a server may be chosen for a move now. */
  movable(server: number): boolean {
    const s = this.state.servers[server]!;
    return s.immovable === null && this.state.moved[server] === 0;
  }
}
