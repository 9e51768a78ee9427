// The running service: the composition root that ties the recorder, the control loop, the
// executor, learned costs, prevention, notifications and the store together, and runs cycles on
// a timer (sooner when Nova's notifications say something changed). Everything that decides is
// elsewhere and pure; this file only wires and schedules.

import { hostname } from 'node:os';
import {
  type AbortResult,
  type PauseState,
  type ServiceControl,
  StoreServiceControl,
  storedPauses,
} from '../api/control.js';
import type { Actuator } from '../cloud/actuator.js';
import { type IncrementalOptions, IncrementalRecorder } from '../cloud/incremental-record.js';
import type { Logger } from '../cloud/log.js';
import { ProfileRefresher } from '../cloud/profiles/refresher.js';
import type { ProfileSettings } from '../cloud/profiles/settings.js';
import { DEFAULT_METRICS_POLICY } from '../cloud/prometheus/policy.js';
import type { CloudSession } from '../cloud/session.js';
import { aggregateConfig } from '../config/aggregate.js';
import type { ServiceConfig } from '../config/types.js';
import { LocalLockService } from '../coordination/local-locks.js';
import type { LockService } from '../coordination/locks.js';
import type { AggregateOwnership } from '../coordination/ownership.js';
import { type CostEstimators, learnCosts } from '../costs/estimator.js';
import { historyContextFromSnapshot, samplesFromHistory } from '../costs/history.js';
import type { CostSample as LearnerSample } from '../costs/sample.js';
import type { PlannedMove } from '../executor/journal.js';
import { type ExecutorWrites, OpenStackExecutorCloud } from '../executor/openstack-cloud.js';
import { ActuatorError, type Clock } from '../executor/ports.js';
import type { ExecutorService } from '../executor/service.js';
import { resolveExecutorSettings } from '../executor/settings.js';
import { ControlLoop, type CycleReport } from '../loop/cycle.js';
import type { CloudRead, CloudReader } from '../loop/ports.js';
import { shadowReport } from '../loop/shadow.js';
import { StoreLoopAdapter } from '../loop/store-adapter.js';
import type { Snapshot } from '../model/snapshot.js';
import type { NovaNotification } from '../notifications/events.js';
import { NotificationListener } from '../notifications/listener.js';
import { runPreventionPass } from '../prevention/cycle.js';
import { hostRatioStates } from '../prevention/observe.js';
import { type RatioWritePort, RatioWriter } from '../prevention/writer.js';
import type { Store } from '../store/store.js';
import { own as ownValue } from '../util/maps.js';
import { RecorderCloudReader } from './cloud-reader.js';
import { type ServiceCoordination, wireExecutor } from './executor-wiring.js';
import {
  executorSettings,
  executorSettingsFor,
  loopSettings,
  ratioSettings,
  timeoutSettings,
} from './loop-settings.js';
import { createServiceTasks, type ServiceTasks, type ServiceTasksDeps, taskHeldHosts } from './tasks.js';
import { waveGainCheck } from './wave-check.js';

export type { ServiceCoordination } from './executor-wiring.js';

export interface ServiceDeps {
  config: ServiceConfig;
  store: Store;
  /** Reads everything (the reader credential), including what the executor and prevention check before writing. */
  reader: CloudSession;
  /** Live-migrates, aborts and writes ratios (the actuator credential); null: nothing is ever written. */
  actuator: Actuator | null;
  /** Operator tasks' canaries and purges (the tasks credential); null when not configured. */
  tasksSession?: CloudSession | null;
  clock: Clock;
  logger: Logger;
  recorder?: IncrementalOptions;
  /** Load profiles' settings; undefined: config.prometheus.profiles; null: none recorded. */
  profiles?: ProfileSettings | null;
  /** Password of the notification broker, resolved by the caller from the configured secret. */
  notificationsUrl?: string | null;
  /** Cluster-wide locks (default: in-process): tasks and the executor share the host locks. */
  locks?: LockService;
  /** Operator task kinds beyond the built-in ones, and worker settings (tests). */
  tasks?: Pick<ServiceTasksDeps, 'extraHandlers' | 'worker'>;
  /** Absent: one process that owns every aggregate. */
  coordination?: ServiceCoordination;
}

export interface ServiceCycleReport extends CycleReport {
  recordSeconds: number;
  callCount: number;
  full: boolean;
  prevention: { aggregate: string; changes: number; pinned: number; dryRun: boolean }[];
}

