// One execution of one aggregate's moves: starts moves in wave order and after their
// dependencies as slots allow, drives each through pre-flight, os-migrateLive, following,
// abort and retry, and writes every step to the journal before and after each call to Nova.
// A run that starts on an execution left unfinished (a restart) first resolves each move from
// Nova's records and never sends a call again without knowing the previous one did nothing.
import { type Logger, silentLogger } from '../cloud/log.js';
import { findAttemptMigration, isFinalMigration, judge, type Outcome } from './attempt.js';
import {
  type ExecutionJournal,
  type ExecutionRecord,
  FINAL_MOVE_STATES,
  MOVE_STATES,
  type MoveRecord,
  type MoveState,
  type MoveTransition,
  type PlannedMove,
} from './journal.js';
import { applyTransition } from './memory-journal.js';
import {
  ActuatorError,
  type AuditAction,
  type AuditSink,
  type Clock,
  type CooldownSink,
  type CostSampleSink,
  type ExecutorCloud,
  type LiveMigrationView,
  type QuarantineSink,
  type ServerView,
} from './ports.js';
import { preflight } from './preflight.js';
import { backoffSeconds, type ExecutorSettings } from './settings.js';
import type { MigrationSlots, SlotLease } from './slots.js';

export interface ExecutorDeps {
  journal: ExecutionJournal;
  cloud: ExecutorCloud;
  clock: Clock;
  settings: ExecutorSettings;
  /** Shared by every execution of the process, so global and per-host limits hold across them. */
  slots: MigrationSlots;
  /** Seconds a move may run before it is aborted (learned duration x margin, within floor and ceiling). */
  timeoutFor: (move: PlannedMove) => number;
  quarantine?: QuarantineSink;
  costs?: CostSampleSink;
  /** Every completed move starts its server's cooldown. */
  cooldowns?: CooldownSink;
  audit?: AuditSink;
  logger?: Logger;
}

export interface RunWindow {
  /** When the maintenance window ends (epoch ms, the injected clock's); null: no end. */
  deadline: number | null;
  /** A pause: no new migration starts; those in flight finish or are aborted (settings.onStop). */
  shouldStop: () => boolean;
}

export interface RunCounters {
  /** Reads of Nova or Placement that failed and were asked again later. */
  readErrors: number;
  /** Calls whose answer was lost and that Nova's records showed never arrived, sent again. */
  resends: number;
  /** Calls whose answer was lost, resolved from Nova's records. */
  unknownOutcomes: number;
  /** DELETE requests sent to abort a migration. */
  abortRequests: number;
  /** Moves found unfinished at start and resolved from Nova. */
  reconciled: number;
}

export interface ExecutionSummary {
  executionId: string;
  state: 'finished' | 'aborted';
  counts: Record<MoveState, number>;
  moves: MoveRecord[];
  counters: RunCounters;
}

/** Thrown inside a move's driver when the journal refused a compare-and-set. */
class JournalRace extends Error {}

type AbortKind = 'timeout' | 'window' | 'stop';

/** What a move's driver knows about the current attempt that the journal does not hold. */
interface AttemptContext {
  /** Nova answered 202 to our os-migrateLive. */
  accepted: boolean;
  /** Sends whose answer was lost and that Nova never saw. */
  resends: number;
  /** The driver started on a move found unfinished (after a restart). */
  resumed: boolean;
  abortKind: AbortKind | null;
  abortWhy: string | null;
  lastAbortSentAt: number | null;
  /** An anomaly is only believed when two reads in a row show it. */
  anomalySeen: string | null;
  /** Amounts the destination will hold for this move; null when not read. */
  need: Record<string, number> | null;
}

const ABORTABLE = new Set(['running', 'queued', 'preparing']);

function emptyCounts(): Record<MoveState, number> {
  return Object.fromEntries(MOVE_STATES.map((s) => [s, 0])) as Record<MoveState, number>;
}

export class ExecutionRun {
  private readonly moves = new Map<number, MoveRecord>();
  private readonly tasks = new Map<number, Promise<void>>();
  private readonly nextTryAt = new Map<number, number>();
  /** Per destination: what moves we started will claim there once Nova schedules them. */
  private readonly coming = new Map<string, Map<number, Record<string, number>>>();
  private readonly counters: RunCounters = {
    readErrors: 0,
    resends: 0,
    unknownOutcomes: 0,
    abortRequests: 0,
    reconciled: 0,
  };
  private readonly destLocks = new Map<string, Promise<void>>();
  private fatal: unknown = null;
  private wake: () => void = () => {};
  private readonly log: Logger;

