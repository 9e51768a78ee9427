// The whole service replayed against the simulator on a virtual clock: a Bitbrains-driven cloud,
// `aicerine serve`'s composition root in-process, cycles run back to back with the simulator's
// clock jumped to the next cycle once the executions of the last one have ended. What it returns
// is what the store and the simulated Nova say happened, so the harness can judge oscillation,
// wrong moves and lost records without trusting the service's own account.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actuator } from '../cloud/actuator.js';
import { silentLogger } from '../cloud/log.js';
import { openSession } from '../cloud/session.js';
import { aggregateConfig } from '../config/aggregate.js';
import { parseServiceConfig } from '../config/load.js';
import type { ServiceConfig } from '../config/types.js';
import type { ExecutionRecord, MoveRecord } from '../executor/journal.js';
import { SimClock } from '../sim/clock.js';
import { simAdminConfig } from '../sim/connect-info.js';
import type { FaultSpec } from '../sim/faults.js';
import { PROMETHEUS_PREFIX } from '../sim/http/prometheus.js';
import { startSimServer } from '../sim/http/server.js';
import type { SimMigration } from '../sim/model.js';
import { SimCloud } from '../sim/model.js';
import { chooseLoadModel } from '../sim/setup.js';
import { type SynthOptions, synthesizeSnapshot } from '../snapshot/synth.js';
import { openStore, type Store } from '../store/store.js';
import { AicerineService } from './service.js';

export interface ReplayOptions {
  cloud: SynthOptions;
  /** Virtual days to replay. */
  days: number;
  /** Virtual epoch ms of the start; default Monday 2026-11-02 00:00 UTC (windows are weekly). */
  startMs?: number;
  /**
   * Virtual seconds per wall second while migrations run; the executor's sleeps are scaled by it.
   * The clock stands still while a cycle reads and plans, so how busy the machine is changes the
   * wall seconds of a replay, not what happens in it.
   */
  speed: number;
  /** Bitbrains hourly CSV; default: the shared month when present, else the shipped sample. */
  tracePath?: string;
  /**
   * The service configuration document (as `aicerine.yaml` holds it, without openstack and
   * store, which the harness supplies).
   */
  config: Record<string, unknown>;
  /** Faults the simulator injects on its APIs from the first cycle on. */
  faults?: FaultSpec[];
  /** Seed of the fault injector's draws. */
  faultSeed?: number;
  /** Called after every cycle, for progress output. */
  onCycle?: (c: ReplayCycle) => void;
}

export interface ReplayCycle {
  index: number;
  at: string;
  /** Null when the cycle failed (faults); the service starts the next one from a fresh read. */
  error: string | null;
  started: number;
  callCount: number;
  /** Imbalance per aggregate as the cycle's plan saw it (before its moves). */
  imbalance: Record<string, number>;
}

export interface ServerMove {
  serverId: string;
  from: string;
  to: string;
  issuedAt: string;
  endedAt: string;
  executionId: string;
  planId: string | null;
  emergency: boolean;
}

export interface MoveBack {
  serverId: string;
  /** The host it left, then came back to. */
  host: string;
  leftAt: string;
  returnedAt: string;
}

export interface ReplayReport {
  cloud: { hosts: number; servers: number; aggregates: string[]; load: string };
  virtualDays: number;
  cycles: number;
  failedCycles: number;
  /** Why cycles failed, each reason once. */
  cycleErrors: string[];
  wallSeconds: number;
  moves: {
    /** Moves Aicerine issued to Nova (an os-migrateLive was sent or may have been). */
    started: number;
    completed: number;
    failed: number;
    /** Failed moves whose migration Aicerine aborted (timeout, window end, pause). */
    aborted: number;
    /** Refused by pre-flight: nothing was asked of Nova. */
    skipped: number;
    /** Started outside a window (emergencies). */
    emergency: number;
  };
  serversMovedMoreThanOnce: number;
  /** Moves of a server back to a host it left less than the server cooldown earlier: must be 0. */
  movesBackWithinCooldown: MoveBack[];
  /** Moves back to a host the server left at any earlier time (after its cooldown: allowed). */
  movesBackEver: number;
  /** Every store move with a Nova migration id matches one simulated migration and vice versa. */
  accounting: {
    novaMigrations: number;
    novaCompleted: number;
    /** Nova migrations of which the store has no record (lost records). */
    unrecorded: number[];
    /** Nova migration ids the store holds more than once. */
    recordedTwice: number[];
    /** Completed store moves whose Nova migration did not complete, or the other way round. */
    stateMismatches: string[];
  };
  imbalance: Record<
    string,
    { start: number | null; end: number | null; series: { at: string; value: number }[] }
  >;
  faults: { injected: number; byRule: { rule: string; hits: number }[] };
}

export interface ReplayRun {
  report: ReplayReport;
  /** Every move in the store, with its execution. */
  moves: (MoveRecord & { execution: ExecutionRecord })[];
  migrations: SimMigration[];
  config: ServiceConfig;
  /** Host of every server at the start and at the end. */
  hostsAtStart: Map<string, string>;
  hostsAtEnd: Map<string, string>;
  /** Aggregates of every host. */
  aggregatesOf: Map<string, string[]>;
  store: Store;
  /** Closes the store and removes the working directory. */
  close(): Promise<void>;
}

