// One execution of one aggregate's moves: starts moves in wave order and after their
// dependencies as slots allow, each in its own driver (move-driver.ts), and ends the execution
// when every move is final or the window ends. A run that starts on an execution left unfinished
// (a restart) first resolves each move from Nova's records (the drivers never send a call again
// without knowing the previous one did nothing).

import { ExecutionHostLocks, type MoveHostLocks } from './host-locks.js';
import {
  type ExecutionRecord,
  FINAL_MOVE_STATES,
  MOVE_STATES,
  type MoveRecord,
  type MoveState,
  QUARANTINED,
} from './journal.js';
import { MoveDriver } from './move-driver.js';
import {
  abortKindOf,
  type ExecutorDeps,
  JournalRace,
  OwnershipLost,
  RunBook,
  type RunCounters,
  type RunWindow,
} from './run-book.js';
import { backoffSeconds } from './settings.js';
import type { SlotLease } from './slots.js';

/** How long before its source's migration is expected to end a waiting move pre-reads, in polls. */
const PREREAD_LEAD_POLLS = 0.25;
/** Stale pre-reads after which a run stops pre-reading unless at least three times as many were used. */
const PREREAD_GIVE_UP_AFTER = 5;

export type { ExecutorDeps, RunCounters, RunWindow } from './run-book.js';

export interface ExecutionSummary {
  executionId: string;
  /** 'handed-over': this process stopped owning the aggregate; the execution runs on elsewhere. */
  state: 'finished' | 'aborted' | 'handed-over';
  counts: Record<MoveState, number>;
  moves: MoveRecord[];
  counters: RunCounters;
}

function emptyCounts(): Record<MoveState, number> {
  return Object.fromEntries(MOVE_STATES.map((s) => [s, 0])) as Record<MoveState, number>;
}

export class ExecutionRun {
  private readonly book: RunBook;
  private readonly driver: MoveDriver;
  private readonly tasks = new Map<number, Promise<void>>();
  private fatal: unknown = null;
  /** Wakes the loop from its wait; between two waits it marks the turn to be run again. */
  private wake: () => void = () => {
    this.woken = true;
  };
  private woken = false;
  /** The moves' steps in order (the set of moves never changes once loaded). */
  private stepOrder: number[] | null = null;
  /** null: no lock service (single process, no tasks). */
  private readonly hostLocks: ExecutionHostLocks | null;
  /** The highest wave whose gain was judged: the first by whoever started or resumed the run. */
  private checkedWave: number | null = null;
  /** Pre-reads asked (one per attempt of a move) and those still reading. */
  private readonly prereadAsked = new Set<string>();
  private readonly prereading = new Set<Promise<void>>();
  /** When the next pre-read is due; the loop wakes for it. */
  private nextPrereadAt: number | null = null;

  constructor(deps: ExecutorDeps, execution: ExecutionRecord, window: RunWindow) {
    this.book = new RunBook(deps, execution, window);
    this.driver = new MoveDriver(this.book);
    this.hostLocks =
      deps.hostLocks === undefined
        ? null
        : new ExecutionHostLocks(deps.hostLocks, window.ownHosts ?? new Set(), `executor:${execution.id}`, {
            ...(deps.hostLockTtlMs !== undefined ? { ttlMs: deps.hostLockTtlMs } : {}),
            ...(window.fence !== undefined ? { epoch: window.fence } : {}),
          });
  }

  get aggregate(): string {
    return this.book.execution.aggregate;
  }

  /** Servers with a migration of this run in flight, and the hosts on both ends. */
  inFlight(): { servers: string[]; hosts: string[] } {
    const servers: string[] = [];
    const hosts: string[] = [];
    for (const step of this.tasks.keys()) {
      const m = this.book.moves.get(step);
      if (!m) continue;
      servers.push(m.serverId);
      hosts.push(m.from, m.to);
    }
    return { servers, hosts };
  }

