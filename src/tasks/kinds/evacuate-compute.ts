// evacuate-compute {host, target?}: empties a compute host for maintenance. It disables the
// host (reason recorded), live-migrates what can go live through the balancer's executor (same
// move driver, slots, journal, quarantine and cooldowns; the task is an emergency for windows
// unless tasks.evacuate.emergency is false), cold-migrates with confirmResize what cannot go live
// and may stop (stopped servers, and servers whose metadata key tasks.evacuate.mayStopMetadataKey
// is "true"), and lists what cannot move at all. Every phase is checkpointed: a restart resumes,
// and asking again once it is done finds nothing left to move.
import { CloudError } from '../../cloud/errors.js';
import { nonMigratableReasons } from '../../cloud/migratable.js';
import type { NovaAggregate, NovaServer, NovaService } from '../../cloud/openstack/nova.js';
import { aggregateConfig } from '../../config/aggregate.js';
import { windowState } from '../../config/windows.js';
import { hostLockName, type LockService } from '../../coordination/locks.js';
import type { ExecutionSummary } from '../../executor/execution.js';
import {
  type ExecutionJournal,
  type MoveRecord,
  type PlannedMove,
  retryRefused,
} from '../../executor/journal.js';
import { OpenStackExecutorCloud } from '../../executor/openstack-cloud.js';
import type { MigrationSlots } from '../../executor/slots.js';
import { estimateMigrationSeconds } from '../../planner/cost-model.js';
import {
  type JsonObject,
  type PreflightContext,
  requireActuator,
  type TaskContext,
  TaskFailedError,
  type TaskHandler,
  TaskRequestError,
  TaskWaitError,
} from '../types.js';
import { ArgsReader } from './args.js';
import { type Candidate, DestinationChooser } from './destinations.js';

export interface EvacuateArgs {
  host: string;
  target: string | null;
  /**
   * Destinations used only when no other host fits (a campaign passes the hosts it has still
   * to drain, so servers do not land where they would have to move again).
   */
  lastResort: string[];
}

type Moved = {
  server: string;
  name: string;
  to: string;
};
type Left = {
  server: string;
  name: string;
  why: string;
};

/** What an evacuation did (the task's result; the dashboard reads it). */
export type EvacuateResult = {
  host: string;
  disabledReason: string;
  liveMigrated: Moved[];
  coldMigrated: Moved[];
  cannotMove: Left[];
};

type ColdState = { to: string; state: 'asked' | 'confirming'; at: number };

export interface EvacuateCheckpoint {
  phase: 'live' | 'cold' | 'done';
  disabledReason: string;
  /** Live executions started, in order; the last may still run. */
  executions: string[];
  live: Moved[];
  cold: Moved[];
  coldInFlight: Record<string, ColdState>;
  /** Servers whose live (or cold) move failed: not tried again by this task. */
  failed: Left[];
  /**
   * Servers given one more round because the executor's retry never reached Nova (its pre-flight
   * refused the destination), by the execution that did so. Absent in checkpoints of older runs.
   */
  secondChance?: Record<string, string>;
}

/** The executor as an evacuation drives it (ExecutorService implements it). */
export interface EvacuationExecutor {
  /** Who started the execution running in the aggregate, or null: one runs per aggregate at a time. */
  runningBy(aggregate: string): string | null;
  /** How many executions have started in the aggregate in this process (ExecutorService.startedIn). */
  startedIn(aggregate: string): number;
  isActive(executionId: string): boolean;
  ended(executionId: string): Promise<void>;
  runForTask(request: {
    executionId: string;
    aggregate: string;
    startedBy: string;
    moves: PlannedMove[];
    deadline: Date | null;
    ownHosts: ReadonlySet<string>;
  }): Promise<ExecutionSummary>;
}

export interface EvacuateDeps {
  executor: EvacuationExecutor;
  journal: Pick<ExecutionJournal, 'getExecution' | 'listMoves'>;
  /** The executor's slot pool: cold migrations count against the same limits. */
  slots: MigrationSlots;
  locks: LockService;
  /** Between reads of a server being cold-migrated. Default 2 s. */
  pollMs?: number;
  /** A cold migration not finished after this fails. Default 1 h. */
  coldTimeoutMs?: number;
}