const DEFAULT_START = Date.UTC(2026, 10, 2);

async function allExecutions(store: Store): Promise<ExecutionRecord[]> {
  const out: ExecutionRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.executions.list({}, { limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

/** Completed moves per server, in time order. */
export function completedMoves(
  moves: readonly (MoveRecord & { execution: ExecutionRecord })[],
): ServerMove[] {
  return moves
    .filter((m) => m.state === 'completed')
    .map((m) => ({
      serverId: m.serverId,
      from: m.from,
      to: m.to,
      issuedAt: m.issuedAt ?? m.execution.startedAt,
      endedAt: m.endedAt ?? m.execution.startedAt,
      executionId: m.executionId,
      planId: m.execution.planId,
      emergency: m.execution.startedBy === 'loop:emergency',
    }))
    .sort((a, b) => a.issuedAt.localeCompare(b.issuedAt));
}

/**
 * Moves back to a host the server left less than `cooldownMs` earlier (the oscillation the
 * cooldowns exist to prevent), judged from completed moves alone.
 */
export function movesBack(moves: readonly ServerMove[], cooldownMs: (m: ServerMove) => number): MoveBack[] {
  const left = new Map<string, { host: string; at: string }[]>();
  const out: MoveBack[] = [];
  for (const m of moves) {
    const history = left.get(m.serverId) ?? [];
    for (const h of history)
      if (h.host === m.to && Date.parse(m.issuedAt) - Date.parse(h.at) < cooldownMs(m))
        out.push({ serverId: m.serverId, host: h.host, leftAt: h.at, returnedAt: m.issuedAt });
    history.push({ host: m.from, at: m.endedAt });
    left.set(m.serverId, history);
  }
  return out;
}

/** Store moves against Nova's (the simulator's) migrations: lost, doubled and disagreeing records. */
export function accountFor(
  moves: readonly MoveRecord[],
  migrations: readonly SimMigration[],
): ReplayReport['accounting'] {
  const byId = new Map<number, MoveRecord[]>();
  for (const m of moves)
    if (m.novaMigrationId !== null) byId.set(m.novaMigrationId, [...(byId.get(m.novaMigrationId) ?? []), m]);
  const unrecorded: number[] = [];
  const recordedTwice: number[] = [];
  const stateMismatches: string[] = [];
  for (const nova of migrations) {
    const recs = byId.get(nova.id) ?? [];
    if (recs.length === 0) unrecorded.push(nova.id);
    if (recs.length > 1) recordedTwice.push(nova.id);
    const rec = recs[0];
    if (rec && (rec.state === 'completed') !== (nova.status === 'completed'))
      stateMismatches.push(`migration ${nova.id}: Nova ${nova.status}, store ${rec.state}`);
    if (rec && (rec.serverId !== nova.server.uuid || rec.to !== nova.requestedHost))
      stateMismatches.push(
        `migration ${nova.id}: Nova moved ${nova.server.uuid} to ${nova.requestedHost}, store says ${rec.serverId} to ${rec.to}`,
      );
  }
  const known = new Set(migrations.map((m) => m.id));
  for (const id of byId.keys())
    if (!known.has(id)) stateMismatches.push(`store holds migration ${id}, which Nova never had`);
  return {
    novaMigrations: migrations.length,
    novaCompleted: migrations.filter((m) => m.status === 'completed').length,
    unrecorded,
    recordedTwice,
    stateMismatches,
  };
}

export async function runReplay(opts: ReplayOptions): Promise<ReplayRun> {
  const wallStart = performance.now();
  const startMs = opts.startMs ?? DEFAULT_START;
  const snapshot = synthesizeSnapshot(opts.cloud);
  const load = await chooseLoadModel('trace', opts.tracePath);
  const clock = new SimClock({ startMs, speed: opts.speed });
  const cloud = new SimCloud({ ...snapshot, takenAt: new Date(startMs).toISOString() }, { clock, load });
  const password = 'replay';
  const sim = await startSimServer({
    cloud,
    password,
    ...(opts.faultSeed ? { faultSeed: opts.faultSeed } : {}),
  });
  const dir = await mkdtemp(join(tmpdir(), 'aic-replay-'));
  let store: Store | null = null;
  try {
    const { config } = await parseServiceConfig(
      {
        credentials: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
        store: { url: 'sqlite:aicerine.db' },
        ...opts.config,
      },
      { baseDir: dir },
    );
    const common = {
      config: simAdminConfig(sim.authUrl, password, 'aicerine replay (simulator)'),
      retry: { maxRetries: 3, initialDelayMs: 5, maxDelayMs: 50 },
      timeoutMs: 2_000,
    };
    const session = await openSession({
      ...common,
      prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
      credential: { kind: 'reader', label: 'reader (replay)' },
    });
    const actuator = await Actuator.open({ ...common, credential: { label: 'actuator (replay)' } });
    store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
    const service = new AicerineService({
      config,
      store,
      reader: session,
      actuator,
      clock: {
        now: () => clock.nowMs(),
        sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / opts.speed))),
      },
      logger: silentLogger,
      recorder: { historyDays: 1 },
    });
    const hostsAtStart = new Map([...cloud.serversByUuid.values()].map((s) => [s.uuid, s.host]));
    for (const f of opts.faults ?? []) sim.faults.add(f);

    const endMs = startMs + opts.days * 86_400_000;
    const cycles: ReplayCycle[] = [];
    const imbalance: ReplayReport['imbalance'] = {};
    while (clock.nowMs() < endMs) {
      clock.setSpeed(0);
      const cycleStart = clock.nowMs();
      const at = new Date(cycleStart).toISOString();
      let c: ReplayCycle;
      try {
        const r = await service.runCycle();
        const imb: Record<string, number> = {};
        for (const a of r.aggregates) if (a.imbalance !== undefined) imb[a.aggregate] = a.imbalance;
        c = {
          index: cycles.length,
          at,
          error: null,
          started: r.aggregates.reduce((n, a) => n + a.started, 0),
          callCount: r.callCount,
          imbalance: imb,
        };
      } catch (e) {
        c = {
          index: cycles.length,
          at,
          error: e instanceof Error ? e.message : String(e),
          started: 0,
          callCount: 0,
          imbalance: {},
        };
      }
      // Migrations in flight finish (or are aborted by the executor) on the running clock before
      // time jumps, so a jump never lands in the middle of one.
      clock.setSpeed(opts.speed);
      await service.executor.idle();
      clock.setSpeed(0);
      for (const [agg, value] of Object.entries(c.imbalance)) {
        const s = imbalance[agg] ?? { start: null, end: null, series: [] };
        imbalance[agg] = s;
        s.start ??= value;
        s.end = value;
        s.series.push({ at: c.at, value });
      }
      cycles.push(c);
      opts.onCycle?.(c);
      const next = cycleStart + config.cycleIntervalMs;
      const now = clock.nowMs();
      if (next > now) clock.advance((next - now) / 1000);
    }
    clock.setSpeed(opts.speed);
    await service.stop();
    const faultRules = sim.faults.list().map((r) => ({
      rule: `${r.kind}${r.kind === 'error' ? ` ${r.status}` : ''} ${r.pattern} @${r.rate}`,
      hits: r.hits,
    }));
    sim.faults.clear();

    const executions = await allExecutions(store);
    const moves: ReplayRun['moves'] = [];
    for (const e of executions)
      for (const m of await store.listMoves(e.id)) moves.push({ ...m, execution: e });
    const migrations = [...cloud.migrations];
    const done = completedMoves(moves);
    const aggregatesOf = new Map(snapshot.hosts.map((h) => [h.name, h.aggregates]));
    const cooldownOf = (m: ServerMove) =>
      aggregateConfig(config, aggregatesOf.get(m.from)?.[0] ?? '_unassigned_').cooldowns.serverMs;
    const perServer = new Map<string, number>();
    for (const m of done) perServer.set(m.serverId, (perServer.get(m.serverId) ?? 0) + 1);
    const started = moves.filter((m) => m.state !== 'skipped' && m.state !== 'pending');
    const failed = moves.filter((m) => m.state === 'failed');
    const aborted = failed.filter((m) =>
      migrations.some((n) => n.id === m.novaMigrationId && n.status === 'cancelled'),
    );
    const report: ReplayReport = {
      cloud: {
        hosts: snapshot.hosts.length,
        servers: snapshot.servers.length,
        aggregates: [...new Set(snapshot.hosts.flatMap((h) => h.aggregates))].sort(),
        load: load.description,
      },
      virtualDays: opts.days,
      cycles: cycles.length,
      failedCycles: cycles.filter((c) => c.error !== null).length,
      cycleErrors: [...new Set(cycles.flatMap((c) => (c.error === null ? [] : [c.error])))],
      wallSeconds: Math.round((performance.now() - wallStart) / 100) / 10,
      moves: {
        started: started.length,
        completed: done.length,
        failed: failed.length,
        aborted: aborted.length,
        skipped: moves.filter((m) => m.state === 'skipped').length,
        emergency: started.filter((m) => m.execution.startedBy === 'loop:emergency').length,
      },
      serversMovedMoreThanOnce: [...perServer.values()].filter((n) => n > 1).length,
      movesBackWithinCooldown: movesBack(done, cooldownOf),
      movesBackEver: movesBack(done, () => Number.POSITIVE_INFINITY).length,
      accounting: accountFor(moves, migrations),
      imbalance,
      faults: { injected: faultRules.reduce((n, r) => n + r.hits, 0), byRule: faultRules },
    };
    const hostsAtEnd = new Map([...cloud.serversByUuid.values()].map((s) => [s.uuid, s.host]));
    await sim.close();
    const kept = store;
    store = null;
    return {
      report,
      moves,
      migrations,
      config,
      hostsAtStart,
      hostsAtEnd,
      aggregatesOf,
      store: kept,
      close: async () => {
        await kept.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await store?.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
