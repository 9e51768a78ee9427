// The control loop's store port on top of the service store (src/store): how the loop's words
// (observed, proposed, executing plans; started moves; holds) map onto the store's records.
import type { JsonValue } from '../store/json.js';
import type { Page, PageRequest } from '../store/paging.js';
import { type LoopMode, OPEN_PLAN_STATUSES } from '../store/plans.js';
import type { Store } from '../store/store.js';
import { EMERGENCY_STARTER } from './cycle.js';
import type { HealthVerdict } from './health.js';
import type { Cooldown, ServerHold } from './holds.js';
import type {
  AbortedMove,
  LastExecution,
  LoopStore,
  PlanProgress,
  StartedMove,
  StoredPlanStatus,
  StoredPlanView,
} from './ports.js';

async function all<T>(list: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await list({ limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

export class StoreLoopAdapter implements LoopStore {
  constructor(
    private readonly store: Store,
    /** The loop's mode per aggregate, recorded with each plan. */
    private readonly modeOf: (aggregate: string) => LoopMode,
    /** How long an assisted plan stays open for approval. */
    private readonly approvalExpiryMs: (aggregate: string) => number,
  ) {}

  async recordVerdict(v: HealthVerdict): Promise<void> {
    await this.store.dataHealth.record({
      aggregate: v.aggregate,
      verdict: v.verdict,
      reasons: v.reasons,
      at: v.at,
    });
  }

  async storePlan(e: Parameters<LoopStore['storePlan']>[0]): Promise<string> {
    const mode = this.modeOf(e.aggregate);
    const assisted = e.status === 'proposed';
    const stored = await this.store.plans.create({
      aggregate: e.aggregate,
      mode,
      plan: e.plan,
      createdAt: e.at,
      expiresAt: assisted
        ? new Date(Date.parse(e.at) + this.approvalExpiryMs(e.aggregate)).toISOString()
        : null,
      status: e.status === 'executing' ? 'approved' : 'proposed',
    });
    await this.store.plans.supersedeOthers(e.aggregate, stored.id, e.at);
    if (e.status === 'executing') await this.store.plans.setStatus(stored.id, ['approved'], 'executed', e.at);
    if (e.status === 'observed') await this.store.plans.setStatus(stored.id, ['proposed'], 'observed', e.at);
    await this.store.audit.record({
      actor: `loop:${mode}`,
      action: 'plan.store',
      target: `plan:${stored.id}`,
      detail: { aggregate: e.aggregate, status: e.status, decision: e.decision, moves: stored.moveCount },
      at: e.at,
    });
    return stored.id;
  }

  async setPlanStatus(planId: string, status: StoredPlanStatus, at: string): Promise<void> {
    const to = status === 'executing' ? 'executed' : status;
    if (to === 'proposed') return;
    await this.store.plans.setStatus(planId, OPEN_PLAN_STATUSES, to, at);
  }

  async latestPlan(aggregate: string): ReturnType<LoopStore['latestPlan']> {
    const summary = (await this.store.plans.list({ aggregate }, { limit: 1 })).items[0];
    if (!summary) return null;
    const stored = await this.store.plans.get(summary.id);
    if (!stored) return null;
    const status = stored.status === 'observed' || stored.status === 'proposed' ? stored.status : 'other';
    return { id: stored.id, status, plan: stored.plan };
  }

  async pendingPlan(aggregate: string): Promise<StoredPlanView | null> {
    const page = await this.store.plans.list(
      { aggregate, statuses: [...OPEN_PLAN_STATUSES], mode: 'assisted' },
      { limit: 1 },
    );
    const summary = page.items[0];
    if (!summary) return null;
    const stored = await this.store.plans.get(summary.id);
    if (!stored) return null;
    return {
      id: stored.id,
      aggregate,
      createdAt: stored.createdAt,
      expiresAt: stored.expiresAt,
      status: 'proposed',
      plan: stored.plan,
    };
  }

  async approvedSteps(planId: string): Promise<Set<number>> {
    const decisions = await this.store.plans.decisions(planId);
    return new Set(decisions.filter((d) => d.decision === 'approved').map((d) => d.step));
  }

  async planProgress(planId: string): Promise<PlanProgress> {
    const decisions = await this.store.plans.decisions(planId);
    const executions = await all((p) => this.store.executions.list({ planId }, p));
    const started = new Set<number>();
    const completed = new Set<number>();
    for (const e of executions)
      for (const m of await this.store.listMoves(e.id)) {
        started.add(m.step);
        if (m.state === 'completed') completed.add(m.step);
      }
    return {
      rejected: new Set(decisions.filter((d) => d.decision === 'rejected').map((d) => d.step)),
      started,
      completed,
    };
  }

  async cooldowns(since: Date): Promise<Cooldown[]> {
    const rows = await all((p) => this.store.cooldowns.listServers({ movedSince: since.toISOString() }, p));
    return rows.map((r) => ({ serverId: r.serverId, movedAt: r.lastMovedAt, from: r.from, to: r.to }));
  }

  async quarantined(): Promise<ServerHold[]> {
    const rows = await all((p) => this.store.quarantine.list({ state: 'active' }, p));
    return rows.map((q) => ({
      serverId: q.serverId,
      // A server quarantined for an abort (cooldowns.onAbort) may never have been tried.
      why:
        q.attempts > 0
          ? `quarantined since ${q.since} after ${q.attempts} failed attempt(s): ${q.reason}`
          : `quarantined since ${q.since}: ${q.reason}`,
    }));
  }

  private async started(aggregate: string | undefined, since: Date): Promise<StartedMove[]> {
    // An execution started before `since` may still have started moves after it: look back a
    // day further, then keep the moves by their own issue time.
    const from = new Date(since.getTime() - 86_400_000).toISOString();
    const executions = await all((p) =>
      this.store.executions.list({ ...(aggregate !== undefined ? { aggregate } : {}), startedFrom: from }, p),
    );
    const out: StartedMove[] = [];
    for (const e of executions) {
      const emergency = e.startedBy === EMERGENCY_STARTER;
      for (const m of await this.store.listMoves(e.id)) {
        if (m.issuedAt === null) continue;
        const at = new Date(m.issuedAt);
        if (at.getTime() >= since.getTime()) out.push({ at, emergency });
      }
    }
    return out;
  }

  startedMoves(aggregate: string, since: Date): Promise<StartedMove[]> {
    return this.started(aggregate, since);
  }

  startedMovesEverywhere(since: Date): Promise<StartedMove[]> {
    return this.started(undefined, since);
  }

  async lastExecutionEnded(aggregate: string): Promise<Date | null> {
    const page = await this.store.executions.list({ aggregate }, { limit: 20 });
    let last: number | null = null;
    for (const e of page.items) {
      if (e.endedAt === null) continue;
      const t = Date.parse(e.endedAt);
      if (last === null || t > last) last = t;
    }
    return last === null ? null : new Date(last);
  }

  async lastExecution(aggregate: string): Promise<LastExecution | null> {
    const page = await this.store.executions.list({ aggregate }, { limit: 20 });
    let last: (typeof page.items)[number] | null = null;
    for (const e of page.items) {
      if (e.endedAt === null || e.state === 'running') continue;
      if (last === null || Date.parse(e.endedAt) > Date.parse(last.endedAt!)) last = e;
    }
    if (last === null || last.state === 'running') return null;
    const moves = (await this.store.listMoves(last.id))
      .filter((m) => m.issuedAt !== null)
      .map((m) => ({ serverId: m.serverId, from: m.from, to: m.to, state: m.state, endedAt: m.endedAt }));
    return { id: last.id, planId: last.planId, state: last.state, endedAt: new Date(last.endedAt!), moves };
  }

  async abortedMoves(since: Date): Promise<AbortedMove[]> {
    // An execution started a day before `since` may have ended after it.
    const from = new Date(since.getTime() - 86_400_000).toISOString();
    const executions = await all((p) =>
      this.store.executions.list({ state: 'aborted', startedFrom: from }, p),
    );
    const out: AbortedMove[] = [];
    for (const e of executions) {
      if (e.endedAt === null || Date.parse(e.endedAt) < since.getTime()) continue;
      for (const m of await this.store.listMoves(e.id))
        if (m.state !== 'completed')
          out.push({ serverId: m.serverId, executionId: e.id, from: m.from, to: m.to, abortedAt: e.endedAt });
    }
    return out;
  }

  async audit(e: Parameters<LoopStore['audit']>[0]): Promise<void> {
    await this.store.audit.record({
      actor: e.actor,
      action: e.action,
      target: e.target,
      detail: JSON.parse(JSON.stringify(e.detail)) as JsonValue,
      at: e.at,
    });
  }
}
