// One move through one driver: pre-flight, the intent, os-migrateLive, finding and following
// Nova's record, abort, and what a failure leads to (retry, failed, quarantine). Every step is
// written to the journal (through the run's book) before and after the call it announces.
import { findAttemptMigration, isFinalMigration, judge, type Outcome } from './attempt.js';
import { type MoveRecord, QUARANTINED, RETRY_REFUSED } from './journal.js';
import { ActuatorError, type LiveMigrationView, type ServerView } from './ports.js';
import { preflight } from './preflight.js';
import { type AbortKind, abortingDetail, abortKindOf, PREREAD_MAX_AGE_MS, type RunBook } from './run-book.js';
import { backoffSeconds } from './settings.js';

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
  /** When this process began confirming the abort (settings.abortGiveUpSeconds counts from it). */
  abortStartedAt: number | null;
  /** An anomaly is only believed when two reads in a row show it. */
  anomalySeen: string | null;
  /** Amounts the destination will hold for this move; null when not read. */
  need: Record<string, number> | null;
  /** When this driver last sent os-migrateLive (our clock); null: not this process (a restart). */
  sentAt: number | null;
}

const ABORTABLE = new Set(['running', 'queued', 'preparing']);

/**
 * Polls of silence after which a move reads its server and records itself: the listing shows
 * every change of a record, but not a record that left it (deleted with its server).
 */
const VERIFY_AFTER_POLLS = 10;

export class MoveDriver {
  constructor(private readonly book: RunBook) {}

  async drive(step: number, resumed: boolean): Promise<void> {
    const ctx: AttemptContext = {
      accepted: false,
      resends: 0,
      resumed,
      abortKind: null,
      abortWhy: null,
      lastAbortSentAt: null,
      abortStartedAt: null,
      anomalySeen: null,
      need: null,
      sentAt: null,
    };
    let started = false;
    for (;;) {
      this.book.checkOwned();
      const rec = this.book.move(step);
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
      this.book.nextTryAt.set(
        rec.step,
        this.book.deps.clock.now() + this.book.deps.settings.pollSeconds * 1000,
      );
      return false;
    };
    // One pre-flight per destination at a time, its claim noted before the next one reads room.
    const release = await this.book.lockDestination(rec.to);
    let pf: Awaited<ReturnType<typeof preflight>>;
    try {
      const pre = this.usablePreread(rec);
      pf = pre
        ? { ok: true, need: pre }
        : await preflight(this.book.deps.cloud, rec, this.book.comingTo(rec.to), {
            service: (h) => this.book.services.get(h),
            placement: this.book.placement,
          });
      if (pf.ok) this.book.setComing(rec, pf.need);
    } catch (e) {
      this.book.readFailed('pre-flight', rec, e);
      return retryLater();
    } finally {
      release();
    }
    if (!pf.ok && pf.wait) return retryLater();
    if (!pf.ok) {
      await this.book.audit('preflight-refused', rec, pf.reason);
      if (rec.issuedAt === null) {
        await this.book.transition(rec, 'pending', { state: 'skipped', detail: `pre-flight: ${pf.reason}` });
      } else {
        await this.book.transition(rec, 'pending', {
          state: 'failed',
          detail: `${rec.detail ?? `attempt ${rec.attempt} failed`}${RETRY_REFUSED}${pf.reason}`,
        });
      }
      if (pf.serverFault !== null)
        await this.book.quarantine(rec, `pre-flight: ${pf.reason}`, pf.serverFault);
      return false;
    }
    if (
      this.book.stopRequested() ||
      this.book.abortReason(rec)?.kind === 'window' ||
      !this.book.fitsWindow(rec, this.book.deps.clock.now())
    ) {
      // The window closed, or no longer has room for the move, or a pause came while we read
      // (faults can stretch pre-flight's reads over minutes): leave the move to the loop, which
      // ends it with why.
      this.book.dropComing(rec.step);
      return false;
    }
    ctx.need = pf.need;
    const attempt = rec.issuedAt === null ? undefined : rec.attempt + 1;
    const issuing = await this.book.transition(rec, 'pending', {
      state: 'issuing',
      // A new attempt keeps the previous attempt's migration id while it is issuing: the record
      // our call starts is newer than that one (findAttemptMigration).
      ...(attempt !== undefined ? { attempt, novaMigrationId: rec.novaMigrationId } : {}),
      detail: `attempt ${attempt ?? rec.attempt}: live migration ${rec.from} -> ${rec.to} asked`,
    });
    await this.send(issuing, ctx);
    return true;
  }