  constructor(
    private readonly deps: ExecutorDeps,
    private readonly execution: ExecutionRecord,
    private readonly window: RunWindow,
  ) {
    this.log = deps.logger ?? silentLogger;
  }

  get aggregate(): string {
    return this.execution.aggregate;
  }

  /** Servers with a migration of this run in flight, and the hosts on both ends. */
  inFlight(): { servers: string[]; hosts: string[] } {
    const servers: string[] = [];
    const hosts: string[] = [];
    for (const step of this.tasks.keys()) {
      const m = this.moves.get(step);
      if (!m) continue;
      servers.push(m.serverId);
      hosts.push(m.from, m.to);
    }
    return { servers, hosts };
  }

  async run(): Promise<ExecutionSummary> {
    const { clock, slots } = this.deps;
    for (const m of await this.deps.journal.listMoves(this.execution.id)) this.moves.set(m.step, m);
    // Moves caught between calls by a restart: resolve them from Nova before anything new starts.
    for (const rec of this.moves.values()) {
      if (FINAL_MOVE_STATES.includes(rec.state)) continue;
      if (rec.state === 'pending') {
        // A failed attempt was waiting for its retry: wait a full backoff from now.
        if (rec.issuedAt !== null) {
          this.nextTryAt.set(
            rec.step,
            clock.now() + backoffSeconds(rec.attempt, this.deps.settings.retry) * 1000,
          );
        }
        continue;
      }
      this.counters.reconciled++;
      await this.audit('reconciled', rec, `found ${rec.state} (attempt ${rec.attempt}) at start`);
      const lease = slots.adopt(this.slotRequest(rec));
      this.launch(rec.step, lease, true);
    }
    let ended: 'finished' | 'aborted' = 'finished';
    for (;;) {
      if (this.fatal) break;
      const now = clock.now();
      const windowOver = this.window.deadline !== null && now >= this.window.deadline;
      const stopping = this.window.shouldStop();
      if (windowOver || stopping) {
        ended = 'aborted';
        const why = windowOver ? 'the maintenance window ended' : 'paused';
        for (const rec of this.moves.values()) {
          if (rec.state === 'pending' && !this.tasks.has(rec.step)) {
            await this.endPending(rec, `${why} before it started`);
          }
        }
        if (this.tasks.size === 0) break;
      } else {
        await this.startEligible(now);
        if (
          this.tasks.size === 0 &&
          [...this.moves.values()].every((m) => FINAL_MOVE_STATES.includes(m.state))
        ) {
          break;
        }
      }
      await Promise.race([
        new Promise<void>((resolve) => {
          this.wake = resolve;
        }),
        clock.sleep(this.deps.settings.pollSeconds * 1000),
      ]);
    }
    await Promise.allSettled([...this.tasks.values()]);
    if (this.fatal) throw this.fatal;
    await this.deps.journal.finishExecution(this.execution.id, ended, this.iso());
    await this.audit('execution-ended', null, ended);
    const moves = [...this.moves.values()].sort((a, b) => a.step - b.step);
    const counts = emptyCounts();
    for (const m of moves) counts[m.state]++;
    return { executionId: this.execution.id, state: ended, counts, moves, counters: { ...this.counters } };
  }

  // ---- choosing what starts

  private async startEligible(now: number): Promise<void> {
    const open = [...this.moves.values()].filter((m) => !FINAL_MOVE_STATES.includes(m.state));
    const firstOpenWave = Math.min(...open.map((m) => m.wave));
    for (const rec of [...this.moves.values()].sort((a, b) => a.step - b.step)) {
      if (rec.state !== 'pending' || this.tasks.has(rec.step)) continue;
      // The plan's capacity reasoning holds wave by wave: a later wave waits for the earlier ones.
      if (rec.wave > firstOpenWave) continue;
      if ((this.nextTryAt.get(rec.step) ?? 0) > now) continue;
      const blocking = this.unmetDependency(rec);
      if (blocking === 'wait') continue;
      if (blocking !== null) {
        await this.endPending(rec, blocking);
        continue;
      }
      const deadline = this.window.deadline;
      if (deadline !== null && now + rec.estimatedSeconds * 1000 > deadline) {
        await this.endPending(
          rec,
          `does not fit in what is left of the window (≈${Math.round(rec.estimatedSeconds)} s needed, ${Math.max(0, Math.round((deadline - now) / 1000))} s left)`,
        );
        continue;
      }
      const lease = this.deps.slots.tryAcquire(this.slotRequest(rec));
      if (!lease) continue;
      this.launch(rec.step, lease, false);
    }
  }

