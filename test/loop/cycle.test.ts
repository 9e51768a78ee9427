import { describe, expect, it, vi } from 'vitest';
import { parseWindow, type WeeklyWindow } from '../../src/config/windows.js';
import { ControlLoop } from '../../src/loop/cycle.js';
import { DEFAULT_HEALTH_THRESHOLDS, type ReadProblems } from '../../src/loop/health.js';
import type { Cooldown, ServerHold } from '../../src/loop/holds.js';
import type {
  AbortedMove,
  CloudReader,
  ExecutionRequest,
  ExecutorPort,
  LastExecution,
  LoopStore,
  StartedMove,
  StoredPlanStatus,
  StoredPlanView,
} from '../../src/loop/ports.js';
import type { AggregateLoopSettings, LoopSettings } from '../../src/loop/settings.js';
import type { Plan } from '../../src/model/plan.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { cluster, host, server } from '../fixtures/cluster.js';

// A store that keeps everything in arrays: the loop's contract with the store, nothing more.
class ArrayStore implements LoopStore {
  verdicts: { verdict: string; reasons: string[] }[] = [];
  plans: (StoredPlanView & { decision: string })[] = [];
  approvals = new Map<string, Set<number>>();
  rejections = new Map<string, Set<number>>();
  /** Steps handed to the executor, per plan (the instant executor completes every one). */
  ran = new Map<string, Set<number>>();
  moves: (Cooldown & { aggregate: string; emergency: boolean })[] = [];
  quarantine: ServerHold[] = [];
  ended = new Map<string, Date>();
  audits: { action: string; target: string }[] = [];
  async recordVerdict(v: { verdict: string; reasons: string[] }) {
    this.verdicts.push(v);
  }
  async storePlan(e: {
    aggregate: string;
    plan: Plan;
    status: StoredPlanStatus;
    decision: string;
    at: string;
  }) {
    const id = `p${this.plans.length + 1}`;
    this.plans.push({
      id,
      aggregate: e.aggregate,
      createdAt: e.at,
      expiresAt: null,
      status: e.status,
      plan: e.plan,
      decision: e.decision,
    });
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
  async pendingPlan(aggregate: string) {
    return this.plans.filter((p) => p.aggregate === aggregate && p.status === 'proposed').at(-1) ?? null;
  }
  async approvedSteps(id: string) {
    return this.approvals.get(id) ?? new Set<number>();
  }
  async planProgress(id: string) {
    const ran = this.ran.get(id) ?? new Set<number>();
    return { rejected: this.rejections.get(id) ?? new Set<number>(), started: ran, completed: ran };
  }
  async cooldowns(since: Date) {
    return this.moves.filter((m) => Date.parse(m.movedAt) >= since.getTime());
  }
  async quarantined() {
    return this.quarantine;
  }
  async startedMoves(aggregate: string, since: Date): Promise<StartedMove[]> {
    return this.moves
      .filter((m) => m.aggregate === aggregate && Date.parse(m.movedAt) >= since.getTime())
      .map((m) => ({ at: new Date(m.movedAt), emergency: m.emergency }));
  }
  async startedMovesEverywhere(since: Date): Promise<StartedMove[]> {
    return this.moves
      .filter((m) => Date.parse(m.movedAt) >= since.getTime())
      .map((m) => ({ at: new Date(m.movedAt), emergency: m.emergency }));
  }
  async lastExecutionEnded(aggregate: string) {
    return this.ended.get(aggregate) ?? null;
  }
  lastExecutions = new Map<string, LastExecution>();
  async lastExecution(aggregate: string) {
    return this.lastExecutions.get(aggregate) ?? null;
  }
  aborted: AbortedMove[] = [];
  async abortedMoves(since: Date) {
    return this.aborted.filter((a) => Date.parse(a.abortedAt) >= since.getTime());
  }
  async audit(e: { action: string; target: string }) {
    this.audits.push({ action: e.action, target: e.target });
  }
}

// An executor that "completes" each request at once by recording the moves it was given.
class InstantExecutor implements ExecutorPort {
  requests: ExecutionRequest[] = [];
  running = new Set<string>();
  constructor(
    private readonly store: ArrayStore,
    private readonly snap: () => Snapshot,
  ) {}
  isRunning(aggregate: string) {
    return this.running.has(aggregate);
  }
  inFlight() {
    return { servers: new Set<string>(), hosts: new Set<string>() };
  }
  async start(r: ExecutionRequest) {
    this.requests.push(r);
    const ran = this.store.ran.get(r.planId) ?? new Set<number>();
    for (const m of r.moves) ran.add(m.step);
    this.store.ran.set(r.planId, ran);
    const snap = this.snap();
    for (const m of r.moves) {
      const s = snap.servers.find((x) => x.id === m.server)!;
      const from = snap.hosts.find((h) => h.name === m.from)!;
      const to = snap.hosts.find((h) => h.name === m.to)!;
      s.host = m.to;
      from.usage.VCPU! -= s.flavor.vcpus;
      from.usage.MEMORY_MB! -= s.flavor.ramMB;
      to.usage.VCPU! += s.flavor.vcpus;
      to.usage.MEMORY_MB! += s.flavor.ramMB;
      this.store.moves.push({
        serverId: m.server,
        movedAt: r.moves.length ? new Date(clock.now).toISOString() : '',
        from: m.from,
        to: m.to,
        aggregate: r.aggregate,
        emergency: r.emergency,
      });
    }
  }
}

// Counts the loop's calls of the planner (passed through): whether a cycle planned or kept a plan
// is otherwise seen only when the new plan differs.
const planner = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../src/planner/index.js', async (load) => {
  const real = await load<typeof import('../../src/planner/index.js')>();
  return {
    ...real,
    planSnapshot: (...args: Parameters<typeof real.planSnapshot>) => {
      planner.calls++;
      return real.planSnapshot(...args);
    },
  };
});