  /**
   * Pre-flight before the move's slots are free (ExecutionRun: its source's migration is expected
   * to end soon), so that the call can go out as soon as they are. Nothing is claimed and nothing
   * written: only a pre-flight that passed is kept, and a refusal is always decided by the
   * pre-flight the move makes when it starts.
   */
  async preread(rec: MoveRecord): Promise<void> {
    const release = await this.book.lockDestination(rec.to);
    try {
      const addsAtRead = this.book.comingAddsTo(rec.to);
      const pf = await preflight(this.book.deps.cloud, rec, this.book.comingTo(rec.to), {
        service: (h) => this.book.services.get(h),
        placement: this.book.placement,
      });
      // A refusal is not kept (the move decides it again when it starts): not counted as made.
      if (!pf.ok) return;
      this.book.counters.prereads++;
      this.book.prereads.set(rec.step, {
        at: this.book.deps.clock.now(),
        attempt: rec.attempt,
        issuedAt: rec.issuedAt,
        need: pf.need,
        addsAtRead,
      });
    } catch (e) {
      this.book.readFailed('pre-read', rec, e);
    } finally {
      release();
    }
  }

  /**
   * The amounts of the move's pre-read when it still says what a pre-flight now would (see
   * Preread), else null. Taken once: a second start of the move reads again.
   */
  private usablePreread(rec: MoveRecord): Record<string, number> | null {
    const pre = this.book.prereads.get(rec.step);
    if (!pre) return null;
    this.book.prereads.delete(rec.step);
    const usable =
      this.book.deps.clock.now() - pre.at <= PREREAD_MAX_AGE_MS &&
      pre.attempt === rec.attempt &&
      pre.issuedAt === rec.issuedAt &&
      this.book.comingAddsTo(rec.to) === pre.addsAtRead;
    if (!usable) {
      this.book.counters.prereadsStale++;
      return null;
    }
    this.book.counters.prereadsUsed++;
    return pre.need;
  }

  /** os-migrateLive. A refusal fails the attempt; a lost answer is resolved from Nova's records. */
  private async send(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    if (ctx.need) this.book.setComing(rec, ctx.need);
    // The intent was written under our fence a moment ago; the lease is checked once more right
    // before the call (its local deadline keeps a margin for this call to land before expiry).
    this.book.checkOwned();
    ctx.sentAt = this.book.deps.clock.now();
    try {
      await this.book.deps.cloud.liveMigrate(rec.serverId, rec.to);
      ctx.accepted = true;
      await this.book.audit(
        'live-migrate',
        rec,
        `os-migrateLive to ${rec.to} accepted (attempt ${rec.attempt})`,
      );
    } catch (e) {
      const err = e instanceof ActuatorError ? e : new ActuatorError('unknown', String(e));
      if (err.kind === 'unknown') {
        this.book.counters.unknownOutcomes++;
        await this.book.audit('live-migrate', rec, `os-migrateLive answer lost: ${err.message}`);
        return;
      }
      this.book.dropComing(rec.step);
      await this.book.audit('live-migrate', rec, `os-migrateLive refused: ${err.message}`);
      await this.attemptFailed(rec, `Nova refused the live migration: ${err.message}`, err.message, 'retry');
    }
  }