  /** null: every `after` step completed; 'wait': one is still open; else why the move cannot run. */
  private unmetDependency(rec: MoveRecord): string | null | 'wait' {
    for (const s of rec.after ?? []) {
      const dep = this.moves.get(s);
      if (!dep) continue;
      if (!FINAL_MOVE_STATES.includes(dep.state)) return 'wait';
      if (dep.state !== 'completed') return `step ${s}, whose room it needs, ended ${dep.state}`;
    }
    return null;
  }

  private slotRequest(rec: MoveRecord) {
    return { source: rec.from, dest: rec.to, aggregate: this.execution.aggregate };
  }

  private launch(step: number, lease: SlotLease, resumed: boolean): void {
    const task = this.drive(step, resumed)
      .catch((e: unknown) => {
        if (e instanceof JournalRace) return;
        this.fatal ??= e;
      })
      .finally(() => {
        this.deps.slots.release(lease);
        for (const byStep of this.coming.values()) byStep.delete(step);
        this.tasks.delete(step);
        this.wake();
      });
    this.tasks.set(step, task);
  }

  // ---- one move

  private async drive(step: number, resumed: boolean): Promise<void> {
    const ctx: AttemptContext = {
      accepted: false,
      resends: 0,
      resumed,
      abortKind: null,
      abortWhy: null,
      lastAbortSentAt: null,
      anomalySeen: null,
      need: null,
    };
    let started = false;
    for (;;) {
      const rec = this.move(step);
      switch (rec.state) {
        case 'pending':
          // One attempt per driver: after a failure the move waits for its retry in the loop.
          if (started || resumed) return;
          started = true;
          if (!(await this.startAttempt(rec, ctx))) return;
          break;
        case 'issuing':
          await this.resolveIssuing(rec, ctx);
          break;
        case 'migrating':
          await this.follow(rec, ctx);
          break;
        case 'aborting':
          await this.finishAbort(rec, ctx);
          break;
        default:
          return;
      }
    }
  }

  /** Pre-flight, then the intent, then the call. false: nothing was started. */
  private async startAttempt(rec: MoveRecord, ctx: AttemptContext): Promise<boolean> {
    const retryLater = () => {
      this.nextTryAt.set(rec.step, this.deps.clock.now() + this.deps.settings.pollSeconds * 1000);
      return false;
    };
    // One pre-flight per destination at a time, its claim noted before the next one reads room.
    const release = await this.lockDestination(rec.to);
    let pf: Awaited<ReturnType<typeof preflight>>;
    try {
      pf = await preflight(this.deps.cloud, rec, this.comingTo(rec.to));
      if (pf.ok) this.setComing(rec, pf.need);
    } catch (e) {
      this.readFailed('pre-flight', rec, e);
      return retryLater();
    } finally {
      release();
    }
    if (!pf.ok && pf.wait) return retryLater();
    if (!pf.ok) {
      await this.audit('preflight-refused', rec, pf.reason);
      if (rec.issuedAt === null) {
        await this.transition(rec, 'pending', { state: 'skipped', detail: `pre-flight: ${pf.reason}` });
      } else {
        await this.transition(rec, 'pending', {
          state: 'failed',
          detail: `${rec.detail ?? `attempt ${rec.attempt} failed`}; retry refused by pre-flight: ${pf.reason}`,
        });
      }
      if (pf.serverFault !== null) await this.quarantine(rec, `pre-flight: ${pf.reason}`, pf.serverFault);
      return false;
    }
    if (this.window.shouldStop() || this.abortReason(rec)?.kind === 'window') {
      // The window closed or a pause came while we read: leave the move to the loop.
      this.dropComing(rec.step);
      return false;
    }
    ctx.need = pf.need;
    const attempt = rec.issuedAt === null ? undefined : rec.attempt + 1;
    const issuing = await this.transition(rec, 'pending', {
      state: 'issuing',
      // A new attempt keeps the previous attempt's migration id while it is issuing: the record
      // our call starts is newer than that one (findAttemptMigration).
      ...(attempt !== undefined ? { attempt, novaMigrationId: rec.novaMigrationId } : {}),
      detail: `attempt ${attempt ?? rec.attempt}: live migration ${rec.from} -> ${rec.to} asked`,
    });
    await this.send(issuing, ctx);
    return true;
  }