// The checker's calls, counted the same way: a kept plan is checked again only when a change is
// on one of its moves' hosts.
const checker = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../src/checker/index.js', async (load) => {
  const real = await load<typeof import('../../src/checker/index.js')>();
  return {
    ...real,
    checkPlan: (...args: Parameters<typeof real.checkPlan>) => {
      checker.calls++;
      return real.checkPlan(...args);
    },
  };
});

const clock = { now: Date.parse('2026-11-28T23:00:00Z') }; // a Saturday, 00:00 in Paris
const win = (text: string): WeeklyWindow => {
  const p = parseWindow(text);
  if (!p.ok) throw new Error(p.error);
  return p.window;
};

function world() {
  const hosts = ['a', 'b', 'c', 'd'].map((n) => host(n, { aggregates: ['gold'], vcpus: 16 }));
  const servers = [
    ...[1, 2, 3, 4, 5, 6].map((i) => server(`s${i}`, 'a', { cpu: 2 })),
    server('s7', 'b', { cpu: 1 }),
    server('s8', 'c', { cpu: 1 }),
  ];
  const snap = cluster(hosts, servers);
  for (const h of snap.hosts) {
    const on = snap.servers.filter((s) => s.host === h.name);
    h.load = {
      cpu: on.reduce((a, s) => a + (s.load?.cpu ?? 0), 0),
      memoryMB: on.reduce((a, s) => a + (s.load?.memoryMB ?? 0), 0),
    };
  }
  return snap;
}

function settings(over: Partial<AggregateLoopSettings> = {}): LoopSettings {
  return {
    paused: false,
    globalBudget: {},
    aggregates: [
      {
        name: 'gold',
        mode: 'active',
        paused: false,
        windows: [win('Fri 22:00 - Sun 06:00 Europe/Paris')],
        budget: { perCycle: 50, perDay: 200 },
        emergencyBudget: { perDay: 10 },
        emergencies: { evacuateReasonPrefix: 'EVAC', sustainSeconds: 600 },
        policy: DEFAULT_POLICY,
        startImbalance: 0,
        serverCooldownSeconds: 3600,
        aggregateCooldownSeconds: 0,
        abortHoldSeconds: 86_400,
        approvalExpirySeconds: 3600,
        health: DEFAULT_HEALTH_THRESHOLDS,
        ...over,
      },
    ],
  };
}

const noProblems: ReadProblems = {
  hostsLeftOut: [],
  hostsWithoutLoad: [],
  serversWithoutLoad: [],
  partialReads: [],
};