const LIVE_STATUSES = new Set(['ACTIVE', 'PAUSED']);
const MAX_LIVE_ROUNDS = 3;
/** However much each round moves: a bound on the executions one evacuation starts. */
const MAX_LIVE_ROUNDS_CAP = 100;

export function evacuateComputeHandler(deps: EvacuateDeps): TaskHandler<EvacuateArgs, EvacuateCheckpoint> {
  const pollMs = deps.pollMs ?? 2_000;
  const coldTimeoutMs = deps.coldTimeoutMs ?? 3_600_000;
  return {
    kind: 'evacuate-compute',
    description: 'disable a compute host and move every server off it (live, else cold when allowed)',

    parse(raw) {
      const r = new ArgsReader(raw, ['host', 'target', 'lastResort']);
      const host = r.hostName('host', true);
      const target = r.hostName('target', false);
      const lastResort = r.hostNames('lastResort');
      if (host !== null && target === host)
        r.issues.push({ path: 'target', message: 'must differ from host', value: target });
      lastResort.forEach((n, i) => {
        if (n === host)
          r.issues.push({ path: `lastResort[${i}]`, message: 'must differ from host', value: n });
      });
      r.done();
      return { host: host as string, target, lastResort };
    },

    async preflight(args, ctx) {
      await checkHosts(args, ctx);
      const busy = (await ctx.unfinished()).find(
        (t) => t.kind === 'evacuate-compute' && t.hosts.includes(args.host),
      );
      if (busy !== undefined) {
        const message = `already being evacuated by task ${busy.id} (${busy.state})`;
        throw new TaskRequestError(409, `host ${args.host} is ${message}`, [
          { path: 'host', message, value: args.host },
        ]);
      }
      return [
        {
          kind: 'evacuate-compute',
          args: {
            host: args.host,
            target: args.target,
            ...(args.lastResort.length > 0 ? { lastResort: args.lastResort } : {}),
          } as JsonObject,
          hosts: [args.host],
        },
      ];
    },

    async run(ctx) {
      const { host } = ctx.args;
      const nova = ctx.reader.nova;
      const act = requireActuator(ctx, 'evacuate-compute');
      let cp: EvacuateCheckpoint = ctx.checkpoint.load() ?? {
        phase: 'live',
        disabledReason: `aicerine task ${ctx.task.id}: evacuate-compute requested by ${ctx.task.requestedBy}`,
        executions: [],
        live: [],
        cold: [],
        coldInFlight: {},
        failed: [],
      };
      const save = async (next: EvacuateCheckpoint) => {
        cp = next;
        await ctx.checkpoint.save(next);
      };
      try {
        // Disable (again, when an operator re-enabled it meanwhile): no new server lands there.
        const [service] = await nova.listServices('nova-compute', host);
        if (service === undefined) throw new Error(`host ${host} has no nova-compute service any more`);
        if (service.status === 'enabled') {
          await act.setServiceStatus(service.id, 'disabled', cp.disabledReason);
          await ctx.audit.record('host-disabled', `host:${host}`, { reason: cp.disabledReason });
        }
        if (ctx.checkpoint.load() === null) await save(cp);

        const aggregate = await executionAggregate(ctx, host);
        const mayStop = ctx.config.tasks.evacuate.mayStopMetadataKey;

        // Live phase: rounds of executions until nothing more can go live.
        if (cp.phase === 'live') {
          for (let round = cp.executions.length; ; round++) {
            ctx.signal.throwIfAborted();
            const last = cp.executions.at(-1);
            if (last !== undefined && !(await executionEnded(deps, last))) {
              await progress(ctx, cp, `waiting for live migrations of execution ${last}`);
              await deps.executor.ended(last);
              await ctx.clock.sleep(pollMs);
              continue;
            }
            // A round whose moves all waited for a held destination (the executor runs one move
            // per host at a time) moved nothing; rounds go on past the third while each moves some.
            let lastMoved = 0;
            if (last !== undefined) {
              const moves = await deps.journal.listMoves(last);
              lastMoved = moves.filter((m) => m.state === 'completed').length;
              cp = absorbExecution(cp, moves, await unusableDestinations(ctx, moves));
            }
            // Destinations are chosen from a cloud no execution of the aggregate is moving: a
            // server in flight still shows on its source, so a group member on its way to a host
            // would leave that host looking free to another member (seen: a campaign's wave of
            // drains sending two anti-affinity members to one host; Nova refused all three
            // attempts and the host stayed not drained).
            const running = deps.executor.runningBy(aggregate);
            if (running !== null) throw new TaskWaitError(executionWaitReason(aggregate, running));
            const startsAtRead = deps.executor.startedIn(aggregate);
            const servers = await nova.listServers({ host });
            const liveCandidates = largestFirst(servers).filter(
              (s) =>
                LIVE_STATUSES.has(s.status) &&
                s.taskState === null &&
                liveProblem(s) === null &&
                !isFailed(cp, s.id),
            );
            if (liveCandidates.length === 0 || round >= MAX_LIVE_ROUNDS_CAP) break;
            if (round >= MAX_LIVE_ROUNDS && lastMoved === 0) break;
            const chooser = await destinations(ctx, deps, host, servers);
            const moves: PlannedMove[] = [];
            const policy = aggregateConfig(ctx.config, aggregate).policy;
            const cloud = new OpenStackExecutorCloud(ctx.reader, act);
            const left: typeof cp.failed = [];
            for (const s of liveCandidates) {
              const need = await cloud.getServerAllocation(s.id);
              const pick = chooser.choose(s.id, need, ctx.args.target);
              if ('why' in pick) {
                left.push({ server: s.id, name: s.name, why: pick.why });
                continue;
              }
              moves.push({
                step: moves.length + 1,
                wave: 1,
                serverId: s.id,
                serverName: s.name,
                from: host,
                to: pick.host,
                estimatedSeconds: estimateMigrationSeconds({ ramMB: s.flavor.ramMB }, policy.costModel),
              });
            }
            cp = { ...cp, failed: [...cp.failed, ...left] };
            if (moves.length === 0) break;
            const busy = deps.executor.runningBy(aggregate);
            if (busy !== null) throw new TaskWaitError(executionWaitReason(aggregate, busy));
            // One started (and maybe ended) while this round read and chose: choose again.
            if (deps.executor.startedIn(aggregate) !== startsAtRead)
              throw new TaskWaitError(
                `another execution of ${aggregate} ran while this evacuation chose destinations: choosing again`,
              );
            const deadline = liveDeadline(ctx, aggregate);
            const executionId = `task-${ctx.task.id}-live-${round + 1}`;
            await save({ ...cp, executions: [...cp.executions, executionId] });
            await ctx.audit.record('live-migrations', `host:${host}`, {
              execution: executionId,
              moves: moves.map((m) => ({ server: m.serverId, to: m.to })),
            });
            await progress(ctx, cp, `live-migrating ${moves.length} server(s) (execution ${executionId})`);
            await deps.executor
              .runForTask({
                executionId,
                aggregate,
                startedBy: `task:${ctx.task.id}`,
                moves,
                deadline,
                ownHosts: new Set([host]),
              })
              .catch(async (err) => {
                // Another execution of the aggregate started between the check and here.
                if (!(await deps.journal.getExecution(executionId)))
                  throw new TaskWaitError(`the executor refused the evacuation's moves: ${message(err)}`);
              });
          }
          await save({ ...cp, phase: 'cold' });
        }

        // Cold phase: what is left and may stop.
        if (cp.phase === 'cold') {
          const servers = await nova.listServers({ host });
          const inFlight = Object.keys(cp.coldInFlight);
          const coldCandidates = largestFirst(servers).filter(
            (s) =>
              !inFlight.includes(s.id) &&
              s.taskState === null &&
              (s.status === 'SHUTOFF' || (LIVE_STATUSES.has(s.status) && s.metadata[mayStop] === 'true')) &&
              !cp.cold.some((c) => c.server === s.id),
          );
          const chooser = await destinations(ctx, deps, host, servers);
          const cloud = new OpenStackExecutorCloud(ctx.reader, act);
          // Resume the ones asked before a restart first.
          for (const id of inFlight) cp = await followCold(ctx, cp, id, save, pollMs, coldTimeoutMs);
          for (const s of coldCandidates) {
            ctx.signal.throwIfAborted();
            const need = await cloud.getServerAllocation(s.id);
            const pick = chooser.choose(s.id, need, ctx.args.target);
            if ('why' in pick) {
              cp = {
                ...cp,
                failed: [
                  ...cp.failed.filter((f) => f.server !== s.id),
                  { server: s.id, name: s.name, why: pick.why },
                ],
              };
              continue;
            }
            const lease = await slot(ctx, deps, host, pick.host, aggregate);
            try {
              await save({
                ...cp,
                coldInFlight: {
                  ...cp.coldInFlight,
                  [s.id]: { to: pick.host, state: 'asked', at: ctx.clock.now() },
                },
              });
              await progress(ctx, cp, `cold-migrating ${s.name || s.id} to ${pick.host}`);
              try {
                await act.coldMigrate(s.id, pick.host);
                await ctx.audit.record('cold-migrate', `server:${s.id}`, { from: host, to: pick.host });
              } catch (err) {
                if (!(err instanceof CloudError) || err.status === undefined || err.status >= 500) throw err;
                const { [s.id]: _, ...rest } = cp.coldInFlight;
                await save({
                  ...cp,
                  coldInFlight: rest,
                  failed: [
                    ...cp.failed,
                    { server: s.id, name: s.name, why: `Nova refused the cold migration: ${err.message}` },
                  ],
                });
                continue;
              }
              cp = await followCold(ctx, cp, s.id, save, pollMs, coldTimeoutMs);
            } finally {
              deps.slots.release(lease);
            }
          }
          await save({ ...cp, phase: 'done' });
        }

        const remaining = await nova.listServers({ host });
        const cannotMove = remaining.map((s) => ({
          server: s.id,
          name: s.name,
          why: cp.failed.find((f) => f.server === s.id)?.why ?? whyStuck(s, mayStop),
        }));
        await progress(
          ctx,
          cp,
          remaining.length === 0 ? 'host empty' : `${remaining.length} server(s) cannot move`,
        );
        return {
          host,
          disabledReason:
            service.status === 'enabled' ? cp.disabledReason : (service.disabledReason ?? cp.disabledReason),
          liveMigrated: cp.live.map((m) => ({ ...m })),
          coldMigrated: cp.cold.map((m) => ({ ...m })),
          cannotMove,
        } satisfies EvacuateResult;
      } catch (err) {
        throw await withWhatItDid(err, ctx.args.host, cp, deps);
      }
    },
  };
}