  /** os-migrateLive. A refusal fails the attempt; a lost answer is resolved from Nova's records. */
  private async send(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    if (ctx.need) this.setComing(rec, ctx.need);
    try {
      await this.deps.cloud.liveMigrate(rec.serverId, rec.to);
      ctx.accepted = true;
      await this.audit('live-migrate', rec, `os-migrateLive to ${rec.to} accepted (attempt ${rec.attempt})`);
    } catch (e) {
      const err = e instanceof ActuatorError ? e : new ActuatorError('unknown', String(e));
      if (err.kind === 'unknown') {
        this.counters.unknownOutcomes++;
        await this.audit('live-migrate', rec, `os-migrateLive answer lost: ${err.message}`);
        return;
      }
      this.dropComing(rec.step);
      await this.audit('live-migrate', rec, `os-migrateLive refused: ${err.message}`);
      await this.attemptFailed(rec, `Nova refused the live migration: ${err.message}`, err.message, 'retry');
    }
  }

  /**
   * The intent is stored; did Nova start a migration? Decides once (migrating, a failed attempt,
   * back to pending, or one more send) and returns; never sends again before knowing the
   * previous send did nothing.
   */
  private async resolveIssuing(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    const { clock, settings } = this.deps;
    const issuedAt = rec.issuedAt === null ? clock.now() : Date.parse(rec.issuedAt);
    if (!ctx.accepted) {
      // A request still travelling must land before its absence from Nova's records means anything.
      const settleUntil = issuedAt + settings.settleSeconds * 1000;
      if (clock.now() < settleUntil) await clock.sleep(settleUntil - clock.now());
    }
    for (;;) {
      const read = await this.readServerAndMigrations(rec);
      if (!read) {
        await clock.sleep(settings.pollSeconds * 1000);
        continue;
      }
      const { server, migrations } = read;
      const found = findAttemptMigration(rec, migrations, settings.clockSkewSeconds * 1000);
      // Nova clears the task state before it ends the record: a final record beside a server
      // still in a task state is an older one, and ours has not shown up yet.
      const older = found && isFinalMigration(found.status) && server?.taskState != null;
      if (found && !older) {
        await this.transition(rec, 'issuing', {
          state: 'migrating',
          novaMigrationId: found.id,
          detail: `attempt ${rec.attempt}: Nova migration ${found.id} (${found.status})`,
        });
        await this.audit('migration-found', rec, `Nova migration ${found.id} is ${found.status}`);
        return;
      }
      if (!server) {
        this.dropComing(rec.step);
        const nothingEverSent = !ctx.accepted && rec.attempt === 1;
        await this.transition(rec, 'issuing', {
          state: nothingEverSent ? 'skipped' : 'failed',
          detail: `server ${rec.serverId} no longer exists`,
        });
        return;
      }
      const waited = clock.now() - issuedAt;
      if (server.taskState !== null || ctx.accepted) {
        // Nova took the call (the API sets the task state before it answers); the conductor
        // writes the migration record a moment later.
        if (waited <= settings.recordWaitSeconds * 1000) {
          await clock.sleep(settings.pollSeconds * 1000);
          continue;
        }
        const why =
          server.taskState !== null
            ? `server stuck in task state ${server.taskState} with no migration record after ${Math.round(waited / 1000)} s`
            : `Nova accepted the call but shows no migration record after ${Math.round(waited / 1000)} s`;
        await this.attemptFailed(rec, why, why, server.taskState !== null ? 'quarantine' : 'retry');
        return;
      }
      // An idle server and no record: the call never reached Nova.
      this.dropComing(rec.step);
      if (ctx.resumed) {
        await this.transition(rec, 'issuing', {
          state: 'pending',
          detail: `attempt ${rec.attempt} never reached Nova (found on restart); pre-flight again`,
        });
        await this.audit('reconciled', rec, 'the interrupted call never reached Nova: back to pending');
        return;
      }
      ctx.resends++;
      if (ctx.resends > settings.maxResends) {
        await this.attemptFailed(
          rec,
          `os-migrateLive never reached Nova in ${settings.maxResends} sends`,
          null,
          'retry',
        );
        return;
      }
      if (this.window.shouldStop() || this.abortReason(rec)?.kind === 'window') {
        await this.transition(rec, 'issuing', {
          state: rec.attempt === 1 ? 'skipped' : 'failed',
          detail: `attempt ${rec.attempt} never reached Nova, and the window ended or a pause came before another send`,
        });
        return;
      }
      this.counters.resends++;
      const again = await this.transition(rec, 'issuing', {
        state: 'issuing',
        detail: `attempt ${rec.attempt}: send ${ctx.resends + 1} (the previous one never reached Nova)`,
      });
      await this.send(again, ctx);
      return;
    }
  }