  async run(): Promise<ExecutionSummary> {
    const { clock, slots } = this.book.deps;
    for (const m of await this.book.deps.journal.listMoves(this.book.execution.id))
      this.book.moves.set(m.step, m);
    // Moves caught between calls by a restart: resolve them from Nova before anything new starts.
    for (const rec of this.book.moves.values()) {
      if (FINAL_MOVE_STATES.includes(rec.state)) continue;
      if (rec.state === 'pending') {
        // A failed attempt was waiting for its retry: wait a full backoff from now.
        if (rec.issuedAt !== null) {
          this.book.nextTryAt.set(
            rec.step,
            clock.now() + backoffSeconds(rec.attempt, this.book.deps.settings.retry) * 1000,
          );
        }
        continue;
      }
      this.book.counters.reconciled++;
      await this.book.audit('reconciled', rec, `found ${rec.state} (attempt ${rec.attempt}) at start`);
      // Killed while aborting for an operator, a pause or the window: the abort goes on, nothing
      // new starts, and the execution ends aborted, as it would have without the restart.
      if (rec.state === 'aborting' && abortKindOf(rec.detail) !== 'timeout')
        this.book.resumedAbort ??= `aborted before a restart (${rec.detail ?? 'no detail'})`;
      const lease = slots.adopt(this.slotRequest(rec));
      // Already running in Nova: it goes on whoever holds the hosts; the locks are taken if free.
      const locked = await this.lockHosts(rec);
      this.launch(rec.step, lease, true, locked.ok ? locked.hosts : []);
    }
    let ended: 'finished' | 'aborted' = 'finished';
    let handedOver = false;
    for (;;) {
      if (this.fatal) break;
      if (!this.stillOwned()) {
        handedOver = true;
        break;
      }
      const now = clock.now();
      const windowOver = this.book.window.deadline !== null && now >= this.book.window.deadline;
      const stopping = this.book.stopRequested();
      if (windowOver || stopping) {
        ended = 'aborted';
        const why = windowOver ? 'the maintenance window ended' : (this.book.aborted() ?? 'paused');
        for (const rec of this.book.moves.values()) {
          if (rec.state === 'pending' && !this.tasks.has(rec.step)) {
            await this.book.endPending(rec, `${why} before it started`);
          }
        }
        if (this.tasks.size === 0) break;
      } else {
        await this.startEligible(now);
        if (
          this.tasks.size === 0 &&
          [...this.book.moves.values()].every((m) => FINAL_MOVE_STATES.includes(m.state))
        ) {
          break;
        }
      }
      // A move that ended while this turn ran has freed its slot already: go round again now
      // rather than at the next poll.
      if (this.woken) {
        this.woken = false;
        continue;
      }
      const pollMs = this.book.deps.settings.pollSeconds * 1000;
      await Promise.race([
        new Promise<void>((resolve) => {
          this.wake = resolve;
        }),
        clock.sleep(
          this.nextPrereadAt === null
            ? pollMs
            : Math.min(pollMs, Math.max(0, this.nextPrereadAt - clock.now())),
        ),
      ]);
      this.wake = () => {
        this.woken = true;
      };
      this.woken = false;
    }
    // Drivers notice a lost ownership at their next turn (at most a poll interval away).
    await Promise.allSettled([...this.tasks.values(), ...this.prereading]);
    // A write refused because the lease lapsed (locally or by a newer owner's fence) is the same
    // hand-over seen a moment earlier, not a failure of the execution.
    if (this.fatal && !this.stillOwned()) handedOver = true;
    if (handedOver) return this.summary('handed-over');
    if (this.fatal) throw this.fatal;
    // Before the execution is final: a process killed between the two quarantines again on resume.
    if (ended === 'aborted' && this.book.deps.settings.onAbort === 'quarantine')
      await this.quarantineAborted();
    await this.book.deps.journal.finishExecution(this.book.execution.id, ended, this.book.iso());
    await this.book.audit('execution-ended', null, ended);
    return this.summary(ended);
  }

  /**
   * cooldowns.onAbort = quarantine: the servers of the moves this aborted execution did not
   * complete wait for an operator's release, not for a cooldown. One already quarantined by its
   * own move (an abort Nova never confirmed, its last retry failed) keeps that reason.
   */
  private async quarantineAborted(): Promise<void> {
    const why = this.book.aborted() ?? this.book.resumedAbort ?? 'the window ended or a pause came';
    for (const rec of this.book.moves.values()) {
      if (rec.state === 'completed' || rec.detail?.endsWith(QUARANTINED) === true) continue;
      await this.book.quarantine(
        rec,
        `its move ${rec.from} -> ${rec.to} was in execution ${this.book.execution.id}, aborted (${why}) (cooldowns.onAbort: quarantine)`,
        null,
      );
    }
  }