/**
 * A run that ends in ERROR (failed, or cancelled by an operator or a campaign's abort) still says
 * what it did: the moves of its finished rounds and the completed ones of the round it was in.
 * A wait is left as it is: the task resumes from its checkpoint.
 */
async function withWhatItDid(
  err: unknown,
  host: string,
  cp: EvacuateCheckpoint,
  deps: EvacuateDeps,
): Promise<unknown> {
  if (err instanceof TaskWaitError || (err instanceof TaskFailedError && err.result !== null)) return err;
  let done = cp;
  const last = cp.executions.at(-1);
  if (last !== undefined && cp.phase === 'live') {
    const moves = await deps.journal.listMoves(last).catch(() => []);
    done = absorbExecution(cp, moves, new Set());
  }
  const result: EvacuateResult = {
    host,
    disabledReason: cp.disabledReason,
    liveMigrated: done.live.map((m) => ({ ...m })),
    coldMigrated: done.cold.map((m) => ({ ...m })),
    cannotMove: done.failed.map((f) => ({ ...f })),
  };
  return new TaskFailedError(message(err), result);
}

/** Where a server of `source` may go: hosts sharing an aggregate with it, else its zone's. */
function destinationPool(
  aggregates: readonly NovaAggregate[],
  services: readonly NovaService[],
  source: string,
): Set<string> {
  const mine = aggregates.filter((a) => a.hosts.includes(source));
  const zone = services.find((s) => s.host === source)?.zone;
  return new Set(
    mine.length > 0
      ? mine.flatMap((a) => a.hosts)
      : services.filter((s) => s.zone === zone).map((s) => s.host),
  );
}