  private async follow(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    const { clock, settings } = this.deps;
    for (;;) {
      const abort = this.abortReason(rec);
      if (abort) {
        ctx.abortKind = abort.kind;
        ctx.abortWhy = abort.why;
        await this.transition(rec, 'migrating', {
          state: 'aborting',
          detail: `attempt ${rec.attempt}: aborting migration ${rec.novaMigrationId ?? '?'}: ${abort.why}`,
        });
        return;
      }
      const read = await this.readServerAndMigrations(rec);
      const m = read ? this.currentMigration(rec, read.migrations) : undefined;
      if (read && m) {
        if (rec.novaMigrationId === null) {
          rec = await this.transition(rec, 'migrating', { state: 'migrating', novaMigrationId: m.id });
        }
        if (m.status !== 'accepted') this.dropComing(rec.step);
        const outcome = judge(rec, read.server, m);
        if (await this.settle(rec, ctx, m, outcome, null)) return;
      }
      await clock.sleep(settings.pollSeconds * 1000);
    }
  }

  private async finishAbort(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    const { clock, settings, cloud } = this.deps;
    const why = ctx.abortWhy ?? rec.detail ?? 'abort requested before a restart';
    for (;;) {
      const read = await this.readServerAndMigrations(rec);
      const m = read ? this.currentMigration(rec, read.migrations) : undefined;
      if (read && m) {
        const outcome = judge(rec, read.server, m);
        if (await this.settle(rec, ctx, m, outcome, why)) return;
        const now = clock.now();
        const resendAfter = settings.pollSeconds * 5 * 1000;
        if (
          ABORTABLE.has(m.status) &&
          (ctx.lastAbortSentAt === null || now - ctx.lastAbortSentAt >= resendAfter)
        ) {
          ctx.lastAbortSentAt = now;
          this.counters.abortRequests++;
          try {
            await cloud.abortLiveMigration(rec.serverId, m.id);
            await this.audit('abort', rec, `DELETE migration ${m.id} (${m.status}) accepted: ${why}`);
          } catch (e) {
            // Not abortable in this state, or the answer was lost: the next reads tell.
            await this.audit(
              'abort',
              rec,
              `DELETE migration ${m.id}: ${e instanceof Error ? e.message : String(e)}`,
            );
          }
        }
      }
      await clock.sleep(settings.pollSeconds * 1000);
    }
  }

