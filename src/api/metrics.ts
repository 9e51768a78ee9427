// Prometheus metrics (prom-client) on GET /metrics. Request latency is observed as requests end;
// cycles are counted through cycleCompleted(), which the service calls; everything else is read
// from the store when scraped: gauges from each aggregate's latest plan and verdict, counters
// from the records added since the previous scrape (so a counter covers the store's history at
// the first scrape, then grows).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FINAL_MOVE_STATES, type MoveState } from '../executor/journal.js';
import { snapshotAggregates } from '../policy/aggregate-scope.js';
import type { Page, PageRequest } from '../store/paging.js';
import type { ApiContext, ZodApp } from './context.js';

export interface CycleEvent {
  durationSeconds: number;
  /** 'ok', or 'failed' when the cycle stopped on an error. */
  outcome: 'ok' | 'failed';
}

/** Newest-first rows with numeric ids greater than `after`. */
async function newerThan<T extends { id: string }>(
  list: (page: PageRequest) => Promise<Page<T>>,
  after: number,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page: Page<T> = await list({ limit: 1000, cursor });
    for (const item of page.items) {
      if (Number(item.id) <= after) return out;
      out.push(item);
    }
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}

export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly cycles: Counter<'outcome'>;
  private readonly cycleSeconds: Histogram;
  private readonly planMoves: Gauge<'aggregate'>;
  private readonly imbalance: Gauge<'aggregate' | 'dimension'>;
  private readonly migrations: Counter<'aggregate' | 'outcome'>;
  private readonly migrationSeconds: Histogram<'aggregate' | 'outcome'>;
  private readonly aborts: Counter<'aggregate'>;
  private readonly ratioChanges: Counter<'resource_class'>;
  private readonly verdicts: Counter<'aggregate' | 'verdict'>;
  private readonly healthy: Gauge<'aggregate'>;
  private readonly owner: Gauge<'aggregate' | 'replica'>;
  private lastRatioChange = 0;
  private lastVerdict = 0;
  /** Finished executions already counted. */
  private readonly counted = new Set<string>();
  /** Executions that started before this were all finished and counted. */
  private executionsFrom: string | null = null;
  private refreshing: Promise<void> = Promise.resolve();

  constructor() {
    const registers = [this.registry];
    this.requests = new Histogram({
      name: 'aicerine_api_request_duration_seconds',
      help: 'API request latency by method, route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.cycles = new Counter({
      name: 'aicerine_cycles_total',
      help: 'Control-loop cycles run by this process, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.cycleSeconds = new Histogram({
      name: 'aicerine_cycle_duration_seconds',
      help: 'Control-loop cycle duration',
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    });
    this.planMoves = new Gauge({
      name: 'aicerine_plan_moves',
      help: "Moves in the plan of the aggregate's latest cycle",
      labelNames: ['aggregate'],
      registers,
    });
    this.imbalance = new Gauge({
      name: 'aicerine_imbalance',
      help: "The aggregate's imbalance at its latest cycle: dimension=overall is the planner's objective, others the utilization standard deviation",
      labelNames: ['aggregate', 'dimension'],
      registers,
    });
    this.migrations = new Counter({
      name: 'aicerine_migrations_total',
      help: 'Moves of finished executions by final state (completed, failed, skipped)',
      labelNames: ['aggregate', 'outcome'],
      registers,
    });
    this.migrationSeconds = new Histogram({
      name: 'aicerine_migration_duration_seconds',
      help: 'Live-migration duration (issued to ended) of completed and failed moves',
      labelNames: ['aggregate', 'outcome'],
      buckets: [5, 10, 30, 60, 120, 300, 600, 1200, 3600],
      registers,
    });
    this.aborts = new Counter({
      name: 'aicerine_execution_aborts_total',
      help: 'Executions that ended aborted (operator, pause or window end)',
      labelNames: ['aggregate'],
      registers,
    });
    this.ratioChanges = new Counter({
      name: 'aicerine_ratio_changes_total',
      help: 'Allocation-ratio writes made by prevention, by resource class',
      labelNames: ['resource_class'],
      registers,
    });
    this.verdicts = new Counter({
      name: 'aicerine_data_health_verdicts_total',
      help: 'Data-health gate verdicts by aggregate and verdict',
      labelNames: ['aggregate', 'verdict'],
      registers,
    });
    this.healthy = new Gauge({
      name: 'aicerine_data_health_ok',
      help: "1 when the aggregate's latest data-health verdict is ok, 0 when blocked",
      labelNames: ['aggregate'],
      registers,
    });
    this.owner = new Gauge({
      name: 'aicerine_aggregate_owner',
      help: 'Replicas: 1 for the replica that owns the aggregate now (one series per aggregate)',
      labelNames: ['aggregate', 'replica'],
      registers,
    });
  }

  /** The service calls this at the end of every control-loop cycle. */
  cycleCompleted(e: CycleEvent): void {
    this.cycles.inc({ outcome: e.outcome });
    this.cycleSeconds.observe(e.durationSeconds);
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe({ method, route, status: String(status) }, seconds);
  }

  /** Reads what changed in the store since the last scrape; scrapes never overlap. */
  refresh(ctx: ApiContext): Promise<void> {
    this.refreshing = this.refreshing.catch(() => undefined).then(() => this.refreshOnce(ctx));
    return this.refreshing;
  }

  private async refreshOnce(ctx: ApiContext): Promise<void> {
    const { store } = ctx;
    // The configured aggregates, and those the loop planned with the defaults (in its snapshot).
    const latest = ctx.snapshots?.latest() ?? null;
    const names = new Set([
      ...Object.keys(ctx.config.aggregates),
      ...(latest ? snapshotAggregates(latest) : []),
    ]);
    for (const name of names) {
      // The running service stores every cycle's figures (history); an API without the loop
      // in-process still has the latest plan's.
      const point = (await store.history.list({ aggregate: name }, { limit: 1 })).items[0];
      if (point !== undefined) {
        this.planMoves.set({ aggregate: name }, point.planMoves);
        this.imbalance.set({ aggregate: name, dimension: 'overall' }, point.imbalance);
        for (const [dimension, d] of Object.entries(point.dimensions))
          this.imbalance.set({ aggregate: name, dimension }, d.stddev);
      } else {
        const latest = (await store.plans.list({ aggregate: name }, { limit: 1 })).items[0];
        if (latest !== undefined) {
          this.planMoves.set({ aggregate: name }, latest.moveCount);
          const before = (await store.plans.get(latest.id))?.plan.aggregates.find(
            (a) => a.name === name,
          )?.before;
          if (before !== undefined) {
            this.imbalance.set({ aggregate: name, dimension: 'overall' }, before.imbalance);
            for (const [dimension, d] of Object.entries(before.dimensions))
              this.imbalance.set({ aggregate: name, dimension }, d.stddev);
          }
        }
      }
      const verdict = await store.dataHealth.latest(name);
      if (verdict !== null) this.healthy.set({ aggregate: name }, verdict.verdict === 'ok' ? 1 : 0);
    }
    const verdicts = await newerThan((p) => store.dataHealth.list({}, p), this.lastVerdict);
    for (const v of verdicts) this.verdicts.inc({ aggregate: v.aggregate, verdict: v.verdict });
    if (verdicts[0] !== undefined) this.lastVerdict = Number(verdicts[0].id);
    const changes = await newerThan((p) => store.ratioChanges.list({}, p), this.lastRatioChange);
    for (const c of changes) this.ratioChanges.inc({ resource_class: c.resourceClass });
    if (changes[0] !== undefined) this.lastRatioChange = Number(changes[0].id);
    await this.countExecutions(ctx);
    if (ctx.replicas !== undefined) {
      const owners = await ctx.replicas.owners();
      // A hand-over ends the old owner's series: only the current owner of each aggregate shows.
      this.owner.reset();
      for (const [aggregate, o] of owners) this.owner.set({ aggregate, replica: o.replica }, 1);
    }
  }

  private async countExecutions(ctx: ApiContext): Promise<void> {
    const { store } = ctx;
    let cursor: string | null = null;
    let oldestRunning: string | null = null;
    let newest: string | null = null;
    do {
      const page = await store.executions.list(
        this.executionsFrom === null ? {} : { startedFrom: this.executionsFrom },
        { limit: 1000, cursor },
      );
      for (const e of page.items) {
        if (newest === null || e.startedAt > newest) newest = e.startedAt;
        if (e.state === 'running') {
          oldestRunning = e.startedAt;
          continue;
        }
        if (this.counted.has(e.id)) continue;
        this.counted.add(e.id);
        if (e.state === 'aborted') this.aborts.inc({ aggregate: e.aggregate });
        for (const m of await store.listMoves(e.id)) {
          if (!FINAL_MOVE_STATES.includes(m.state as MoveState)) continue;
          this.migrations.inc({ aggregate: e.aggregate, outcome: m.state });
          if (m.state !== 'skipped' && m.issuedAt !== null && m.endedAt !== null)
            this.migrationSeconds.observe(
              { aggregate: e.aggregate, outcome: m.state },
              Math.max(0, (Date.parse(m.endedAt) - Date.parse(m.issuedAt)) / 1000),
            );
        }
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    // Next time, start from the oldest execution still running (its moves are not counted yet),
    // or from the newest seen; `counted` keeps executions at that instant from counting twice.
    this.executionsFrom = oldestRunning ?? newest ?? this.executionsFrom;
  }

  register(app: ZodApp, ctx: ApiContext): void {
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
      await this.refresh(ctx);
      return reply.type(this.registry.contentType).send(await this.registry.metrics());
    });
  }
}
