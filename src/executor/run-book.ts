// What one execution run knows and writes: its moves (mirrored from the journal after every
// compare-and-set), retry times, the claims its started migrations will make on destinations,
// counters, and the helpers that write the journal, the audit log and quarantine.
import { type Logger, silentLogger } from '../cloud/log.js';
import type { LockService } from '../coordination/locks.js';
import { ServerEndReads } from './end-reads.js';
import type {
  ExecutionJournal,
  ExecutionRecord,
  MoveRecord,
  MoveState,
  MoveTransition,
  PlannedMove,
} from './journal.js';
import { applyTransition } from './memory-journal.js';
import { MigrationWatch } from './migration-watch.js';
import { PlacementReads } from './placement-reads.js';
import type {
  AuditAction,
  AuditSink,
  Clock,
  CooldownSink,
  CostSampleSink,
  ExecutorCloud,
  QuarantineSink,
  WaveGainCheck,
} from './ports.js';
import { ComputeServiceReads } from './service-reads.js';
import type { ExecutorSettings } from './settings.js';
import type { MigrationSlots } from './slots.js';

export interface ExecutorDeps {
  journal: ExecutionJournal;
  cloud: ExecutorCloud;
  clock: Clock;
  settings: ExecutorSettings;
  /**
   * An aggregate's own retry and pause settings (its configuration's `retry` and `onPause`);
   * absent, or for an aggregate it does not know: `settings`.
   */
  settingsFor?: (aggregate: string) => ExecutorSettings;
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
  /** The cluster-wide host locks (docs/tasks.md): a move holds its source and destination. */
  hostLocks?: LockService;
  /** How long a dead holder's host locks outlive it (replicas: the coordination lease TTL). */
  hostLockTtlMs?: number;
  /** Asked before each wave after the first: the moves that no longer pay are skipped. */
  waveCheck?: WaveGainCheck;
  /** The process's one listing of live migrations, shared by every run (the Executor makes it). */
  watch?: MigrationWatch;
  /** The process's shared reads of nova-compute services for pre-flight (the Executor makes them). */
  services?: ComputeServiceReads;
  /** The process's shared Placement reads for pre-flight (the Executor makes them). */
  placement?: PlacementReads;
  /** The process's shared server reads at a migration's end (the Executor makes them). */
  endReads?: ServerEndReads;
}

export interface RunWindow {
  /** When the maintenance window ends (epoch ms, the injected clock's); null: no end. */
  deadline: number | null;
  /** A pause: no new migration starts; those in flight finish or are aborted (settings.onStop). */
  shouldStop: () => boolean;
  /**
   * An operator's abort of this execution (why, or null): no new migration starts and those in
   * flight are aborted in Nova whatever settings.onStop says.
   */
  abortRequested?: () => string | null;
  /** Hosts whose locks the execution's starter holds itself (an evacuation task's source). */
  ownHosts?: ReadonlySet<string>;
  /**
   * Replicas: false once this process no longer owns the execution's aggregate (lease lost or
   * handed over). The run then stops at once, writing and sending nothing more, and leaves the
   * execution running in the journal for the next owner to reconcile and resume. Absent: always owned.
   */
  owned?: () => boolean;
  /**
   * Replicas: the aggregate fence this run acts under. Its host locks carry it, so a run resuming
   * the execution under a newer fence takes them over from the previous owner.
   */
  fence?: number;
}

/**
 * A pre-flight that passed before the move's slots were free: the move's source still ran
 * another migration of ours, expected to end soon. Used by the move's next attempt instead of
 * reading again, only while it is young (PREREAD_MAX_AGE_MS), for the same attempt, and while
 * no claim of ours towards the destination was added to `coming` since: then it says what a
 * pre-flight made now would say, or counts more room used, but for changes by others, which
 * Nova's own checks at the call refuse (a busy server: 409; no room: the scheduler's refusal).
 * A claim that left `coming` since needs no new reading: the pre-read counted it as coming, and
 * it left because Placement shows it now (which the pre-read's usages may have missed, never
 * counted twice against the move) or because its move ended without it.
 */
export interface Preread {
  at: number;
  attempt: number;
  issuedAt: string | null;
  need: Record<string, number>;
  /** comingAddsTo(destination) when the pre-read was made. */
  addsAtRead: number;
}