function setup(over: Partial<AggregateLoopSettings> = {}) {
  clock.now = Date.parse('2026-11-28T23:00:00Z');
  let snap = world();
  const store = new ArrayStore();
  const executor = new InstantExecutor(store, () => snap);
  const reader: CloudReader = {
    read: async () => {
      snap = { ...snap, takenAt: new Date(clock.now).toISOString() };
      return { snapshot: structuredClone(snap), problems: noProblems, migrations: [] };
    },
  };
  const loop = new ControlLoop({ reader, store, executor, now: () => new Date(clock.now) }, settings(over));
  return { loop, store, executor, reader, snap: () => snap, setSnap: (s: Snapshot) => (snap = s) };
}

describe('control loop cycle', () => {
  it('observe: stores the plan with its reason, starts nothing', async () => {
    const { loop, store, executor } = setup({ mode: 'observe' });
    const r = await loop.runCycle();
    expect(r.aggregates[0]!.summary).toBe('observe mode: plan stored, nothing executed');
    expect(store.plans).toHaveLength(1);
    expect(store.plans[0]!.status).toBe('observed');
    expect(store.plans[0]!.plan.aggregates[0]!.moves.length).toBeGreaterThan(0);
    expect(executor.requests).toEqual([]);
    expect(store.verdicts).toEqual([expect.objectContaining({ verdict: 'ok' })]);
  });

  it('active inside the window: starts the plan with the window end as deadline', async () => {
    const { loop, store, executor } = setup();
    const r = await loop.runCycle();
    expect(r.aggregates[0]!.started).toBeGreaterThan(0);
    expect(executor.requests).toHaveLength(1);
    expect(executor.requests[0]!.deadline?.toISOString()).toBe('2026-11-29T05:00:00.000Z');
    expect(store.plans[0]!.status).toBe('executing');
    expect(store.audits.map((a) => a.action)).toEqual(['execution.start']);
  });

  it('active outside the window: waits, but evacuates an emergency host with no deadline', async () => {
    const { loop, executor, snap } = setup();
    clock.now = Date.parse('2026-11-30T12:00:00Z'); // Monday noon
    let r = await loop.runCycle();
    expect(r.aggregates[0]!.summary).toBe('outside the maintenance window: waiting');
    expect(executor.requests).toEqual([]);
    const a = snap().hosts.find((h) => h.name === 'a')!;
    a.service = { ...a.service, status: 'disabled', disabledReason: 'EVAC: DIMM errors' };
    r = await loop.runCycle();
    expect(executor.requests).toHaveLength(1);
    expect(executor.requests[0]!.emergency).toBe(true);
    expect(executor.requests[0]!.deadline).toBeNull();
    expect(executor.requests[0]!.moves.every((m) => m.from === 'a' && m.phase === 'evacuate')).toBe(true);
  });

  it('moved servers are held through their cooldown: no server moves twice in an hour', async () => {
    const { loop, executor } = setup({ startImbalance: 0 });
    await loop.runCycle();
    clock.now += 600_000;
    await loop.runCycle();
    clock.now += 600_000;
    await loop.runCycle();
    const moved = executor.requests.flatMap((r) => r.moves.map((m) => m.server));
    expect(moved.length).toBeGreaterThan(0);
    expect(new Set(moved).size).toBe(moved.length);
  });

  it('assisted: proposes, then runs only approved moves, re-validated on the fresh snapshot', async () => {
    const { loop, store, executor, snap } = setup({ mode: 'assisted' });
    let r = await loop.runCycle();
    expect(r.aggregates[0]!.summary).toMatch(/nothing starts: awaiting approval/);
    expect(store.plans[0]!.status).toBe('proposed');
    const moves = store.plans[0]!.plan.aggregates[0]!.moves;
    expect(moves.length).toBeGreaterThanOrEqual(2);
    // Approve two moves; meanwhile somebody moves the first one's server by hand.
    store.approvals.set('p1', new Set([moves[0]!.step, moves[1]!.step]));
    const first = snap().servers.find((s) => s.id === moves[0]!.server)!;
    first.host = 'd';
    const ha = snap().hosts.find((h) => h.name === moves[0]!.from)!;
    const hd = snap().hosts.find((h) => h.name === 'd')!;
    ha.usage.VCPU! -= first.flavor.vcpus;
    ha.usage.MEMORY_MB! -= first.flavor.ramMB;
    hd.usage.VCPU! += first.flavor.vcpus;
    hd.usage.MEMORY_MB! += first.flavor.ramMB;
    r = await loop.runCycle();
    expect(executor.requests).toHaveLength(1);
    expect(executor.requests[0]!.moves.map((m) => m.step)).toEqual([moves[1]!.step]);
    const dropped = r.aggregates[0]!.decision!.waiting.find((w) => w.step === moves[0]!.step)!;
    expect(dropped.why).toMatch(/no longer valid: server-not-on-source/);
  });

  it('assisted: a plan approved in part runs that part and stays open for the rest', async () => {
    const { loop, store, executor } = setup({ mode: 'assisted' });
    await loop.runCycle();
    const moves = store.plans[0]!.plan.aggregates[0]!.moves;
    expect(moves.length).toBeGreaterThanOrEqual(3);
    const [first, second, ...rest] = moves.map((m) => m.step);
    store.approvals.set('p1', new Set([first!]));
    let r = await loop.runCycle();
    expect(executor.requests.map((x) => x.moves.map((m) => m.step))).toEqual([[first]]);
    expect(r.aggregates[0]!.summary).toMatch(/1 of \d+ move\(s\) start/);
    // Still open: no new plan, the ran move not offered again, the rest awaiting approval.
    expect(store.plans.map((p) => p.status)).toEqual(['proposed']);
    clock.now += 60_000;
    r = await loop.runCycle();
    expect(executor.requests).toHaveLength(1);
    expect(store.plans).toHaveLength(1);
    expect(r.aggregates[0]!.summary).toMatch(/awaiting approval/);
    expect(r.aggregates[0]!.decision!.waiting.map((w) => w.step)).not.toContain(first);
    // The operator approves one more and rejects the others: that one runs and the plan closes.
    store.approvals.set('p1', new Set([first!, second!]));
    store.rejections.set('p1', new Set(rest));
    clock.now += 60_000;
    await loop.runCycle();
    expect(executor.requests.map((x) => x.moves.map((m) => m.step))).toEqual([[first], [second]]);
    expect(store.plans[0]!.status).toBe('executing');
  });

  it('assisted: a plan whose unrun moves were all rejected is closed and a new one proposed', async () => {
    const { loop, store, executor } = setup({ mode: 'assisted' });
    await loop.runCycle();
    const steps = store.plans[0]!.plan.aggregates[0]!.moves.map((m) => m.step);
    store.approvals.set('p1', new Set([steps[0]!]));
    await loop.runCycle();
    store.rejections.set('p1', new Set(steps.slice(1)));
    clock.now += 60_000;
    await loop.runCycle();
    expect(executor.requests).toHaveLength(1);
    expect(store.plans.map((p) => p.status)).toEqual(['executing', 'proposed']);
  });

  it('assisted: an approval not given in time expires and a new plan is proposed', async () => {
    const { loop, store } = setup({ mode: 'assisted', approvalExpirySeconds: 600 });
    await loop.runCycle();
    clock.now += 601_000;
    await loop.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['expired', 'proposed']);
    expect(store.audits.map((a) => a.action)).toContain('plan.expire');
  });

  it('an aborted execution holds its servers: the next plans leave them where they are, and say why', async () => {
    const { loop, store, executor } = setup({ mode: 'observe' });
    const first = await loop.runCycle();
    const planned = store.plans[0]!.plan.aggregates[0]!.moves;
    expect(planned.length).toBeGreaterThan(0);
    // An operator aborted an execution of those very moves a minute ago.
    store.aborted = planned.map((m) => ({
      serverId: m.server,
      executionId: 'e1',
      from: m.from,
      to: m.to,
      abortedAt: new Date(clock.now - 60_000).toISOString(),
    }));
    expect(first.aggregates[0]!.held ?? []).toEqual([]);
    loop.updateSettings(settings({ mode: 'active' }));
    const r = await loop.runCycle();
    const again = executor.requests.flatMap((x) => x.moves.map((m) => m.server));
    for (const m of planned) expect(again).not.toContain(m.server);
    expect(r.aggregates[0]!.held!.map((h) => h.serverId).sort()).toEqual(planned.map((m) => m.server).sort());
    expect(r.aggregates[0]!.held![0]!.why).toMatch(
      /was in execution e1, aborted at .* \(cooldowns\.afterAbort\)/,
    );
    // Once the hold has passed, they may move again.
    clock.now += 86_400_000;
    executor.requests = [];
    const later = await loop.runCycle();
    expect(later.aggregates[0]!.held ?? []).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ why: expect.stringMatching(/execution e1/) })]),
    );
  });

  it('assisted: a plan made before another execution ended is replaced, not offered', async () => {
    const { loop, store } = setup({ mode: 'assisted' });
    await loop.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['proposed']);
    clock.now += 60_000;
    store.lastExecutions.set('gold', {
      id: 'e9',
      planId: 'elsewhere',
      state: 'finished',
      endedAt: new Date(clock.now - 1000),
      moves: [],
    });
    await loop.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['superseded', 'proposed']);
    expect(store.audits.map((a) => a.action)).toContain('plan.supersede');
    // The new plan is newer than that execution: it stays.
    clock.now += 60_000;
    await loop.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['superseded', 'proposed']);
  });

  it('assisted: an approved move that no longer pays on the fresh figures is dropped with why', async () => {
    const { loop, store, executor, snap } = setup({ mode: 'assisted' });
    await loop.runCycle();
    const moves = store.plans[0]!.plan.aggregates[0]!.moves;
    store.approvals.set('p1', new Set(moves.map((m) => m.step)));
    // Meanwhile the load left host a: every host now carries the same load.
    for (const s of snap().servers) s.load = { cpu: 0.5, memoryMB: s.load?.memoryMB ?? 0 };
    for (const h of snap().hosts) h.load = { cpu: 2, memoryMB: h.load?.memoryMB ?? 0 };
    clock.now += 60_000;
    const r = await loop.runCycle();
    expect(executor.requests).toEqual([]);
    const why = r.aggregates[0]!.decision!.waiting.map((w) => w.why);
    expect(why.some((w) => /no longer pays on fresh figures: imbalance/.test(w))).toBe(true);
    expect(store.audits.map((a) => a.action)).toContain('plan.moves-dropped');
    // The figure reported is the one measured now, not the plan's.
    expect(r.aggregates[0]!.imbalance).toBeLessThan(store.plans[0]!.plan.aggregates[0]!.before.imbalance);
  });

  it('after an execution, the gate waits for metrics newer than its migrations on their hosts', async () => {
    const { store } = setup();
    const ended = new Date(clock.now - 30_000);
    store.lastExecutions.set('gold', {
      id: 'e7',
      planId: 'p0',
      state: 'finished',
      endedAt: ended,
      moves: [{ serverId: 's1', from: 'a', to: 'b', state: 'completed', endedAt: ended.toISOString() }],
    });
    const lagging = { ...noProblems, hostSampledAt: { a: new Date(clock.now - 60_000).toISOString() } };
    const fresh = { ...noProblems, hostSampledAt: { a: new Date(clock.now).toISOString() } };
    let problems: ReadProblems = lagging;
    const reader: CloudReader = {
      read: async () => ({
        snapshot: { ...world(), takenAt: new Date(clock.now).toISOString() },
        problems,
        migrations: [],
      }),
    };
    const gated = new ControlLoop(
      { reader, store, executor: new InstantExecutor(store, world), now: () => new Date(clock.now) },
      settings(),
    );
    let r = await gated.runCycle();
    expect(r.aggregates[0]!.verdict!.verdict).toBe('blocked');
    expect(r.aggregates[0]!.verdict!.reasons[0]).toMatch(
      /^settling: metrics predate execution e7's migrations on 1 host\(s\), e\.g\. a /,
    );
    problems = fresh;
    r = await gated.runCycle();
    expect(r.aggregates[0]!.verdict!.verdict).toBe('ok');
    // Assisted: nothing is offered for approval while the metrics lag; the first plan on
    // settled metrics is.
    gated.updateSettings(settings({ mode: 'assisted' }));
    problems = lagging;
    clock.now += 1000;
    store.lastExecutions.set('gold', {
      ...store.lastExecutions.get('gold')!,
      endedAt: new Date(clock.now - 500),
    });
    store.lastExecutions.get('gold')!.moves[0]!.endedAt = new Date(clock.now - 500).toISOString();
    store.plans = [];
    r = await gated.runCycle();
    expect(r.aggregates[0]!.verdict!.verdict).toBe('blocked');
    expect(store.plans.map((p) => p.status)).toEqual(['observed']);
    problems = { ...noProblems, hostSampledAt: { a: new Date(clock.now).toISOString() } };
    clock.now += 1000;
    r = await gated.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['observed', 'proposed']);
    problems = fresh;
    // Bounded: past dataHealth.maxMetricAge after the end, the wait is over (staleness rules apply).
    problems = lagging;
    clock.now += (DEFAULT_HEALTH_THRESHOLDS.settleMaxSeconds + 1) * 1000;
    r = await gated.runCycle();
    expect(r.aggregates[0]!.verdict!.reasons.some((x) => x.startsWith('settling'))).toBe(false);
  });

  it('an execution that ended while the cycle read the cloud: nothing is judged on that read', async () => {
    const { store, loop } = setup();
    const w = world();
    const s1 = w.servers.find((x) => x.id === 's1')!;
    // A resumed execution ends during the read: the read still shows its migration in flight.
    store.lastExecutions.set('gold', {
      id: 'e9',
      planId: 'p0',
      state: 'aborted',
      endedAt: new Date(clock.now + 5_000),
      moves: [{ serverId: 's1', from: s1.host, to: 'b', state: 'failed', endedAt: null }],
    });
    let r = await loop.runCycle();
    expect(r.aggregates[0]!.verdict).toBeNull();
    expect(r.aggregates[0]!.summary).toMatch(/^execution e9 ended during this cycle's read \(/);
    expect(store.plans).toEqual([]);
    clock.now += 60_000;
    r = await loop.runCycle();
    expect(r.aggregates[0]!.verdict).not.toBeNull();
  });

  it('an aborted migration that left its server on its source does not make the gate wait', async () => {
    const { store } = setup();
    const ended = new Date(clock.now - 30_000);
    const w = world();
    const s1 = w.servers.find((x) => x.id === 's1')!;
    const other = w.hosts.find((h) => h.name !== s1.host)!.name;
    store.lastExecutions.set('gold', {
      id: 'e8',
      planId: 'p0',
      state: 'aborted',
      endedAt: ended,
      moves: [{ serverId: 's1', from: s1.host, to: other, state: 'failed', endedAt: ended.toISOString() }],
    });
    const lagging = Object.fromEntries(
      w.hosts.map((h) => [h.name, new Date(clock.now - 60_000).toISOString()]),
    );
    let snapshot = w;
    const reader: CloudReader = {
      read: async () => ({
        snapshot: { ...snapshot, takenAt: new Date(clock.now).toISOString() },
        problems: { ...noProblems, hostSampledAt: lagging },
        migrations: [],
      }),
    };
    const gated = new ControlLoop(
      { reader, store, executor: new InstantExecutor(store, world), now: () => new Date(clock.now) },
      settings(),
    );
    let r = await gated.runCycle();
    expect(r.aggregates[0]!.verdict!.reasons).toEqual([]);
    // The same move failed with its server somewhere nobody planned: that host and its source wait.
    snapshot = structuredClone(w);
    const third = w.hosts.find((h) => h.name !== s1.host && h.name !== other);
    const landed = third?.name ?? other;
    snapshot.servers.find((x) => x.id === 's1')!.host = landed;
    r = await gated.runCycle();
    expect(r.aggregates[0]!.verdict!.reasons[0]).toMatch(
      /^settling: metrics predate execution e8's migrations on 2 host\(s\), e\.g\. /,
    );
    expect(r.aggregates[0]!.verdict!.reasons[0]).toContain(`${landed} (sampled`);
  });

  it('bad data blocks action and the reason is stored', async () => {
    const { loop, store, executor, snap, setSnap } = setup();
    const s = snap();
    s.hosts[0]!.usage.VCPU = 999;
    setSnap(s);
    const r = await loop.runCycle();
    expect(r.aggregates[0]!.summary).toMatch(
      /^data-health gate: contradictory: host a Placement VCPU usage 999/,
    );
    expect(store.verdicts[0]!.verdict).toBe('blocked');
    expect(executor.requests).toEqual([]);
  });

  it('a running execution leaves the aggregate alone; pause stops new starts', async () => {
    const { loop, executor } = setup({ paused: true });
    let r = await loop.runCycle();
    expect(r.aggregates[0]!.summary).toBe('paused (this aggregate)');
    executor.running.add('gold');
    r = await loop.runCycle();
    expect(r.aggregates[0]!.summary).toBe('an execution is running: waiting for it to end');
  });

  it('the day budget binds and says so', async () => {
    const { loop, executor } = setup({ budget: { perDay: 1 } });
    const r = await loop.runCycle();
    expect(executor.requests[0]!.moves).toHaveLength(1);
    expect(r.aggregates[0]!.decision!.waiting[0]!.why).toMatch(
      /aggregate day budget: 0 of 1 moves started in the last 24 h, 1 left/,
    );
  });
});