/**
 * Stands in for a missing actuator credential: every write is refused, so an executor that
 * resumes an old execution or a prevention pass outside observe mode fails loudly, never
 * writes with the reader.
 */
const refused = () =>
  Promise.reject(new ActuatorError('refused', 'no actuator credential is configured (credentials.actuator)'));
const noActuator: ExecutorWrites & RatioWritePort = {
  kind: 'actuator',
  liveMigrate: refused,
  abortMigration: refused,
  putInventory: refused,
};

/** The API address other replicas and operators can reach: a wildcard bind is named by the host. */
function apiAddress(host: string, port: number): string {
  const named = host === '0.0.0.0' || host === '::' || host === '' ? hostname() : host;
  return `http://${named.includes(':') ? `[${named}]` : named}:${port}`;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export class AicerineService {
  readonly loop: ControlLoop;
  readonly executor: ExecutorService;
  /** Operator tasks (docs/tasks.md): the worker runs them, the API asks the task service. */
  readonly tasks: ServiceTasks;
  readonly locks: LockService;
  /** Replicas only: which aggregates this replica owns. */
  readonly ownership: AggregateOwnership | null;
  /** Every aggregate the loop would run (configured and discovered): what replicas share. */
  private knownAggregates: string[];
  private readonly recorderReader: RecorderCloudReader;
  private readonly writer: RatioWriter;
  private estimators: CostEstimators | null = null;
  private lastSnapshot: Snapshot | null = null;
  /** Null without Prometheus or with profiles switched off. */
  private readonly profiles: ProfileRefresher | null;
  /** Run-time pauses (API, CLI) as last read from the store, on top of the configuration's. */
  private runtime: PauseState = { global: null, aggregates: {} };
  /** Set by stop(): no new migration starts while the process shuts down. */
  private shuttingDown = false;
  /** Told of every cycle's end (metrics, the demo's printout). */
  private readonly cycleListeners: ((report: ServiceCycleReport | null, seconds: number) => void)[] = [];
  private listener: NotificationListener | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Replicas: how often pauses and abort requests made on other replicas are read. */
  private controlTimer: NodeJS.Timeout | null = null;
  private controlRunning = false;
  private running: Promise<ServiceCycleReport | null> | null = null;
  private stopping = false;
  /** Only a started service schedules its own cycles; one driven by runCycle() alone never does. */
  private started = false;
  private lastRetention = 0;
  private lastShadow = 0;
  private wakeRequested = false;
  readonly cycles: ServiceCycleReport[] = [];

  constructor(private readonly deps: ServiceDeps) {
    const writes = deps.actuator ?? noActuator;
    const { config, store, clock, logger } = deps;
    // The recorder dates snapshots and its changes-since on the service's clock, the one the
    // data-health gate judges them by (a virtual clock in replays, the wall clock in production).
    this.recorderReader = new RecorderCloudReader(
      new IncrementalRecorder(deps.reader, { now: () => new Date(clock.now()), ...deps.recorder }),
    );
    const profileSettings =
      deps.profiles === undefined ? (config.prometheus?.profiles ?? null) : deps.profiles;
    this.profiles =
      profileSettings && deps.reader.prometheus
        ? new ProfileRefresher(
            deps.reader.prometheus,
            store.profiles,
            profileSettings,
            deps.recorder?.metricsPolicy ?? DEFAULT_METRICS_POLICY,
            () => new Date(clock.now()),
          )
        : null;
    const reader: CloudReader = { read: () => this.read() };
    const settings = resolveExecutorSettings(executorSettings(config));
    // Replicas share the etcd locks for tasks and host locks too: one lock space per cloud.
    this.locks = deps.locks ?? deps.coordination?.locks ?? new LocalLockService();
    // Each aggregate's own retry and onPause apply to its executions (its concurrency is the
    // slot pool's limits.byAggregate); the pool's global limit and per-host overrides hold across.
    const perAggregate = new Map<string, ReturnType<typeof resolveExecutorSettings>>();
    const settingsFor = (aggregate: string) => {
      let s = perAggregate.get(aggregate);
      if (s === undefined) {
        s = resolveExecutorSettings(executorSettingsFor(config, aggregate));
        perAggregate.set(aggregate, s);
      }
      return s;
    };
    this.knownAggregates = Object.keys(config.aggregates);
    const coordination = deps.coordination;
    const wired = wireExecutor({
      store,
      cloud: new OpenStackExecutorCloud(deps.reader, writes),
      clock,
      settings,
      settingsFor,
      locks: this.locks,
      timeoutFor: (m) => this.timeoutFor(m),
      logger,
      isPaused: (aggregate) => this.isPaused(aggregate),
      waveCheck: waveGainCheck({
        plan: async (id) => (await store.plans.get(id))?.plan ?? null,
        read: async () => (await this.read()).snapshot,
        dimensions: (a) => aggregateConfig(config, a).policy.dimensions,
      }),
      onEnded: (summary, aggregate) => {
        logger.info(`service: execution of ${aggregate} ended`, {
          state: summary.state,
          counts: summary.counts,
        });
        this.wake();
      },
      ...(coordination !== undefined
        ? {
            coordination: {
              ...coordination,
              aggregates: () => this.knownAggregates,
              onAcquired: () => this.wake(),
              ...(config.api.enabled ? { address: apiAddress(config.api.host, config.api.port) } : {}),
            },
          }
        : {}),
    });
    this.executor = wired.executor;
    const { slots, ownership } = wired;
    this.ownership = ownership;
    const adapter = new StoreLoopAdapter(
      store,
      (a) => aggregateConfig(config, a).mode,
      (a) => aggregateConfig(config, a).approvalExpiryMs,
    );
    this.loop = new ControlLoop(
      {
        reader,
        store: adapter,
        executor: this.executor,
        now: () => new Date(clock.now()),
        heldHosts: () => taskHeldHosts(this.locks),
      },
      loopSettings(config, []),
    );
    this.tasks = createServiceTasks({
      ...deps,
      tasksSession: deps.tasksSession ?? null,
      locks: this.locks,
      executor: this.executor,
      slots,
      ...deps.tasks,
      // A crashed replica's task host locks lapse with its leases, not after a fixed 15 s.
      worker: {
        ...(coordination !== undefined ? { hostLockTtlMs: coordination.leaseTtlMs } : {}),
        ...deps.tasks?.worker,
      },
    });
    this.writer = new RatioWriter({
      placement: deps.reader.placement,
      actuator: writes,
      sink: store.ratioSink,
      now: () => new Date(clock.now()),
    });
  }

  isPaused(aggregate?: string): boolean {
    const { config } = this.deps;
    if (config.paused || this.shuttingDown || this.runtime.global !== null) return true;
    if (aggregate === undefined) return false;
    return (
      aggregateConfig(config, aggregate).paused || ownValue(this.runtime.aggregates, aggregate) !== undefined
    );
  }

  /** Run-time pauses in force (read from the store at every cycle and on every change). */
  pauses(): PauseState {
    return this.runtime;
  }

  /** A durable run-time pause: kept in the store, so it outlives a restart; effective at once. */
  async pause(aggregate?: string, by = 'service', reason: string | null = null): Promise<void> {
    await this.deps.store.pauses.set({
      aggregate: aggregate ?? null,
      by,
      at: new Date(this.deps.clock.now()).toISOString(),
      reason,
    });
    await this.refreshPauses();
  }

  /** Lifts a run-time pause; false when the scope was not paused at run time. */
  async resume(aggregate?: string): Promise<boolean> {
    const was = await this.deps.store.pauses.clear(aggregate ?? null);
    await this.refreshPauses();
    if (was) this.wake();
    return was;
  }

  /**
   * Aborts an execution this process runs: moves not issued are skipped, migrations in flight
   * are aborted in Nova by the executor that issued them. One it does not run (left by a process
   * that died and not resumed yet) is stopped in the store when nothing of it is in flight.
   */
  async abortExecution(executionId: string, by: string): Promise<AbortResult> {
    const running = this.executor.abort(executionId, `aborted by ${by}`);
    if (running !== null) {
      this.deps.logger.warn(`service: execution ${executionId} aborted by ${by}`);
      return { outcome: 'aborting', executionId };
    }
    if (this.ownership !== null) {
      // Another replica may run it: only that replica's executor can abort its migrations in
      // Nova, so the request goes through the store to whichever replica runs it (applyControl).
      const execution = await this.deps.store.getExecution(executionId);
      if (execution === null) return { outcome: 'not-found', executionId };
      if (execution.state !== 'running')
        return { outcome: 'not-running', executionId, state: execution.state };
      await this.deps.store.abortRequests.request({
        executionId,
        by,
        at: new Date(this.deps.clock.now()).toISOString(),
      });
      this.deps.logger.warn(`service: abort of execution ${executionId} by ${by} passed on to its replica`);
      return { outcome: 'aborting', executionId };
    }
    return new StoreServiceControl(this.deps.store, () => new Date(this.deps.clock.now())).abortExecution(
      executionId,
      by,
    );
  }

  /**
   * Replicas: carries out what operators asked of other replicas. Pauses are re-read (so a pause
   * made anywhere stops new migrations everywhere within the poll interval, not at the next
   * cycle), and each abort request for an execution running here is carried out; one for an
   * execution no longer running anywhere is dropped.
   */
  async applyControl(): Promise<void> {
    if (this.controlRunning) return;
    this.controlRunning = true;
    try {
      await this.refreshPauses();
      for (const r of await this.deps.store.abortRequests.list()) {
        if (this.executor.abort(r.executionId, `aborted by ${r.by}`) !== null) {
          this.deps.logger.warn(
            `service: execution ${r.executionId} aborted by ${r.by} (asked of another replica)`,
          );
          await this.deps.store.abortRequests.clear(r.executionId);
          continue;
        }
        const execution = await this.deps.store.getExecution(r.executionId);
        if (execution === null || execution.state !== 'running')
          await this.deps.store.abortRequests.clear(r.executionId);
      }
    } finally {
      this.controlRunning = false;
    }
  }

  /** The ServiceControl the API acts through. */
  control(): ServiceControl {
    return {
      pauses: async () => {
        await this.refreshPauses();
        return this.runtime;
      },
      pause: (scope, by, reason) => this.pause(scope.aggregate, by, reason),
      resume: (scope) => this.resume(scope.aggregate),
      abortExecution: (id, by) => this.abortExecution(id, by),
    };
  }

  /** The aggregate's outcome in the latest cycle that ran it (null: none kept). */
  lastDecision(aggregate: string): { at: string; started: number; summary: string } | null {
    for (let i = this.cycles.length - 1; i >= 0; i--) {
      const c = this.cycles[i]!;
      const a = c.aggregates.find((x) => x.aggregate === aggregate);
      if (a) return { at: c.at, started: a.started, summary: a.summary };
    }
    return null;
  }

  /** The latest snapshot the loop planned on (null before the first cycle). */
  latestSnapshot(): Snapshot | null {
    return this.lastSnapshot;
  }

  /** Called after every cycle with its report (null when it failed) and its duration in seconds. */
  onCycle(listener: (report: ServiceCycleReport | null, seconds: number) => void): void {
    this.cycleListeners.push(listener);
  }

  private async refreshPauses(): Promise<void> {
    this.runtime = await storedPauses(this.deps.store);
  }

  /** Resumes what a previous process left running, connects notifications, and starts the timer. */
  async start(): Promise<void> {
    const { logger } = this.deps;
    this.started = true;
    await this.refreshPauses();
    if (this.ownership !== null) {
      // Replicas: unfinished executions are resumed by whichever replica takes their aggregate.
      await this.ownership.start();
      const every = Math.max(250, this.deps.coordination?.rebalanceIntervalMs ?? 1000);
      this.controlTimer = setInterval(() => {
        this.applyControl().catch((e: unknown) =>
          logger.warn('service: reading pauses and abort requests failed; trying again', {
            error: e instanceof Error ? e.message : String(e),
          }),
        );
      }, every);
      this.controlTimer.unref();
      logger.info(
        `service: replica ${this.ownership.replicaId} owns ${this.ownership.owned().join(', ') || 'no aggregate yet'}`,
      );
    } else {
      const resumed = await this.executor.recover();
      if (resumed.length > 0)
        logger.warn(`service: resumed ${resumed.length} unfinished execution(s) after a restart`, {
          resumed,
        });
    }
    await this.tasks.worker.start();
    const url = this.deps.notificationsUrl;
    if (url) {
      this.listener = new NotificationListener({
        url,
        onNotification: (n) => this.onNotification(n),
        onStatus: (s) => logger.info(`notifications: ${s.state}`, { ...s }),
      });
      await this.listener.start();
    }
    this.schedule(0);
  }

  /**
   * Stops starting cycles and new migrations; waits for executions (they finish or abort by
   * configuration). Replicas hand their aggregates over instead: executions stop here at once,
   * still running in the store, and the next owner resumes them.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.listener?.stop();
    if (this.controlTimer) clearInterval(this.controlTimer);
    this.controlTimer = null;
    if (this.ownership !== null) {
      // Not a pause: a pause would abort migrations in flight (onStop), a hand-over leaves them
      // to the next owner.
      await this.running;
      await this.tasks.worker.stop();
      await this.ownership.stop();
      await this.executor.idle();
      await this.deps.coordination?.locks.close();
      return;
    }
    this.shuttingDown = true;
    await this.running;
    await this.tasks.worker.stop();
    await this.executor.idle();
  }

  /** Asks for a cycle soon (a notification, an execution's end). */
  wake(): void {
    if (this.stopping || !this.started) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(1000);
  }

  /** One whole cycle now: record, learn, plan and act per aggregate, prevention, housekeeping. */
  async runCycle(): Promise<ServiceCycleReport> {
    const started = Date.now();
    let out: ServiceCycleReport | null = null;
    try {
      await this.refreshPauses();
      const report = await this.loop.runCycle();
      const recovery = this.recorderReader.recover(
        report.aggregates.flatMap((a) => (a.verdict === null ? [] : [a.verdict])),
      );
      if (recovery.full !== null || recovery.hosts.length > 0)
        this.deps.logger.info('service: the next read checks again what the data-health gate doubted', {
          full: recovery.full,
          hosts: recovery.hosts,
        });
      const last = this.recorderReader.last;
      await this.recordHistory(report);
      const prevention = await this.prevent();
      await this.housekeeping();
      out = {
        ...report,
        recordSeconds: last?.seconds ?? 0,
        callCount: last?.callCount ?? 0,
        full: last?.full ?? false,
        prevention,
      };
      this.cycles.push(out);
      if (this.cycles.length > 100) this.cycles.shift();
      return out;
    } finally {
      const seconds = (Date.now() - started) / 1000;
      for (const l of this.cycleListeners) l(out, seconds);
    }
  }

  /** Each aggregate's imbalance this cycle, per dimension: the history the API charts. */
  private async recordHistory(report: CycleReport): Promise<void> {
    const snap = this.lastSnapshot;
    for (const a of report.aggregates) {
      if (a.stats === undefined) continue;
      const hosts =
        snap?.hosts.filter((h) =>
          a.aggregate === '_unassigned_' ? h.aggregates.length === 0 : h.aggregates.includes(a.aggregate),
        ).length ?? 0;
      await this.deps.store.history.record({
        aggregate: a.aggregate,
        at: report.at,
        imbalance: a.stats.imbalance,
        dimensions: a.stats.dimensions,
        hosts,
        planMoves: a.planMoves ?? 0,
        planId: a.planId,
        unchanged: a.unchanged === true,
      });
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    const { logger } = this.deps;
    this.running = this.runCycle().catch((e: unknown) => {
      logger.error('service: cycle failed; the next one starts from a fresh read', {
        error: e instanceof Error ? e.message : String(e),
      });
      return null;
    });
    const r = await this.running;
    this.running = null;
    if (r)
      for (const a of r.aggregates)
        logger.info(`cycle: ${a.aggregate}: ${a.summary}`, { started: a.started });
    const again = this.wakeRequested;
    this.wakeRequested = false;
    this.schedule(again ? 1000 : this.deps.config.cycleIntervalMs);
  }

  private onNotification(n: NovaNotification): void {
    // A live migration moved on or ended: the executor lists its migrations now, not at its next poll.
    if (n.kind === 'migration-ended' || n.kind === 'migration-progress') this.executor.migrationActivity();
    // Only what changes the picture the loop plans on: migrations ending, servers and services changing.
    if (
      n.kind === 'migration-ended' ||
      n.kind === 'service-changed' ||
      n.eventType.startsWith('instance.delete')
    )
      this.wake();
  }

  /** The recorder's read, then what depends on it: learned costs and the loop's settings. */
  private async read(): Promise<CloudRead> {
    const read = await this.recorderReader.read();
    await this.attachProfiles(read.snapshot);
    this.lastSnapshot = read.snapshot;
    await this.learn(read.snapshot);
    const aggregates = [...new Set(read.snapshot.hosts.flatMap((h) => h.aggregates))];
    const settings = loopSettings(this.deps.config, aggregates, (a, model) =>
      this.estimators ? this.estimators.for(a).model : model,
    );
    if (this.ownership !== null) {
      // Replicas share what the loop would run; each plans and acts on the aggregates it owns.
      this.knownAggregates = settings.aggregates.map((a) => a.name);
      const ownership = this.ownership;
      settings.aggregates = settings.aggregates.filter((a) => ownership.isReady(a.name));
    }
    // Run-time pauses (from the store, so they survive a restart and every replica sees them).
    settings.paused = settings.paused || this.shuttingDown || this.runtime.global !== null;
    for (const a of settings.aggregates)
      a.paused = a.paused || ownValue(this.runtime.aggregates, a.name) !== undefined;
    this.loop.updateSettings(settings);
    return read;
  }

  /** The load profiles into the snapshot the loop plans on; read again only when due (daily). */
  private async attachProfiles(snapshot: Snapshot): Promise<void> {
    const targets = this.recorderReader.last?.loadTargets;
    if (this.profiles === null || targets === undefined) return;
    const round = await this.profiles.attach(snapshot, targets);
    if (round.refreshed.length > 0)
      this.deps.logger.info(
        `service: load profiles refreshed for ${round.refreshed.join(', ')} (${round.calls} range queries, ${round.servers} servers profiled)`,
      );
    for (const w of round.warnings) this.deps.logger.warn(`service: ${w}`);
  }

  private async learn(snapshot: Snapshot): Promise<void> {
    const rec = this.recorderReader.last;
    const history = rec
      ? samplesFromHistory(
          rec.migrations,
          historyContextFromSnapshot(snapshot, {
            concurrencyOf: (h) =>
              ownValue(this.deps.config.defaults.concurrency.perSourceHostOverrides, h) ??
              this.deps.config.defaults.concurrency.perSourceHost,
          }),
        ).samples
      : [];
    const own: LearnerSample[] = [];
    let cursor: string | null = null;
    const since = new Date(this.deps.clock.now() - 30 * DAY).toISOString();
    do {
      const page = await this.deps.store.costSamples.list({ source: 'own', since }, { limit: 1000, cursor });
      for (const s of page.items)
        own.push({
          aggregate: s.aggregate,
          serverId: s.serverId,
          ramMB: s.ramMB,
          ...(s.dirtyRateMBps !== null ? { dirtyRateMBps: s.dirtyRateMBps } : {}),
          seconds: s.durationSeconds,
          outcome: s.outcome === 'aborted' ? 'cancelled' : s.outcome,
          source: 'executor',
          endedAt: s.at,
          ...(s.sourceKey !== null && /^\d+$/.test(s.sourceKey)
            ? { novaMigrationId: Number(s.sourceKey) }
            : {}),
        });
      cursor = page.nextCursor;
    } while (cursor !== null);
    const d = this.deps.config.defaults;
    this.estimators = learnCosts({
      history,
      executor: own,
      policyModel: d.policy.costModel,
      timeouts: timeoutSettings(d),
    }).estimators;
  }

  private timeoutFor(m: PlannedMove): number {
    const snap = this.lastSnapshot;
    const server = snap?.servers.find((s) => s.id === m.serverId);
    const host = snap?.hosts.find((h) => h.name === m.from);
    const aggregate = host?.aggregates[0] ?? '_unassigned_';
    const ramMB = server?.flavor.ramMB ?? 4096;
    const est = this.estimators?.for(aggregate);
    if (est) return est.timeoutFor(ramMB, server?.dirtyRateMBps);
    const t = timeoutSettings(aggregateConfig(this.deps.config, aggregate));
    return Math.min(t.ceilingSeconds, Math.max(t.floorSeconds, t.margin * m.estimatedSeconds));
  }

  private async prevent(): Promise<ServiceCycleReport['prevention']> {
    const rec = this.recorderReader.last;
    if (!rec) return [];
    const out: ServiceCycleReport['prevention'] = [];
    for (const agg of this.loop.currentSettings().aggregates) {
      const a = aggregateConfig(this.deps.config, agg.name);
      const settings = ratioSettings(a);
      if (!settings) continue;
      const hosts = rec.snapshot.hosts.filter((h) =>
        agg.name === '_unassigned_' ? h.aggregates.length === 0 : h.aggregates.includes(agg.name),
      );
      const dryRun = a.mode === 'observe' || this.isPaused(agg.name);
      const r = await runPreventionPass({
        aggregate: agg.name,
        hosts: hostRatioStates(hosts, (h) => rec.providers.get(h)?.uuid, { stealKey: 'cpuSteal' }),
        settings,
        writer: this.writer,
        sink: this.deps.store.ratioSink,
        now: () => new Date(this.deps.clock.now()),
        dryRun,
      });
      const at = new Date(this.deps.clock.now()).toISOString();
      for (const a of r.applied)
        await this.deps.store.audit.record({
          actor: 'prevention',
          action: `ratio.${a.outcome}`,
          target: `host:${a.host}`,
          detail: { aggregate: agg.name, from: a.from, to: a.to, found: a.found ?? null, detail: a.detail },
          at,
        });
      for (const o of r.overwrites) {
        // Someone else (nova.conf's cpu_allocation_ratio, another tool) owns this host's ratio.
        this.deps.logger.warn(
          `prevention: ${o.host}: VCPU ratio rewritten behind our back; no longer written`,
          {
            expected: o.expected,
            found: o.found,
          },
        );
        await this.deps.store.audit.record({
          actor: 'prevention',
          action: 'ratio.pinned',
          target: `host:${o.host}`,
          detail: { aggregate: agg.name, expected: o.expected, found: o.found, reason: o.reason },
          at,
        });
      }
      out.push({
        aggregate: agg.name,
        changes: r.applied.filter((x) => x.outcome === 'written').length,
        pinned: r.overwrites.length,
        dryRun,
      });
    }
    return out;
  }

  /** Retention once an hour; the observe-mode shadow report once a day. */
  private async housekeeping(): Promise<void> {
    const now = this.deps.clock.now();
    const { config, store } = this.deps;
    if (now - this.lastRetention >= HOUR) {
      this.lastRetention = now;
      const days = (ms: number) => ms / DAY;
      const r = config.retention;
      await store.retention.purge(
        {
          plans: days(r.plansMs),
          executions: days(r.executionsMs),
          audit: days(r.auditMs),
          costSamples: days(r.costSamplesMs),
          ratioChanges: days(r.ratioChangesMs),
          dataHealth: days(r.dataHealthMs),
          // The imbalance history charts what plans explain: kept as long as plans.
          history: days(r.plansMs),
          // Cooldowns must outlive the longest cooldown; a day beyond it is plenty.
          cooldowns: days(
            Math.max(
              config.defaults.cooldowns.serverMs,
              ...Object.values(config.aggregates).map((a) => a.cooldowns.serverMs),
            ) + DAY,
          ),
        },
        new Date(now).toISOString(),
      );
    }
    if (this.lastShadow === 0) this.lastShadow = now;
    if (now - this.lastShadow >= DAY) {
      const from = new Date(this.lastShadow).toISOString();
      const to = new Date(now).toISOString();
      this.lastShadow = now;
      await this.shadowReports(from, to);
    }
  }

  private async shadowReports(from: string, to: string): Promise<void> {
    const snap = this.lastSnapshot;
    if (!snap) return;
    const { store } = this.deps;
    for (const agg of this.loop.currentSettings().aggregates) {
      if (agg.mode !== 'observe') continue;
      const page = await store.plans.list(
        { aggregate: agg.name, createdFrom: from, createdBefore: to },
        { limit: 1000 },
      );
      const plans = [];
      for (const p of [...page.items].reverse()) {
        const full = await store.plans.get(p.id);
        const ap = full?.plan.aggregates.find((x) => x.name === agg.name);
        if (full && ap) plans.push({ at: full.createdAt, plan: ap });
      }
      const hosts = new Set(snap.hosts.filter((h) => h.aggregates.includes(agg.name)).map((h) => h.name));
      const report = shadowReport({
        aggregate: agg.name,
        from,
        to,
        plans,
        migrations: snap.migrationHistory ?? [],
        hosts,
        imbalanceAtStart: plans[0]?.plan.before.imbalance ?? null,
        imbalanceAtEnd: plans.at(-1)?.plan.before.imbalance ?? null,
      });
      await store.audit.record({
        actor: 'loop:observe',
        action: 'shadow.report',
        target: `aggregate:${agg.name}`,
        detail: JSON.parse(JSON.stringify(report)),
        at: to,
      });
    }
  }
}
