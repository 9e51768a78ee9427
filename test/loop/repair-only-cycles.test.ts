// The control loop with an aggregate in mode repair-only: cycle after cycle, a cluster that keeps
// every rule gets an empty plan and nothing starts; when a host is disabled, one cycle drains it
// and the cycles after it are empty again.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWindow } from '../../src/config/windows.js';
import { ControlLoop } from '../../src/loop/cycle.js';
import { DEFAULT_HEALTH_THRESHOLDS } from '../../src/loop/health.js';
import type {
  CloudReader,
  ExecutionRequest,
  ExecutorPort,
  LoopStore,
  StartedMove,
  StoredPlanStatus,
  StoredPlanView,
} from '../../src/loop/ports.js';
import type { LoopSettings } from '../../src/loop/settings.js';
import type { Plan } from '../../src/model/plan.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { compilePolicy } from '../../src/policy/load.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { applyMove, applyPlan, rulesHold } from '../fixtures/repair-rules.js';

// The loop's store port kept in arrays: what the loop records, nothing more.
class ArrayStore implements LoopStore {
  plans: (StoredPlanView & { decision: string })[] = [];
  moves: { serverId: string; movedAt: string; from: string; to: string }[] = [];
  async recordVerdict() {}
  async storePlan(e: {
    aggregate: string;
    plan: Plan;
    status: StoredPlanStatus;
    decision: string;
    at: string;
  }) {
    const id = `p${this.plans.length + 1}`;
    this.plans.push({ id, createdAt: e.at, expiresAt: null, ...e });
    return id;
  }
  async setPlanStatus(id: string, status: StoredPlanStatus) {
    this.plans.find((p) => p.id === id)!.status = status;
  }
  async latestPlan(aggregate: string) {
    const p = this.plans.filter((x) => x.aggregate === aggregate).at(-1);
    if (p === undefined) return null;
    const status = p.status === 'observed' || p.status === 'proposed' ? p.status : ('other' as const);
    return { id: p.id, status, plan: p.plan };
  }
  async pendingPlan() {
    return null;
  }
  async approvedSteps() {
    return new Set<number>();
  }
  async planProgress() {
    return { rejected: new Set<number>(), started: new Set<number>(), completed: new Set<number>() };
  }
  async cooldowns(since: Date) {
    return this.moves.filter((m) => Date.parse(m.movedAt) >= since.getTime());
  }
  async quarantined() {
    return [];
  }
  async startedMoves(_aggregate: string, since: Date): Promise<StartedMove[]> {
    return this.startedMovesEverywhere(since);
  }
  async startedMovesEverywhere(since: Date): Promise<StartedMove[]> {
    return this.moves
      .filter((m) => Date.parse(m.movedAt) >= since.getTime())
      .map((m) => ({ at: new Date(m.movedAt), emergency: false }));
  }
  async lastExecution() {
    return null;
  }
  async abortedMoves() {
    return [];
  }
  async lastExecutionEnded() {
    return null;
  }
  async audit() {}
}

const clock = { now: 0 };

// Completes every request at once, moving the servers in the snapshot the reader serves.
class InstantExecutor implements ExecutorPort {
  constructor(
    private readonly store: ArrayStore,
    private readonly cloud: { snap: Snapshot },
  ) {}
  isRunning() {
    return false;
  }
  inFlight() {
    return { servers: new Set<string>(), hosts: new Set<string>() };
  }
  async start(r: ExecutionRequest) {
    for (const m of r.moves) {
      applyMove(this.cloud.snap, m);
      this.store.moves.push({
        serverId: m.server,
        movedAt: new Date(clock.now).toISOString(),
        from: m.from,
        to: m.to,
      });
    }
  }
}