async function checkHosts(args: EvacuateArgs, ctx: PreflightContext): Promise<void> {
  const nova = ctx.reader.nova;
  if (args.target !== null) {
    // A target the evacuation could never use would disable the host and move nothing.
    const [aggregates, services] = await Promise.all([
      nova.listAggregates(),
      nova.listServices('nova-compute'),
    ]);
    const known = services.some((x) => x.host === args.target) && services.some((x) => x.host === args.host);
    if (known && !destinationPool(aggregates, services, args.host).has(args.target)) {
      const message = `${args.target} shares no aggregate with ${args.host} (nor its availability zone, when ${args.host} is in no aggregate): the evacuation could not use it`;
      throw new TaskRequestError(409, `target: ${message}`, [
        { path: 'target', message, value: args.target },
      ]);
    }
  }
  for (const [field, name] of [
    ['host', args.host],
    ['target', args.target],
    ...args.lastResort.map((n, i) => [`lastResort[${i}]`, n] as const),
  ] as const) {
    if (name === null) continue;
    const [svc] = await nova.listServices('nova-compute', name);
    const refuse = (status: 404 | 409, message: string): never => {
      throw new TaskRequestError(status, `${field}: ${message}`, [{ path: field, message, value: name }]);
    };
    if (svc === undefined) refuse(404, `no nova-compute service on host ${name}`);
    // A last-resort host may be down or disabled: it is only a preference.
    else if (field !== 'host' && field !== 'target') continue;
    else if (svc.state !== 'up' || svc.forcedDown)
      refuse(
        409,
        field === 'host'
          ? `nova-compute on ${name} is down: migrations need it up (a dead host needs Nova's evacuate, a rebuild elsewhere)`
          : `nova-compute on ${name} is down`,
      );
    else if (field === 'target' && svc.status === 'disabled')
      refuse(409, `${name} is disabled${svc.disabledReason ? ` (${svc.disabledReason})` : ''}`);
  }
}