  private summary(state: ExecutionSummary['state']): ExecutionSummary {
    const moves = [...this.book.moves.values()].sort((a, b) => a.step - b.step);
    const counts = emptyCounts();
    for (const m of moves) counts[m.state]++;
    return { executionId: this.book.execution.id, state, counts, moves, counters: { ...this.book.counters } };
  }

  private stillOwned(): boolean {
    return this.book.window.owned === undefined || this.book.window.owned();
  }

  private async startEligible(now: number): Promise<void> {
    const open = [...this.book.moves.values()].filter((m) => !FINAL_MOVE_STATES.includes(m.state));
    const firstOpenWave = Math.min(...open.map((m) => m.wave));
    if (!(await this.waveStillPays(firstOpenWave))) return;
    this.stepOrder ??= [...this.book.moves.keys()].sort((a, b) => a - b);
    this.nextPrereadAt = null;
    const waitingOn = new Set<string>();
    for (const step of this.stepOrder) {
      const rec = this.book.move(step);
      if (rec.state !== 'pending' || this.tasks.has(rec.step)) continue;
      // The plan's capacity reasoning holds wave by wave: a later wave waits for the earlier ones.
      if (rec.wave > firstOpenWave) continue;
      if ((this.book.nextTryAt.get(rec.step) ?? 0) > now) continue;
      const blocking = this.unmetDependency(rec);
      if (blocking === 'wait') continue;
      if (blocking !== null) {
        await this.book.endPending(rec, blocking);
        continue;
      }
      const deadline = this.book.window.deadline;
      if (deadline !== null && !this.book.fitsWindow(rec, now)) {
        await this.book.endPending(
          rec,
          `does not fit in what is left of the window (≈${Math.round(rec.estimatedSeconds)} s needed, ${Math.max(0, Math.round((deadline - now) / 1000))} s left)`,
        );
        continue;
      }
      const lease = this.book.deps.slots.tryAcquire(this.slotRequest(rec));
      if (!lease) {
        this.prereadIfDue(rec, now, waitingOn);
        continue;
      }
      const locked = await this.lockHosts(rec);
      if (!locked.ok) {
        this.book.deps.slots.release(lease);
        if (!locked.retry) await this.book.endPending(rec, locked.why);
        continue;
      }
      this.launch(rec.step, lease, false, locked.hosts);
    }
  }

  /**
   * A move ready but for its slots: when its source runs a migration of ours expected to end
   * within PREREAD_LEAD_POLLS polls, its pre-flight is made now (MoveDriver.preread), so that the
   * call goes out as soon as the listing shows that migration ended, instead of a round trip
   * later. Only the first move waiting on each source (the one the free slot goes to), once per
   * attempt; the expected end is the running move's intent plus its estimate, and a pre-read
   * older than PREREAD_MAX_AGE_MS when the move starts is not used (the move reads again). A
   * run makes at most PREREAD_GIVE_UP_AFTER at once until as many were judged, and stops making
   * them when they turn out stale more than once for three used.
   */
  private prereadIfDue(rec: MoveRecord, now: number, waitingOn: Set<string>): void {
    if (waitingOn.has(rec.from)) return;
    waitingOn.add(rec.from);
    const key = `${rec.step}:${rec.attempt}:${rec.issuedAt ?? ''}`;
    if (this.prereadAsked.has(key)) return;
    // Estimates that do not foretell the ends: the pre-reads come too early and are read again,
    // two calls each for nothing. After a few, more than one stale for three used stops them for
    // the run (each used one saves a round trip, each stale one costs two calls).
    const { prereads, prereadsUsed, prereadsStale } = this.book.counters;
    if (prereadsStale >= PREREAD_GIVE_UP_AFTER && prereadsStale * 3 > prereadsUsed) return;
    // Until a few have been judged, only a few at once: a first round of many (every source's
    // next move at the start) would all be stale together on a cloud whose estimates are off.
    const undecided = this.prereading.size + prereads - prereadsUsed - prereadsStale;
    if (prereadsUsed + prereadsStale < PREREAD_GIVE_UP_AFTER && undecided >= PREREAD_GIVE_UP_AFTER) return;
    let end = Number.POSITIVE_INFINITY;
    for (const step of this.tasks.keys()) {
      const m = this.book.moves.get(step);
      // A move whose record is final (its slots given back) still writes its outcome: not a holder.
      if (m === undefined || m.from !== rec.from || m.issuedAt === null || !this.book.holdsSlot(step))
        continue;
      if (m.state !== 'issuing' && m.state !== 'migrating') continue;
      end = Math.min(end, Date.parse(m.issuedAt) + m.estimatedSeconds * 1000);
    }
    if (!Number.isFinite(end)) return;
    const due = end - PREREAD_LEAD_POLLS * this.book.deps.settings.pollSeconds * 1000;
    if (now < due) {
      this.nextPrereadAt = Math.min(this.nextPrereadAt ?? Number.POSITIVE_INFINITY, due);
      return;
    }
    this.prereadAsked.add(key);
    const task = this.driver.preread(rec).finally(() => {
      this.prereading.delete(task);
    });
    this.prereading.add(task);
  }