/**
 * How old a pre-read may be when its move starts: as old as the shared listing of compute
 * services pre-flight uses (service-reads.ts), for the same reason.
 */
export const PREREAD_MAX_AGE_MS = 5000;

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
  /**
   * Pre-flights made before the move's slots were free; how many of them the move used, and how
   * many it found too old or out of date when it started (and read again).
   */
  prereads: number;
  prereadsUsed: number;
  prereadsStale: number;
}

/** Thrown inside a move's driver when the journal refused a compare-and-set. */
export class JournalRace extends Error {}

/** Thrown inside a move's driver when the process no longer owns the aggregate: stop, say nothing. */
export class OwnershipLost extends Error {}

export type AbortKind = 'timeout' | 'window' | 'stop';

/** The detail of a move entering `aborting`: it carries the kind, so a restarted process knows it. */
export function abortingDetail(
  attempt: number,
  migrationId: number | null,
  kind: AbortKind,
  why: string,
): string {
  return `attempt ${attempt}: aborting migration ${migrationId ?? '?'} [${kind}]: ${why}`;
}

/**
 * The kind of abort an `aborting` move's detail records. Details written before the kind was
 * recorded name a timeout in words; anything else was an operator, a pause or the window.
 */
export function abortKindOf(detail: string | null): AbortKind {
  const tagged = /aborting migration \S+ \[(timeout|window|stop)\]/.exec(detail ?? '');
  if (tagged) return tagged[1] as AbortKind;
  return /timed out after \d+ s/.test(detail ?? '') ? 'timeout' : 'stop';
}

export function newWatch(deps: ExecutorDeps): MigrationWatch {
  return new MigrationWatch(
    deps.cloud,
    deps.clock,
    { pollSeconds: deps.settings.pollSeconds, clockSkewSeconds: deps.settings.clockSkewSeconds },
    deps.logger,
  );
}

/** Ends within half a poll of each other share one listing of servers. */
export function newEndReads(deps: ExecutorDeps, watch: MigrationWatch): ServerEndReads {
  return new ServerEndReads(deps.cloud, deps.clock, deps.settings.pollSeconds * 500, () => watch.size());
}

export class RunBook {
  readonly moves = new Map<number, MoveRecord>();
  readonly nextTryAt = new Map<number, number>();
  /** Per destination: what moves we started will claim there once Nova schedules them. */
  private readonly coming = new Map<string, Map<number, Record<string, number>>>();
  readonly counters: RunCounters = {
    readErrors: 0,
    resends: 0,
    unknownOutcomes: 0,
    abortRequests: 0,
    reconciled: 0,
    prereads: 0,
    prereadsUsed: 0,
    prereadsStale: 0,
  };
  private readonly destLocks = new Map<string, Promise<void>>();
  readonly log: Logger;
  readonly watch: MigrationWatch;
  readonly services: ComputeServiceReads;
  readonly placement: PlacementReads;
  readonly endReads: ServerEndReads;
  /** Per step: gives the move's concurrency slots back (once), and wakes the run's loop. */
  private readonly slotHolders = new Map<number, () => void>();
  /**
   * Per destination: how many claims of our moves were added to `coming`. A usage read before
   * such an add misses that claim: a pre-read is only used while this count is what it was when
   * the pre-read was made.
   */
  private readonly comingAdds = new Map<string, number>();
  /** Pre-flights made before the move's slots were free (MoveDriver.preread), by step. */
  readonly prereads = new Map<number, Preread>();

  constructor(
    readonly deps: ExecutorDeps,
    readonly execution: ExecutionRecord,
    readonly window: RunWindow,
  ) {
    this.log = deps.logger ?? silentLogger;
    this.watch = deps.watch ?? newWatch(deps);
    this.services = deps.services ?? new ComputeServiceReads(deps.cloud, deps.clock);
    this.placement = deps.placement ?? new PlacementReads(deps.cloud, deps.clock);
    this.endReads = deps.endReads ?? newEndReads(deps, this.watch);
  }

  /** How the move's slots are given back before its driver ends (ExecutionRun.launch). */
  holdSlot(step: number, free: () => void): void {
    this.slotHolders.set(step, free);
  }

  /** The move still holds its slots (its record is not final yet). */
  holdsSlot(step: number): boolean {
    return this.slotHolders.has(step);
  }