/** The aggregate whose executor limits the evacuation's live migrations: a configured one first. */
async function executionAggregate(
  ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>,
  host: string,
): Promise<string> {
  const aggs = (await ctx.reader.nova.listAggregates())
    .filter((a) => a.hosts.includes(host))
    .map((a) => a.name);
  return aggs.find((a) => a in ctx.config.aggregates) ?? aggs.sort()[0] ?? '_unassigned_';
}

function liveDeadline(ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>, aggregate: string): Date | null {
  if (ctx.config.tasks.evacuate.emergency) return null;
  const w = windowState(aggregateConfig(ctx.config, aggregate).windows, new Date(ctx.clock.now()));
  if (!w.open)
    throw new TaskWaitError(
      `the maintenance window of ${aggregate} is closed${w.nextOpensAt ? ` until ${w.nextOpensAt.toISOString()}` : ''} (tasks.evacuate.emergency is false)`,
    );
  return w.closesAt;
}

async function executionEnded(deps: EvacuateDeps, executionId: string): Promise<boolean> {
  if (deps.executor.isActive(executionId)) return false;
  const e = await deps.journal.getExecution(executionId);
  return e === null || e.state !== 'running';
}

/**
 * The destinations of the execution's failed moves that are disabled or down now. A maintenance
 * campaign takes its next host out while others drain: a migration Nova had accepted towards it
 * is then refused by the scheduler, and the retry by the pre-flight.
 */
async function unusableDestinations(
  ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>,
  moves: MoveRecord[],
): Promise<Set<string>> {
  const to = new Set(moves.filter((m) => m.state === 'failed').map((m) => m.to));
  if (to.size === 0) return to;
  const services = await ctx.reader.nova.listServices('nova-compute');
  return new Set(
    services
      .filter((s) => to.has(s.host) && (s.status !== 'enabled' || s.state !== 'up' || s.forcedDown))
      .map((s) => s.host),
  );
}