  /** Ends the attempt when Nova's records say it ended; false while it runs. */
  private async settle(
    rec: MoveRecord,
    ctx: AttemptContext,
    m: LiveMigrationView,
    outcome: Outcome,
    abortWhy: string | null,
  ): Promise<boolean> {
    const from = rec.state;
    if (outcome.kind === 'running') {
      ctx.anomalySeen = null;
      return false;
    }
    if (outcome.kind === 'completed') {
      const seconds = m.updatedAt !== null ? Math.max(0, (m.updatedAt - m.createdAt) / 1000) : null;
      const raced = abortWhy ? `; abort requested (${abortWhy}) but the migration completed first` : '';
      await this.transition(rec, from, {
        state: 'completed',
        detail: `attempt ${rec.attempt}: migration ${m.id} completed${seconds !== null ? ` in ${seconds.toFixed(1)} s` : ''}${raced}`,
      });
      await this.audit('move-completed', rec, `on ${rec.to}, migration ${m.id}${raced}`);
      await this.deps.cooldowns?.recordMove({
        serverId: rec.serverId,
        aggregate: this.execution.aggregate,
        lastMovedAt: this.iso(),
        from: rec.from,
        to: rec.to,
      });
      if (seconds !== null && this.deps.costs) {
        await this.deps.costs.record({
          serverId: rec.serverId,
          aggregate: this.execution.aggregate,
          source: rec.from,
          dest: rec.to,
          novaMigrationId: m.id,
          ramMB: ctx.need?.MEMORY_MB ?? null,
          seconds,
          at: this.iso(),
        });
      }
      return true;
    }
    if (outcome.kind === 'anomaly') {
      if (ctx.anomalySeen !== outcome.detail) {
        ctx.anomalySeen = outcome.detail;
        return false;
      }
      await this.attemptFailed(rec, outcome.detail, outcome.fault, 'quarantine');
      return true;
    }
    // Failed or cancelled, the server idle on its source.
    if (abortWhy) {
      const kind = ctx.abortKind;
      const detail = `aborted (${abortWhy}); the server stayed on ${rec.from} (migration ${m.id} ${outcome.status})`;
      await this.attemptFailed(rec, detail, outcome.fault, kind === 'timeout' ? 'retry' : 'final');
      return true;
    }
    await this.attemptFailed(
      rec,
      `migration ${m.id} ended ${outcome.status}; the server stayed on ${rec.from}`,
      outcome.fault ?? `migration ${m.id} ${outcome.status}`,
      'retry',
    );
    return true;
  }

  /**
   * An attempt failed. 'retry': another try after a backoff if attempts remain (else the server
   * is quarantined); 'final': no retry, no quarantine (window end, pause); 'quarantine': no
   * retry, quarantined (the server is somewhere nobody planned, or stuck).
   */
  private async attemptFailed(
    rec: MoveRecord,
    detail: string,
    novaFault: string | null,
    policy: 'retry' | 'final' | 'quarantine',
  ): Promise<void> {
    const { clock, settings } = this.deps;
    const from = rec.state;
    const now = clock.now();
    const wait = backoffSeconds(rec.attempt, settings.retry) * 1000;
    const attemptsLeft = rec.attempt < settings.retry.attempts;
    const timeLeft =
      this.window.deadline === null || now + wait + rec.estimatedSeconds * 1000 <= this.window.deadline;
    this.dropComing(rec.step);
    if (policy === 'retry' && attemptsLeft && timeLeft && !this.window.shouldStop()) {
      await this.transition(rec, from, {
        state: 'pending',
        detail: `attempt ${rec.attempt} failed: ${detail}; next try in ${Math.round(wait / 1000)} s`,
      });
      this.nextTryAt.set(rec.step, now + wait);
      await this.audit('retry-scheduled', rec, `attempt ${rec.attempt} failed: ${detail}`);
      return;
    }
    const quarantined = policy === 'quarantine' || (policy === 'retry' && !attemptsLeft);
    const why =
      policy === 'retry' && attemptsLeft
        ? timeLeft
          ? '; paused, no retry'
          : '; no time left in the window for a retry'
        : '';
    await this.transition(rec, from, {
      state: 'failed',
      detail: `attempt ${rec.attempt} failed: ${detail}${why}${quarantined ? '; server quarantined' : ''}`,
    });
    await this.audit('move-failed', rec, detail);
    if (quarantined) {
      const reason =
        policy === 'quarantine' ? detail : `${rec.attempt} attempt(s) failed; the last: ${detail}`;
      await this.quarantine(rec, reason, novaFault);
    }
  }

  private abortReason(rec: MoveRecord): { kind: AbortKind; why: string } | null {
    const now = this.deps.clock.now();
    if (this.window.deadline !== null && now >= this.window.deadline) {
      return { kind: 'window', why: 'the maintenance window ended' };
    }
    if (this.deps.settings.onStop === 'abort' && this.window.shouldStop()) {
      return { kind: 'stop', why: 'paused, with in-flight migrations set to abort' };
    }
    const limit = this.deps.timeoutFor(rec);
    const started = rec.issuedAt === null ? now : Date.parse(rec.issuedAt);
    if (now - started > limit * 1000) {
      return { kind: 'timeout', why: `timed out after ${Math.round(limit)} s` };
    }
    return null;
  }

  // ---- reading Nova