function loopOver(cloud: { snap: Snapshot }, aggregates: string[]) {
  const window = parseWindow('Mon 00:00 - Sun 23:59 UTC');
  if (!window.ok) throw new Error(window.error);
  const settings: LoopSettings = {
    paused: false,
    globalBudget: {},
    aggregates: aggregates.map((name) => ({
      name,
      mode: 'active',
      paused: false,
      windows: [window.window],
      budget: { perCycle: 1000, perDay: 10000 },
      emergencyBudget: { perDay: 10 },
      emergencies: { evacuateReasonPrefix: '', sustainSeconds: 600 },
      // As the service configuration's per-aggregate inline policy compiles it.
      policy: compilePolicy({ mode: 'repair-only', budget: { maxMoves: 1000 } }),
      startImbalance: 0,
      serverCooldownSeconds: 0,
      aggregateCooldownSeconds: 0,
      abortHoldSeconds: 0,
      approvalExpirySeconds: 3600,
      health: DEFAULT_HEALTH_THRESHOLDS,
    })),
  };
  const store = new ArrayStore();
  const reader: CloudReader = {
    read: async () => ({
      snapshot: { ...structuredClone(cloud.snap), takenAt: new Date(clock.now).toISOString() },
      problems: { hostsLeftOut: [], hostsWithoutLoad: [], serversWithoutLoad: [], partialReads: [] },
      migrations: [],
    }),
  };
  const loop = new ControlLoop(
    { reader, store, executor: new InstantExecutor(store, cloud), now: () => new Date(clock.now) },
    settings,
  );
  return { loop, store };
}

/** A synthetic cluster with its rule breaks repaired (a repair-only plan applied), so every rule holds. */
function repaired(seed: number): Snapshot {
  const snap = synthesizeSnapshot({ hosts: 16, servers: 300, groups: 12, seed, aggregates: 2 });
  const policy = compilePolicy({ mode: 'repair-only', budget: { maxMoves: 1000 } });
  return applyPlan(snap, planSnapshot(snap, policy));
}

describe('control loop, mode repair-only', () => {
  it('a cluster that keeps every rule gets an empty plan in every cycle', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 3, max: 6 }),
        async (seed, cycles) => {
          const cloud = { snap: repaired(seed) };
          fc.pre(rulesHold(cloud.snap));
          clock.now = Date.parse('2026-12-02T10:00:00Z');
          const { loop, store } = loopOver(cloud, ['agg-1', 'agg-2']);
          for (let c = 0; c < cycles; c++) {
            // Load changes between cycles; rules do not, so no plan may move anything.
            for (const h of cloud.snap.hosts)
              if (h.load?.cpu !== undefined) h.load.cpu *= 1 + ((c + h.name.length) % 3) / 10;
            const report = await loop.runCycle();
            // The loop stores no plan that has no move: each aggregate's plan was empty.
            expect(report.aggregates.map((a) => [a.aggregate, a.summary, a.started])).toEqual([
              ['agg-1', 'nothing to do', 0],
              ['agg-2', 'nothing to do', 0],
            ]);
            clock.now += 300_000;
          }
          for (const p of store.plans) expect(p.plan.aggregates.flatMap((a) => a.moves)).toEqual([]);
          expect(store.moves).toEqual([]);
        },
      ),
      { numRuns: 12, seed: 4 },
    );
  });

  it('drains a host disabled between cycles in one cycle, then plans nothing again', async () => {
    const cloud = { snap: repaired(7) };
    expect(rulesHold(cloud.snap)).toBe(true);
    clock.now = Date.parse('2026-12-02T10:00:00Z');
    const { loop, store } = loopOver(cloud, ['agg-1', 'agg-2']);
    await loop.runCycle();
    const target = cloud.snap.hosts.find(
      (h) => h.aggregates.includes('agg-1') && cloud.snap.servers.some((s) => s.host === h.name),
    )!;
    target.service = { ...target.service, status: 'disabled', disabledReason: 'patching' };
    clock.now += 300_000;
    const drain = await loop.runCycle();
    const movedOff = store.moves.filter((m) => m.from === target.name).length;
    expect(drain.aggregates.find((a) => a.aggregate === 'agg-1')!.started).toBe(movedOff);
    expect(movedOff).toBeGreaterThan(0);
    // Only the disabled host's servers moved; what stays there cannot move (local storage...).
    expect(store.moves.every((m) => m.from === target.name)).toBe(true);
    const before = store.moves.length;
    for (let c = 0; c < 3; c++) {
      clock.now += 300_000;
      await loop.runCycle();
    }
    expect(store.moves.length).toBe(before);
  });
});