  /**
   * Before a wave after the first starts: its moves not yet sent are judged again on a fresh
   * reading, and those that no longer pay are skipped with why (a move that needed one of them
   * follows, as for any step that did not complete). false: the reading failed, try again later.
   * The first wave was judged by whoever started or resumed the execution (the loop's start check).
   */
  private async waveStillPays(wave: number): Promise<boolean> {
    const check = this.book.deps.waveCheck;
    if (this.checkedWave === null || check === undefined) {
      this.checkedWave = wave;
      return true;
    }
    if (wave <= this.checkedWave) return true;
    const moves = [...this.book.moves.values()].filter(
      (m) => m.wave === wave && m.state === 'pending' && m.issuedAt === null && !this.tasks.has(m.step),
    );
    let dropped: { step: number; why: string }[];
    try {
      dropped = moves.length === 0 ? [] : await check({ execution: this.book.execution, wave, moves });
    } catch (e) {
      this.book.counters.readErrors++;
      this.book.deps.logger?.debug('executor: wave gain re-check failed, asking again later', {
        execution: this.book.execution.id,
        wave,
        error: e instanceof Error ? e.message : String(e),
      });
      return false;
    }
    for (const d of dropped) {
      const rec = this.book.moves.get(d.step);
      if (rec === undefined || rec.wave !== wave || rec.state !== 'pending') continue;
      const why = `gain re-check before wave ${wave}: ${d.why}`;
      await this.book.endPending(rec, why);
      await this.book.audit('gain-dropped', rec, why);
    }
    this.checkedWave = wave;
    return true;
  }

  private lockHosts(rec: MoveRecord): Promise<MoveHostLocks> {
    if (this.hostLocks === null) return Promise.resolve({ ok: true, hosts: [] });
    return this.hostLocks.acquire([rec.from, rec.to]);
  }

  /** null: every `after` step completed; 'wait': one is still open; else why the move cannot run. */
  private unmetDependency(rec: MoveRecord): string | null | 'wait' {
    for (const s of rec.after ?? []) {
      const dep = this.book.moves.get(s);
      if (!dep) continue;
      if (!FINAL_MOVE_STATES.includes(dep.state)) return 'wait';
      if (dep.state !== 'completed') return `step ${s}, whose room it needs, ended ${dep.state}`;
    }
    return null;
  }

  private slotRequest(rec: MoveRecord) {
    return { source: rec.from, dest: rec.to, aggregate: this.book.execution.aggregate };
  }

  private launch(step: number, lease: SlotLease, resumed: boolean, hosts: string[]): void {
    // Given back as soon as Nova's record of the attempt is final (RunBook.freeSlot), else when
    // the driver ends: the next move on these hosts starts while this one writes its outcome.
    this.book.holdSlot(step, () => {
      this.book.deps.slots.release(lease);
      this.wake();
    });
    const task = this.driver
      .drive(step, resumed)
      .catch((e: unknown) => {
        if (e instanceof JournalRace || e instanceof OwnershipLost || !this.stillOwned()) return;
        this.fatal ??= e;
      })
      .finally(() => {
        this.book.freeSlot(step);
        void this.hostLocks?.release(hosts);
        this.book.dropComing(step);
        this.tasks.delete(step);
        this.wake();
      });
    this.tasks.set(step, task);
  }
}