describe('control loop: unchanged aggregates', () => {
  it('observe: a cycle on the same inputs plans nothing new and says since which plan', async () => {
    const { loop, store } = setup({ mode: 'observe' });
    const first = (await loop.runCycle()).aggregates[0]!;
    expect(first.unchanged).toBeUndefined();
    clock.now += 300_000;
    const again = (await loop.runCycle()).aggregates[0]!;
    expect(again.unchanged).toBe(true);
    expect(again.planId).toBe(first.planId);
    expect(again.summary).toBe(
      `unchanged since plan ${first.planId}, not stored again: observe mode, nothing executed`,
    );
    expect(store.plans).toHaveLength(1);
    // Still measured every cycle: the history charts today's figure, not the plan's.
    expect(again.imbalance).toBe(first.imbalance);
  });

  it('a change of the aggregate is planned and stored; loads within the tolerance are not a change', async () => {
    const { loop, store, snap } = setup({ mode: 'observe' });
    await loop.runCycle();
    const a = snap().hosts.find((h) => h.name === 'a')!;
    a.load = { ...a.load, cpu: a.load!.cpu! + 0.05 };
    clock.now += 300_000;
    expect((await loop.runCycle()).aggregates[0]!.unchanged).toBe(true);
    // A host of the aggregate disabled for maintenance: the plan can no longer use it.
    const d = snap().hosts.find((h) => h.name === 'd')!;
    d.service = { ...d.service, status: 'disabled', disabledReason: 'maintenance' };
    clock.now += 300_000;
    const changed = (await loop.runCycle()).aggregates[0]!;
    expect(changed.unchanged).toBeUndefined();
    expect(store.plans).toHaveLength(2);
    expect(store.plans[1]!.plan.aggregates[0]!.moves.every((m) => m.to !== 'd')).toBe(true);
  });

  it('servers booted within the tolerance keep the plan, unless it no longer fits or a host moved beyond', async () => {
    const { loop, store, snap, setSnap } = setup({ mode: 'observe' });
    const first = (await loop.runCycle()).aggregates[0]!;
    const plan = store.plans[0]!.plan.aggregates[0]!;
    const to = plan.moves[0]!.to;
    // Booted as Nova and Placement would show it: listed on its host, and claimed there.
    const boot = (id: string, on: string, spec: Parameters<typeof server>[2]) => {
      const s = snap();
      const v = server(id, on, spec);
      const hosts = s.hosts.map((h) =>
        h.name === on
          ? {
              ...h,
              usage: {
                ...h.usage,
                VCPU: (h.usage.VCPU ?? 0) + v.flavor.vcpus,
                MEMORY_MB: (h.usage.MEMORY_MB ?? 0) + v.flavor.ramMB,
              },
            }
          : h,
      );
      setSnap({ ...s, hosts, servers: [...s.servers, v] });
    };
    // A small server on the plan's busiest source: its host's measured figure stays within the
    // tolerance, and every move still fits.
    boot('n1', plan.moves[0]!.from, { vcpus: 1, ramMB: 512, cpu: 0.01, memMB: 100 });
    clock.now += 300_000;
    const calls = planner.calls;
    const kept = (await loop.runCycle()).aggregates[0]!;
    expect(planner.calls).toBe(calls);
    expect(kept.unchanged).toBe(true);
    expect(kept.planId).toBe(first.planId);
    expect(store.plans).toHaveLength(1);
    // One that takes the whole of a destination's room: the checker no longer accepts the plan.
    const room = snap().hosts.find((h) => h.name === to)!.inventory.VCPU!;
    boot('n2', to, { vcpus: Math.ceil(room.total * room.allocationRatio), ramMB: 512, cpu: 0, memMB: 0 });
    clock.now += 300_000;
    const replanned = (await loop.runCycle()).aggregates[0]!;
    expect(planner.calls).toBe(calls + 1);
    expect(replanned.unchanged).toBeUndefined();
    expect(store.plans).toHaveLength(2);
    expect(store.plans[1]!.plan.aggregates[0]!.moves.every((m) => m.to !== to)).toBe(true);
  });

  it('a server booted on a host none of its moves touches keeps the plan without checking it again', async () => {
    const { loop, store, snap, setSnap } = setup({ mode: 'observe' });
    // A host of the aggregate that is down: no move leaves or enters it.
    const s0 = snap();
    setSnap({ ...s0, hosts: [...s0.hosts, host('e', { aggregates: ['gold'], state: 'down', cpuLoad: 1 })] });
    const first = (await loop.runCycle()).aggregates[0]!;
    const moves = store.plans[0]!.plan.aggregates[0]!.moves;
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.some((m) => m.from === 'e' || m.to === 'e')).toBe(false);
    const boot = (id: string, on: string) => {
      const s = snap();
      setSnap({
        ...s,
        servers: [...s.servers, server(id, on, { vcpus: 1, ramMB: 512, cpu: 0.01, memMB: 100 })],
      });
    };
    boot('n1', 'e');
    clock.now += 300_000;
    const [plans, checks] = [planner.calls, checker.calls];
    const kept = (await loop.runCycle()).aggregates[0]!;
    expect(kept.unchanged).toBe(true);
    expect(kept.planId).toBe(first.planId);
    expect([planner.calls, checker.calls]).toEqual([plans, checks]);
    // One on a host a move leaves: the checker replays the plan before it is kept.
    boot('n2', moves[0]!.from);
    clock.now += 300_000;
    const checked = (await loop.runCycle()).aggregates[0]!;
    expect(checked.unchanged).toBe(true);
    expect([planner.calls, checker.calls]).toEqual([plans, checks + 1]);
    expect(store.plans).toHaveLength(1);
  });

  it('a restarted loop plans again but does not store the same plan twice', async () => {
    const { loop, store, reader } = setup({ mode: 'observe' });
    const first = (await loop.runCycle()).aggregates[0]!;
    const restarted = new ControlLoop(
      {
        reader,
        store,
        executor: new InstantExecutor(store, () => world()),
        now: () => new Date(clock.now),
      },
      settings({ mode: 'observe' }),
    );
    clock.now += 300_000;
    const again = (await restarted.runCycle()).aggregates[0]!;
    expect(again.unchanged).toBe(true);
    expect(again.planId).toBe(first.planId);
    expect(store.plans).toHaveLength(1);
  });

  it('active: unchanged outside the window, then the window opens and a fresh plan starts', async () => {
    const { loop, store, executor } = setup();
    clock.now = Date.parse('2026-11-30T12:00:00Z'); // Monday noon, window closed
    const waiting = (await loop.runCycle()).aggregates[0]!;
    expect(waiting.summary).toBe('outside the maintenance window: waiting');
    clock.now += 300_000;
    const still = (await loop.runCycle()).aggregates[0]!;
    expect(still.unchanged).toBe(true);
    expect(still.summary).toBe(
      `unchanged since plan ${waiting.planId}, not stored again: outside the maintenance window: waiting`,
    );
    expect(store.plans).toHaveLength(1);
    clock.now = Date.parse('2026-12-04T23:00:00Z'); // Saturday 00:00 in Paris: open
    const acting = (await loop.runCycle()).aggregates[0]!;
    expect(acting.unchanged).toBeUndefined();
    expect(acting.started).toBeGreaterThan(0);
    expect(executor.requests).toHaveLength(1);
    expect(store.plans).toHaveLength(2);
    expect(store.plans[1]!.status).toBe('executing');
    expect(store.plans[1]!.plan.snapshotTakenAt).toBe(new Date(clock.now).toISOString());
  });

  it('assisted: a proposed plan that expires is replaced even when nothing changed', async () => {
    const { loop, store } = setup({ mode: 'assisted', approvalExpirySeconds: 600 });
    await loop.runCycle();
    clock.now += 300_000;
    await loop.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['proposed']);
    clock.now += 600_000;
    await loop.runCycle();
    expect(store.plans.map((p) => p.status)).toEqual(['expired', 'proposed']);
  });
});