  private async readServerAndMigrations(
    rec: MoveRecord,
  ): Promise<{ server: ServerView | null; migrations: LiveMigrationView[] } | null> {
    try {
      // Records first, server second: a call landing between the two shows as a task state.
      const migrations = await this.deps.cloud.listLiveMigrations(rec.serverId);
      const server = await this.deps.cloud.getServer(rec.serverId);
      return { server, migrations };
    } catch (e) {
      this.readFailed('follow', rec, e);
      return null;
    }
  }

  private currentMigration(rec: MoveRecord, migrations: LiveMigrationView[]): LiveMigrationView | undefined {
    return findAttemptMigration(rec, migrations, this.deps.settings.clockSkewSeconds * 1000);
  }

  private readFailed(what: string, rec: MoveRecord, e: unknown): void {
    this.counters.readErrors++;
    this.log.debug(`executor: ${what} read failed, asking again later`, {
      execution: this.execution.id,
      step: rec.step,
      error: e instanceof Error ? e.message : String(e),
    });
  }

  // ---- bookkeeping

  private move(step: number): MoveRecord {
    const m = this.moves.get(step);
    if (!m) throw new Error(`execution ${this.execution.id}: no step ${step}`);
    return m;
  }

  private async transition(
    rec: MoveRecord,
    from: MoveState,
    next: Omit<MoveTransition, 'at'>,
  ): Promise<MoveRecord> {
    const full: MoveTransition = { ...next, at: this.iso() };
    const ok = await this.deps.journal.transitionMove(this.execution.id, rec.step, from, full);
    if (!ok) {
      const stored = (await this.deps.journal.listMoves(this.execution.id)).find((m) => m.step === rec.step);
      if (stored) this.moves.set(rec.step, stored);
      this.log.warn('executor: the journal changed a move under us; leaving it alone', {
        execution: this.execution.id,
        step: rec.step,
        expected: from,
        found: stored?.state,
      });
      throw new JournalRace(`step ${rec.step}: expected ${from}, found ${stored?.state}`);
    }
    const updated = applyTransition(this.move(rec.step), full);
    this.moves.set(rec.step, updated);
    return updated;
  }

  /** Ends a move that never started this attempt: skipped if nothing was ever sent, else failed. */
  private async endPending(rec: MoveRecord, why: string): Promise<void> {
    try {
      await this.transition(rec, 'pending', {
        state: rec.issuedAt === null ? 'skipped' : 'failed',
        detail: rec.issuedAt === null ? why : `${rec.detail ?? `attempt ${rec.attempt} failed`}; ${why}`,
      });
    } catch (e) {
      if (!(e instanceof JournalRace)) throw e;
    }
  }

  private async lockDestination(host: string): Promise<() => void> {
    const before = this.destLocks.get(host) ?? Promise.resolve();
    let release: () => void = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chained = before.then(() => mine);
    this.destLocks.set(host, chained);
    await before;
    return () => {
      release();
      if (this.destLocks.get(host) === chained) this.destLocks.delete(host);
    };
  }

  private comingTo(host: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const need of this.coming.get(host)?.values() ?? []) {
      for (const [rc, n] of Object.entries(need)) out[rc] = (out[rc] ?? 0) + n;
    }
    return out;
  }

  private setComing(rec: MoveRecord, need: Record<string, number>): void {
    let byStep = this.coming.get(rec.to);
    if (!byStep) {
      byStep = new Map();
      this.coming.set(rec.to, byStep);
    }
    byStep.set(rec.step, need);
  }

  private dropComing(step: number): void {
    for (const byStep of this.coming.values()) byStep.delete(step);
  }

  private async quarantine(rec: MoveRecord, reason: string, novaFault: string | null): Promise<void> {
    await this.deps.quarantine?.quarantine({
      serverId: rec.serverId,
      ...(rec.serverName !== undefined ? { serverName: rec.serverName } : {}),
      aggregate: this.execution.aggregate,
      executionId: this.execution.id,
      step: rec.step,
      at: this.iso(),
      reason,
      attempts: rec.issuedAt === null ? 0 : rec.attempt,
      novaFault,
    });
    await this.audit('quarantined', rec, reason);
  }

  private async audit(action: AuditAction, rec: MoveRecord | null, detail: string): Promise<void> {
    await this.deps.audit?.record({
      at: this.iso(),
      actor: this.execution.startedBy,
      action,
      executionId: this.execution.id,
      step: rec?.step ?? null,
      serverId: rec?.serverId ?? null,
      detail,
    });
  }

  private iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
