// The journal port in memory: for dry runs, `demo` and unit tests. It keeps the port's promises
// (atomic creation, compare-and-set transitions, final states never left) but not across a
// restart; a service that acts on a real cloud uses the store's durable journal.
import {
  type ExecutionJournal,
  type ExecutionRecord,
  type ExecutionState,
  FINAL_MOVE_STATES,
  type MoveRecord,
  type MoveState,
  type MoveTransition,
  type PlannedMove,
} from './journal.js';

/**
 * Applies one transition to a move the way every journal must (the store's SQL does the same):
 * `issuedAt` is stamped when a move enters `issuing`, `endedAt` when it reaches a final state;
 * a new `attempt` forgets the previous attempt's `novaMigrationId` and `endedAt` unless the
 * transition gives them; otherwise `novaMigrationId` and `detail` change only when given.
 */
export function applyTransition(move: MoveRecord, next: MoveTransition): MoveRecord {
  const out: MoveRecord = { ...move, state: next.state };
  if (next.attempt !== undefined) {
    out.attempt = next.attempt;
    out.novaMigrationId = null;
    out.endedAt = null;
  }
  if (next.state === 'issuing') out.issuedAt = next.at;
  if (FINAL_MOVE_STATES.includes(next.state)) out.endedAt = next.at;
  if (next.novaMigrationId !== undefined) out.novaMigrationId = next.novaMigrationId;
  if (next.detail !== undefined) out.detail = next.detail;
  return out;
}

export class MemoryJournal implements ExecutionJournal {
  private readonly executions = new Map<string, ExecutionRecord>();
  private readonly moves = new Map<string, Map<number, MoveRecord>>();
  /** Every successful transition, in order: tests read it to check what happened when. */
  readonly history: { executionId: string; step: number; from: MoveState; to: MoveState; at: string }[] = [];

  async createExecution(
    execution: Omit<ExecutionRecord, 'state' | 'endedAt'>,
    moves: PlannedMove[],
  ): Promise<void> {
    if (this.executions.has(execution.id)) {
      throw new Error(`execution ${execution.id}: already exists`);
    }
    const steps = new Set<number>();
    for (const m of moves) {
      if (steps.has(m.step)) throw new Error(`execution ${execution.id}: step ${m.step} appears twice`);
      steps.add(m.step);
    }
    this.executions.set(execution.id, { ...execution, state: 'running', endedAt: null });
    this.moves.set(
      execution.id,
      new Map(
        moves.map((m) => [
          m.step,
          {
            ...m,
            ...(m.after ? { after: [...m.after] } : {}),
            executionId: execution.id,
            state: 'pending',
            attempt: 1,
            novaMigrationId: null,
            issuedAt: null,
            endedAt: null,
            detail: null,
          },
        ]),
      ),
    );
  }

  async transitionMove(
    executionId: string,
    step: number,
    expectedFrom: MoveState,
    next: MoveTransition,
  ): Promise<boolean> {
    const move = this.moves.get(executionId)?.get(step);
    if (!move) throw new Error(`execution ${executionId}: no step ${step}`);
    if (FINAL_MOVE_STATES.includes(expectedFrom)) {
      throw new Error(`execution ${executionId} step ${step}: ${expectedFrom} is final and is never left`);
    }
    if (move.state !== expectedFrom) return false;
    this.moves.get(executionId)?.set(step, applyTransition(move, next));
    this.history.push({ executionId, step, from: expectedFrom, to: next.state, at: next.at });
    return true;
  }

  async finishExecution(
    executionId: string,
    state: Exclude<ExecutionState, 'running'>,
    at: string,
  ): Promise<void> {
    const e = this.executions.get(executionId);
    if (!e) throw new Error(`execution ${executionId}: not found`);
    if (e.state !== 'running') return;
    this.executions.set(executionId, { ...e, state, endedAt: at });
  }

  async getExecution(executionId: string): Promise<ExecutionRecord | null> {
    const e = this.executions.get(executionId);
    return e ? { ...e } : null;
  }

  async listMoves(executionId: string): Promise<MoveRecord[]> {
    return [...(this.moves.get(executionId)?.values() ?? [])]
      .map((m) => ({ ...m }))
      .sort((a, b) => a.step - b.step);
  }

  async listUnfinishedExecutions(): Promise<ExecutionRecord[]> {
    return [...this.executions.values()].filter((e) => e.state === 'running').map((e) => ({ ...e }));
  }
}