  /**
   * The intent is stored; did Nova start a migration? Decides once (migrating, a failed attempt,
   * back to pending, or one more send) and returns; never sends again before knowing the
   * previous send did nothing.
   */
  private async resolveIssuing(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    const { clock, settings } = this.book.deps;
    const issuedAt = rec.issuedAt === null ? clock.now() : Date.parse(rec.issuedAt);
    if (ctx.accepted && (await this.awaitRecordListed(rec, ctx.sentAt))) return;
    if (!ctx.accepted) {
      // A request still travelling must land before its absence from Nova's records means anything.
      const settleUntil = issuedAt + settings.settleSeconds * 1000;
      if (clock.now() < settleUntil) await clock.sleep(settleUntil - clock.now());
    }
    for (;;) {
      this.book.checkOwned();
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
        await this.book.transition(rec, 'issuing', {
          state: 'migrating',
          novaMigrationId: found.id,
          detail: `attempt ${rec.attempt}: Nova migration ${found.id} (${found.status})`,
        });
        await this.book.audit('migration-found', rec, `Nova migration ${found.id} is ${found.status}`);
        return;
      }
      if (!server) {
        this.book.dropComing(rec.step);
        const nothingEverSent = !ctx.accepted && rec.attempt === 1;
        await this.book.transition(rec, 'issuing', {
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
      this.book.dropComing(rec.step);
      if (ctx.resumed) {
        await this.book.transition(rec, 'issuing', {
          state: 'pending',
          detail: `attempt ${rec.attempt} never reached Nova (found on restart); pre-flight again`,
        });
        await this.book.audit('reconciled', rec, 'the interrupted call never reached Nova: back to pending');
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
      if (this.book.stopRequested() || this.book.abortReason(rec)?.kind === 'window') {
        await this.book.transition(rec, 'issuing', {
          state: rec.attempt === 1 ? 'skipped' : 'failed',
          detail: `attempt ${rec.attempt} never reached Nova, and the window ended or a pause came before another send`,
        });
        return;
      }
      this.book.counters.resends++;
      const again = await this.book.transition(rec, 'issuing', {
        state: 'issuing',
        detail: `attempt ${rec.attempt}: send ${ctx.resends + 1} (the previous one never reached Nova)`,
      });
      await this.send(again, ctx);
      return;
    }
  }

  /**
   * An accepted call: wait for its record in the shared listing (no read of our own). true: the
   * record showed up and the move is `migrating`; false: it did not within `verifyAfter`, or
   * only a final record showed up beside a server still busy: the caller reads Nova directly.
   */
  private async awaitRecordListed(rec: MoveRecord, sentAt: number | null): Promise<boolean> {
    const { clock, settings } = this.book.deps;
    const issuedAt = rec.issuedAt === null ? clock.now() : Date.parse(rec.issuedAt);
    const listingsAtStart = this.book.watch.listings();
    const watch = this.book.watch.follow(rec.serverId, {
      expectedSeconds: rec.estimatedSeconds,
      reachBackTo: null,
      sentAt,
    });
    try {
      for (;;) {
        this.book.checkOwned();
        const seen = watch.version();
        const found = this.currentMigration(rec, watch.records());
        if (found) {
          if (isFinalMigration(found.status)) {
            // A final record beside a busy server is an older one (resolveIssuing's rule): let
            // the direct reads decide.
            const server = await this.readServer(rec);
            if (server === undefined || server?.taskState != null) return false;
          }
          await this.book.transition(rec, 'issuing', {
            state: 'migrating',
            novaMigrationId: found.id,
            detail: `attempt ${rec.attempt}: Nova migration ${found.id} (${found.status})`,
          });
          // Scheduled: Placement shows its claim on the destination now (as in follow). The record
          // may not be listed again before it ends, so this is the moment to say so.
          if (found.status !== 'accepted') this.book.dropComing(rec.step);
          await this.book.audit('migration-found', rec, `Nova migration ${found.id} is ${found.status}`);
          return true;
        }
        if (this.quietTooLong(rec, issuedAt, listingsAtStart)) return false;
        await watch.changed(seen, settings.pollSeconds * 1000);
      }
    } finally {
      watch.close();
    }
  }

  /**
   * Nothing heard about a followed migration for this long: read its server and records
   * directly. A record changes status at most a few times (the fake driver's running record
   * not at all for the whole copy): silence is only suspect beyond twice the move's estimate,
   * and only across VERIFY_AFTER_POLLS listings (tried, failed ones too): a process that could
   * not list for a while (a loaded host, a slow API) has heard nothing because it did not ask.
   */
  private quietTooLong(rec: MoveRecord, since: number, listingsAtSince: number): boolean {
    const { pollSeconds } = this.book.deps.settings;
    const quietMs = Math.max(pollSeconds * VERIFY_AFTER_POLLS, 2 * rec.estimatedSeconds) * 1000;
    return (
      this.book.deps.clock.now() - since >= quietMs &&
      this.book.watch.listings() - listingsAtSince >= VERIFY_AFTER_POLLS
    );
  }

  /**
   * Follows the migration through the shared listing: a record that changed wakes this move; a
   * final one is checked against the server (one read); nothing heard for `verifyAfter` means a
   * direct read of the server and its records (a record that left the listing, a server deleted).
   */
  private async follow(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    const { clock, settings } = this.book.deps;
    const watch = this.book.watch.follow(rec.serverId, {
      expectedSeconds: rec.estimatedSeconds,
      sentAt: ctx.sentAt,
      // Found in flight after a restart: its record may have last changed long ago.
      reachBackTo: ctx.resumed
        ? (rec.issuedAt === null ? clock.now() : Date.parse(rec.issuedAt)) - settings.clockSkewSeconds * 1000
        : null,
    });
    try {
      let seen = -1;
      let quietSince = clock.now();
      let listingsAtQuiet = this.book.watch.listings();
      for (;;) {
        this.book.checkOwned();
        const abort = this.book.abortReason(rec);
        if (abort) {
          ctx.abortKind = abort.kind;
          ctx.abortWhy = abort.why;
          await this.book.transition(rec, 'migrating', {
            state: 'aborting',
            detail: abortingDetail(rec.attempt, rec.novaMigrationId, abort.kind, abort.why),
          });
          return;
        }
        if (watch.version() !== seen) {
          seen = watch.version();
          quietSince = clock.now();
          listingsAtQuiet = this.book.watch.listings();
        }
        let direct: { server: ServerView | null; migrations: LiveMigrationView[] } | null = null;
        if (this.quietTooLong(rec, quietSince, listingsAtQuiet)) {
          direct = await this.readServerAndMigrations(rec);
          if (direct) watch.learn(direct.migrations);
          seen = watch.version();
          quietSince = clock.now();
          listingsAtQuiet = this.book.watch.listings();
        }
        const m = this.currentMigration(rec, direct ? direct.migrations : watch.records());
        if (m) {
          if (rec.novaMigrationId === null) {
            rec = await this.book.transition(rec, 'migrating', { state: 'migrating', novaMigrationId: m.id });
          }
          if (m.status !== 'accepted') this.book.dropComing(rec.step);
          if (isFinalMigration(m.status)) this.book.freeSlot(rec.step);
          // A running record needs no server read; a final one is judged with the server.
          const server = direct
            ? direct.server
            : isFinalMigration(m.status)
              ? await this.readEndServer(rec, m)
              : undefined;
          if (server !== undefined) {
            const outcome = judge(rec, server, m);
            if (await this.settle(rec, ctx, m, outcome, null)) return;
          }
        } else if (direct) {
          const gone = this.recordGone(rec, direct.server);
          if (gone && (await this.settleGone(rec, ctx, gone))) return;
        }
        await watch.changed(seen, settings.pollSeconds * 1000);
      }
    } finally {
      watch.close();
    }
  }

  /**
   * The followed record is in neither the listing nor the server's own records: Nova deleted it
   * with its server, or someone removed it. What the server shows decides; null while it is
   * still busy (a task state) and may yet explain itself.
   */
  private recordGone(rec: MoveRecord, server: ServerView | null): string | null {
    const id = rec.novaMigrationId ?? '?';
    if (!server) return `migration ${id} disappeared and server ${rec.serverId} no longer exists`;
    if (server.taskState !== null) return null;
    return `migration ${id} disappeared from Nova's records; the server is ${server.status} on ${server.host ?? 'no host'}`;
  }

  /** A record gone is believed on the second direct read that shows it gone; then failed and quarantined. */
  private async settleGone(rec: MoveRecord, ctx: AttemptContext, detail: string): Promise<boolean> {
    if (ctx.anomalySeen !== detail) {
      ctx.anomalySeen = detail;
      return false;
    }
    await this.attemptFailed(rec, detail, null, 'quarantine');
    return true;
  }

  private async finishAbort(rec: MoveRecord, ctx: AttemptContext): Promise<void> {
    const { clock, settings, cloud } = this.book.deps;
    const why = ctx.abortWhy ?? rec.detail ?? 'abort requested before a restart';
    // Resumed after a restart: the journal says which kind of abort this was.
    ctx.abortKind ??= abortKindOf(rec.detail);
    ctx.abortStartedAt ??= clock.now();
    let lastSeen = 'no migration record read yet';
    for (;;) {
      this.book.checkOwned();
      const readAt = clock.now();
      const read = await this.readServerAndMigrations(rec);
      const m = read ? this.currentMigration(rec, read.migrations) : undefined;
      if (read && m) {
        const outcome = judge(rec, read.server, m);
        if (await this.settle(rec, ctx, m, outcome, why)) return;
        lastSeen = `migration ${m.id} last seen ${m.status}`;
      } else if (read) {
        lastSeen = `Nova lists no migration ${rec.novaMigrationId ?? '?'} of the server`;
      }
      const now = clock.now();
      // Only a read begun after the give-up time may end the move: one that failed (Nova
      // unreachable, a breaker open, a process starved of CPU) says nothing about the migration,
      // which may well have completed meanwhile; giving up on it would record a failure for a
      // server Nova moved. Reads that fail are asked again, as while following.
      if (read && readAt - ctx.abortStartedAt >= settings.abortGiveUpSeconds * 1000) {
        // Nova neither cancelled nor finished it: the server may still end up on either host, so
        // the move ends here and nobody plans that server again until an operator releases it.
        await this.attemptFailed(
          rec,
          `abort not confirmed by Nova after ${Math.round((now - ctx.abortStartedAt) / 1000)} s (${lastSeen}; ${why}); the server may end on ${rec.from} or ${rec.to}`,
          null,
          'quarantine',
        );
        return;
      }
      if (read && m) {
        const resendAfter = settings.pollSeconds * 5 * 1000;
        if (
          ABORTABLE.has(m.status) &&
          (ctx.lastAbortSentAt === null || now - ctx.lastAbortSentAt >= resendAfter)
        ) {
          this.book.checkOwned();
          ctx.lastAbortSentAt = now;
          this.book.counters.abortRequests++;
          try {
            await cloud.abortLiveMigration(rec.serverId, m.id);
            await this.book.audit('abort', rec, `DELETE migration ${m.id} (${m.status}) accepted: ${why}`);
          } catch (e) {
            // Not abortable in this state, or the answer was lost: the next reads tell.
            await this.book.audit(
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
      await this.book.transition(rec, from, {
        state: 'completed',
        detail: `attempt ${rec.attempt}: migration ${m.id} completed${seconds !== null ? ` in ${seconds.toFixed(1)} s` : ''}${raced}`,
      });
      await this.book.audit('move-completed', rec, `on ${rec.to}, migration ${m.id}${raced}`);
      await this.book.deps.cooldowns?.recordMove({
        serverId: rec.serverId,
        aggregate: this.book.execution.aggregate,
        lastMovedAt: this.book.iso(),
        from: rec.from,
        to: rec.to,
      });
      if (seconds !== null && this.book.deps.costs) {
        await this.book.deps.costs.record({
          serverId: rec.serverId,
          aggregate: this.book.execution.aggregate,
          source: rec.from,
          dest: rec.to,
          novaMigrationId: m.id,
          ramMB: ctx.need?.MEMORY_MB ?? null,
          seconds,
          at: this.book.iso(),
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
    const { clock, settings } = this.book.deps;
    const from = rec.state;
    const now = clock.now();
    const wait = backoffSeconds(rec.attempt, settings.retry) * 1000;
    const attemptsLeft = rec.attempt < settings.retry.attempts;
    const timeLeft = this.book.fitsWindow(rec, now + wait);
    this.book.dropComing(rec.step);
    // Whatever failed, the next pre-flight towards this host reads its inventories again.
    this.book.placement.forget(rec.to);
    if (policy === 'retry' && attemptsLeft && timeLeft && !this.book.stopRequested()) {
      await this.book.transition(rec, from, {
        state: 'pending',
        detail: `attempt ${rec.attempt} failed: ${detail}; next try in ${Math.round(wait / 1000)} s`,
      });
      this.book.nextTryAt.set(rec.step, now + wait);
      await this.book.audit('retry-scheduled', rec, `attempt ${rec.attempt} failed: ${detail}`);
      return;
    }
    const quarantined = policy === 'quarantine' || (policy === 'retry' && !attemptsLeft);
    const why =
      policy === 'retry' && attemptsLeft
        ? timeLeft
          ? '; paused, no retry'
          : '; no time left in the window for a retry'
        : '';
    await this.book.transition(rec, from, {
      state: 'failed',
      detail: `attempt ${rec.attempt} failed: ${detail}${why}${quarantined ? QUARANTINED : ''}`,
    });
    await this.book.audit('move-failed', rec, detail);
    if (quarantined) {
      const reason =
        policy === 'quarantine' ? detail : `${rec.attempt} attempt(s) failed; the last: ${detail}`;
      await this.book.quarantine(rec, reason, novaFault);
    }
  }

  private async readServerAndMigrations(
    rec: MoveRecord,
  ): Promise<{ server: ServerView | null; migrations: LiveMigrationView[] } | null> {
    try {
      // Records first, server second: a call landing between the two shows as a task state.
      const migrations = await this.book.deps.cloud.listLiveMigrations(rec.serverId);
      const server = await this.book.deps.cloud.getServer(rec.serverId);
      return { server, migrations };
    } catch (e) {
      this.book.readFailed('follow', rec, e);
      return null;
    }
  }

  /** The server now; undefined when the read failed (asked again later), null when it is gone. */
  private async readServer(rec: MoveRecord): Promise<ServerView | null | undefined> {
    try {
      return await this.book.deps.cloud.getServer(rec.serverId);
    } catch (e) {
      this.book.readFailed('follow', rec, e);
      return undefined;
    }
  }

  /** The server once its record is final, through the shared end reads; undefined when the read failed. */
  private async readEndServer(rec: MoveRecord, m: LiveMigrationView): Promise<ServerView | null | undefined> {
    try {
      return await this.book.endReads.read(rec.serverId, m.createdAt);
    } catch (e) {
      this.book.readFailed('follow', rec, e);
      return undefined;
    }
  }

  private currentMigration(rec: MoveRecord, migrations: LiveMigrationView[]): LiveMigrationView | undefined {
    return findAttemptMigration(rec, migrations, this.book.deps.settings.clockSkewSeconds * 1000);
  }
}