function absorbExecution(
  cp: EvacuateCheckpoint,
  moves: MoveRecord[],
  unusable: ReadonlySet<string>,
): EvacuateCheckpoint {
  const live = [...cp.live];
  const failed = [...cp.failed];
  const secondChance = { ...(cp.secondChance ?? {}) };
  for (const m of moves) {
    if (m.state === 'completed' && !live.some((l) => l.server === m.serverId))
      live.push({ server: m.serverId, name: m.serverName ?? '', to: m.to });
    if (m.state !== 'failed' || failed.some((f) => f.server === m.serverId)) continue;
    // A failed attempt is not tried again live; a skipped one (window, held host) is, and so is
    // one whose destination went out of service meanwhile: that says nothing of the server, and
    // the next round chooses among the destinations usable then. So, once, is one whose retry
    // the pre-flight refused (its destination filled up, say): the executor's retry never
    // reached Nova. Keyed by execution, so reading the same execution again after a restart
    // gives the same answer.
    if (unusable.has(m.to)) continue;
    const given = secondChance[m.serverId];
    if (retryRefused(m) && (given === undefined || given === m.executionId)) {
      secondChance[m.serverId] = m.executionId;
      continue;
    }
    failed.push({
      server: m.serverId,
      name: m.serverName ?? '',
      why: `live migration failed: ${m.detail ?? 'no detail'}`,
    });
  }
  return { ...cp, live, failed, ...(Object.keys(secondChance).length > 0 ? { secondChance } : {}) };
}

/**
 * Largest first (memory, then VCPUs), as the drain check places them: small servers placed first
 * can leave a large one nowhere to go.
 */
function largestFirst(servers: readonly NovaServer[]): NovaServer[] {
  return [...servers].sort(
    (a, b) => b.flavor.ramMB - a.flavor.ramMB || b.flavor.vcpus - a.flavor.vcpus || (a.id < b.id ? -1 : 1),
  );
}

/** Why the evacuation waits for the execution running in its aggregate, naming who runs it. */
function executionWaitReason(aggregate: string, startedBy: string): string {
  const task = /^task:(\d+)$/.exec(startedBy)?.[1];
  const who =
    task !== undefined
      ? `the live migrations of task ${task} run in aggregate ${aggregate}`
      : `the balancer is executing in aggregate ${aggregate}`;
  return `${who}: one execution runs per aggregate at a time, and the evacuation waits for it`;
}

function isFailed(cp: EvacuateCheckpoint, serverId: string): boolean {
  return cp.failed.some((f) => f.server === serverId);
}

/** Why a server cannot go live, or null. */
function liveProblem(s: NovaServer): string | null {
  const reasons = nonMigratableReasons(s.flavor.extraSpecs);
  return reasons.length > 0 ? reasons.join(', ') : null;
}

function whyStuck(s: NovaServer, mayStop: string): string {
  if (s.taskState !== null) return `busy in Nova (task state ${s.taskState})`;
  const live = liveProblem(s);
  if (live !== null && s.status !== 'SHUTOFF')
    return `cannot live-migrate (${live}) and may not be stopped (metadata ${mayStop} is not "true")`;
  if (!LIVE_STATUSES.has(s.status) && s.status !== 'SHUTOFF')
    return `status ${s.status}: Nova moves neither live nor cold`;
  return 'no destination found';
}

async function destinations(
  ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>,
  deps: EvacuateDeps,
  source: string,
  servers: NovaServer[],
): Promise<DestinationChooser> {
  const nova = ctx.reader.nova;
  const [aggregates, services, held, groups] = await Promise.all([
    nova.listAggregates(),
    nova.listServices('nova-compute'),
    deps.locks.list('host/'),
    nova.listServerGroups(true),
  ]);
  const pool = destinationPool(aggregates, services, source);
  const heldHosts = new Set(held.filter((h) => !h.owner.startsWith('executor:')).map((h) => h.name));
  const cloud = new OpenStackExecutorCloud(ctx.reader, requireActuator(ctx, 'evacuate-compute'));
  const candidates: Candidate[] = [];
  for (const svc of services) {
    if (svc.host === source || !pool.has(svc.host)) continue;
    if (svc.status !== 'enabled' || svc.state !== 'up' || svc.forcedDown) continue;
    if (heldHosts.has(hostLockName(svc.host))) continue;
    const room = await cloud.getHostRoom(svc.host);
    if (room !== null) candidates.push({ host: svc.host, room });
  }
  const where = new Map<string, string>();
  for (const s of servers) if (s.host !== null) where.set(s.id, s.host);
  for (const g of groups)
    for (const m of g.members)
      if (!where.has(m)) {
        const other = await nova.getServer(m).catch(() => null);
        if (other?.host) where.set(m, other.host);
      }
  return new DestinationChooser(candidates, groups, where, new Set(ctx.args.lastResort));
}