  /**
   * Nova's record of the move's attempt is final: Nova runs nothing more for it on either host,
   * so its slots (Nova's max_concurrent_live_migrations, the destination's, the aggregate's and
   * the global limit count migrations running in Nova) are free now, while the driver still
   * reads the server and writes the outcome. The next move starts without waiting for those.
   */
  freeSlot(step: number): void {
    const free = this.slotHolders.get(step);
    if (!free) return;
    this.slotHolders.delete(step);
    free();
  }

  /** A pause or an operator's abort: nothing new starts. */
  stopRequested(): boolean {
    return this.window.shouldStop() || this.aborted() !== null;
  }

  /**
   * An abort found in the journal at start (a move left `aborting` by an operator's abort, a
   * pause or the window's end): the execution it belonged to stays aborted whoever finishes it.
   */
  resumedAbort: string | null = null;

  /** Why an operator aborted this execution (or a previous process was aborting it), or null. */
  aborted(): string | null {
    return this.window.abortRequested?.() ?? this.resumedAbort;
  }

  /**
   * Whether a move started at `now` would end, by its estimate, before the window does. Asked
   * before a move starts, again after its pre-flight (whose reads may have taken minutes under
   * faults) and before a retry: one rule, so a move is never sent that was judged not to fit.
   */
  fitsWindow(rec: MoveRecord, now: number): boolean {
    return this.window.deadline === null || now + rec.estimatedSeconds * 1000 <= this.window.deadline;
  }

  abortReason(rec: MoveRecord): { kind: AbortKind; why: string } | null {
    const now = this.deps.clock.now();
    if (this.window.deadline !== null && now >= this.window.deadline) {
      return { kind: 'window', why: 'the maintenance window ended' };
    }
    const aborted = this.aborted();
    if (aborted !== null) return { kind: 'stop', why: aborted };
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

  /** Throws OwnershipLost when another replica may now own the aggregate. */
  checkOwned(): void {
    if (this.window.owned !== undefined && !this.window.owned())
      throw new OwnershipLost(
        `execution ${this.execution.id}: aggregate ${this.execution.aggregate} no longer owned here`,
      );
  }

  readFailed(what: string, rec: MoveRecord, e: unknown): void {
    this.counters.readErrors++;
    this.log.debug(`executor: ${what} read failed, asking again later`, {
      execution: this.execution.id,
      step: rec.step,
      error: e instanceof Error ? e.message : String(e),
    });
  }

  move(step: number): MoveRecord {
    const m = this.moves.get(step);
    if (!m) throw new Error(`execution ${this.execution.id}: no step ${step}`);
    return m;
  }

  async transition(rec: MoveRecord, from: MoveState, next: Omit<MoveTransition, 'at'>): Promise<MoveRecord> {
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
  async endPending(rec: MoveRecord, why: string): Promise<void> {
    try {
      await this.transition(rec, 'pending', {
        state: rec.issuedAt === null ? 'skipped' : 'failed',
        detail: rec.issuedAt === null ? why : `${rec.detail ?? `attempt ${rec.attempt} failed`}; ${why}`,
      });
    } catch (e) {
      if (!(e instanceof JournalRace)) throw e;
    }
  }

  async lockDestination(host: string): Promise<() => void> {
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

  comingTo(host: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const need of this.coming.get(host)?.values() ?? []) {
      for (const [rc, n] of Object.entries(need)) out[rc] = (out[rc] ?? 0) + n;
    }
    return out;
  }

  setComing(rec: MoveRecord, need: Record<string, number>): void {
    let byStep = this.coming.get(rec.to);
    if (!byStep) {
      byStep = new Map();
      this.coming.set(rec.to, byStep);
    }
    if (!byStep.has(rec.step)) this.comingAdds.set(rec.to, (this.comingAdds.get(rec.to) ?? 0) + 1);
    byStep.set(rec.step, need);
  }

  dropComing(step: number): void {
    for (const byStep of this.coming.values()) byStep.delete(step);
  }

  /** See comingAdds. */
  comingAddsTo(host: string): number {
    return this.comingAdds.get(host) ?? 0;
  }

  async quarantine(rec: MoveRecord, reason: string, novaFault: string | null): Promise<void> {
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

  async audit(action: AuditAction, rec: MoveRecord | null, detail: string): Promise<void> {
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

  iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