/** A migration slot from the executor's pool, waiting while every one is taken. */
async function slot(
  ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>,
  deps: EvacuateDeps,
  source: string,
  dest: string,
  aggregate: string,
) {
  for (;;) {
    ctx.signal.throwIfAborted();
    const lease = deps.slots.tryAcquire({ source, dest, aggregate });
    if (lease !== null) return lease;
    await ctx.clock.sleep(deps.pollMs ?? 2_000);
  }
}

/** Follows one cold migration to its end: confirm in VERIFY_RESIZE, done when back on the destination. */
async function followCold(
  ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>,
  cp: EvacuateCheckpoint,
  serverId: string,
  save: (cp: EvacuateCheckpoint) => Promise<void>,
  pollMs: number,
  timeoutMs: number,
): Promise<EvacuateCheckpoint> {
  const nova = ctx.reader.nova;
  const act = requireActuator(ctx, 'evacuate-compute');
  const source = ctx.args.host;
  const end = (next: EvacuateCheckpoint, id: string) => {
    const { [id]: _, ...rest } = next.coldInFlight;
    return { ...next, coldInFlight: rest };
  };
  let current = cp;
  for (;;) {
    const st = current.coldInFlight[serverId];
    if (st === undefined) return current;
    ctx.signal.throwIfAborted();
    const s = await nova.getServer(serverId).catch((err: unknown) => {
      if (err instanceof CloudError && err.status === 404) return null;
      throw err;
    });
    const name = s?.name ?? '';
    if (s === null) {
      current = end(
        {
          ...current,
          failed: [...current.failed, { server: serverId, name, why: 'deleted while being moved' }],
        },
        serverId,
      );
      await save(current);
      return current;
    }
    if (s.status === 'VERIFY_RESIZE' && st.state === 'asked') {
      await act.confirmResize(serverId);
      await ctx.audit.record('confirm-resize', `server:${serverId}`, { on: s.host });
      current = {
        ...current,
        coldInFlight: { ...current.coldInFlight, [serverId]: { ...st, state: 'confirming' } },
      };
      await save(current);
    } else if (
      (s.status === 'ACTIVE' || s.status === 'SHUTOFF') &&
      s.taskState === null &&
      s.host !== source
    ) {
      current = end(
        { ...current, cold: [...current.cold, { server: serverId, name, to: s.host ?? st.to }] },
        serverId,
      );
      await save(current);
      return current;
    } else if (
      s.status === 'ERROR' ||
      ((s.status === 'ACTIVE' || s.status === 'SHUTOFF') &&
        s.taskState === null &&
        ctx.clock.now() - st.at > 5 * pollMs)
    ) {
      // Back idle on the source (Nova gave up and rolled back) or in ERROR.
      const why = s.fault ?? `Nova left it ${s.status} on ${s.host ?? 'no host'}`;
      current = end(
        {
          ...current,
          failed: [...current.failed, { server: serverId, name, why: `cold migration failed: ${why}` }],
        },
        serverId,
      );
      await save(current);
      return current;
    }
    if (ctx.clock.now() - st.at > timeoutMs) {
      current = end(
        {
          ...current,
          failed: [
            ...current.failed,
            {
              server: serverId,
              name,
              why: `cold migration not finished after ${Math.round(timeoutMs / 1000)} s (status ${s.status})`,
            },
          ],
        },
        serverId,
      );
      await save(current);
      return current;
    }
    await ctx.clock.sleep(pollMs);
  }
}

async function progress(
  ctx: TaskContext<EvacuateArgs, EvacuateCheckpoint>,
  cp: EvacuateCheckpoint,
  detail: string,
): Promise<void> {
  await ctx.progress({ done: cp.live.length + cp.cold.length, total: null, detail });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
