// Follows every live migration of this process with one listing per poll: GET /os-migrations
// filtered on changes-since, instead of a read per server. Moves register the servers they
// follow; each poll hands the records that changed to the moves that wait for them. The listing
// starts at the newest updated_at Nova showed (its own clock, less an overlap), so it stays small
// whatever the history, and a notification (or anything else) can ask for a poll at once.
//
// What the listing cannot show is left to the moves: a record never saved since its creation has
// no updated_at, and one whose server was deleted leaves the listing (Nova soft-deletes it). A
// move that hears nothing for a while reads its server and records directly (MoveDriver).
import type { Logger } from '../cloud/log.js';
import { isFinalMigration } from './attempt.js';
import type { Clock, ExecutorCloud, LiveMigrationView } from './ports.js';

export interface WatchSettings {
  /** The slowest the listing is polled while anything is followed (settings.pollSeconds). */
  pollSeconds: number;
  /** How far Nova's clock may lag ours: the reach of the first listing, with nothing seen yet. */
  clockSkewSeconds: number;
}

/**
 * Records are listed again from this long before the newest updated_at seen: Nova stores
 * updated_at in whole seconds, a save commits a moment after its timestamp, and each compute
 * host writes with its own clock.
 */
export const LISTING_OVERLAP_MS = 3000;

/** The fastest poll of the regular cadence, as a share of pollSeconds. */
const FASTEST_POLL_SHARE = 0.25;

/**
 * Polls aimed at a migration's expected end (see EndTarget): the closest two listings may be, the
 * follow-up after an aimed poll that did not show the end yet, and the step by which the aim
 * learns, all as shares of pollSeconds. The aim moves later by HIT_QUANTILE / (1 - HIT_QUANTILE)
 * steps per miss and earlier by one per hit, so that about HIT_QUANTILE of the aimed polls show
 * the end: a stochastic estimate of that quantile of (end - expected end).
 */
const AIMED_SPACING_SHARE = 0.02;
const AIMED_FOLLOW_UP_SHARE = 0.1;
const AIM_STEP_SHARE = 0.02;
const HIT_QUANTILE = 0.8;

/**
 * One followed migration's end, for the poll aimed at it: the call went out at `sentAt` (our
 * clock) and is expected to take `expectedMs`; its record should turn final at about
 * sentAt + expectedMs + the learned aim. `stage`: 'aim' until a listing made at or after that
 * time; 'follow-up' (at `followUpAt`) when that listing did not show it final; then 'done' (the
 * regular cadence).
 */
interface EndTarget {
  sentAt: number;
  expectedMs: number;
  stage: 'aim' | 'follow-up' | 'done';
  followUpAt: number;
}

interface Followed {
  followers: number;
  records: Map<number, LiveMigrationView>;
  version: number;
  waiters: Set<() => void>;
  /** Seconds the moves following it expect their migrations to take (the plan's estimates). */
  expected: number[];
  /** The ends of the followers' calls made by this process (none for one found after a restart). */
  ends: EndTarget[];
}

/** One move's view of the watch while it follows a server. */
export interface WatchHandle {
  /** The server's live-migration records seen so far, newest first. */
  records(): LiveMigrationView[];
  /** Bumped each time a listing (or a direct read) shows something new about the server. */
  version(): number;
  /** Resolves true when the version passes `seen`, false after `timeoutMs` without that. */
  changed(seen: number, timeoutMs: number): Promise<boolean>;
  /** Records read directly (a move's own read of the server's records). */
  learn(records: LiveMigrationView[]): void;
  close(): void;
}

export interface WatchCounters {
  /** Listings made (each one or more pages of os-migrations). */
  polls: number;
  /** Listings that failed (asked again at the next poll). */
  pollErrors: number;
  /** Listings aimed at an expected end that showed it ended, and that did not. */
  aimedHits: number;
  aimedMisses: number;
}

export class MigrationWatch {
  private readonly followed = new Map<string, Followed>();
  /** Where the next listing starts (Nova's clock); null until a listing showed a record. */
  private cursor: number | null = null;
  /** An earlier start asked for by a move resumed after a restart (its intent, less the skew). */
  private reachBack: number | null = null;
  private running = false;
  private poke: (() => void) | null = null;
  private poked = false;
  /** Observed created-to-updated seconds of completed records, for the poll cadence. */
  private observedSeconds: number | null = null;
  private readonly observedIds = new Set<number>();
  /** When the last listing was asked (our clock); null before the first. */
  private lastPollAt: number | null = null;
  /** How long after sentAt + expectedMs a record turns final, as learned from aimed polls (ms). */
  private aimMs = 0;
  readonly counters: WatchCounters = { polls: 0, pollErrors: 0, aimedHits: 0, aimedMisses: 0 };

  constructor(
    private readonly cloud: ExecutorCloud,
    private readonly clock: Clock,
    private readonly settings: WatchSettings,
    private readonly log?: Logger,
  ) {}

  /**
   * Starts following a server. `reachBackTo` (epoch ms): the listing must reach that far back
   * once (a move found in flight after a restart); null for a call made just now. `sentAt`:
   * when this process sent the call (our clock), so that a listing can be aimed at its expected
   * end; null when unknown (found after a restart).
   */
  follow(
    serverId: string,
    opts: { expectedSeconds: number; reachBackTo: number | null; sentAt?: number | null },
  ): WatchHandle {
    let f = this.followed.get(serverId);
    if (!f) {
      f = { followers: 0, records: new Map(), version: 0, waiters: new Set(), expected: [], ends: [] };
      this.followed.set(serverId, f);
    }
    const entry = f;
    entry.followers++;
    entry.expected.push(opts.expectedSeconds);
    const end: EndTarget | null =
      opts.sentAt === undefined || opts.sentAt === null
        ? null
        : { sentAt: opts.sentAt, expectedMs: opts.expectedSeconds * 1000, stage: 'aim', followUpAt: 0 };
    if (end) entry.ends.push(end);
    if (opts.reachBackTo !== null) {
      this.reachBack = Math.min(this.reachBack ?? Number.POSITIVE_INFINITY, opts.reachBackTo);
      this.pollNow();
    }
    this.ensureRunning();
    let closed = false;
    return {
      records: () => [...entry.records.values()].sort((a, b) => b.id - a.id),
      version: () => entry.version,
      changed: (seen, timeoutMs) => this.changed(entry, seen, timeoutMs),
      learn: (records) => {
        if (this.merge(entry, records)) this.bump(entry);
      },
      close: () => {
        if (closed) return;
        closed = true;
        entry.followers--;
        const i = entry.expected.indexOf(opts.expectedSeconds);
        if (i >= 0) entry.expected.splice(i, 1);
        if (end) entry.ends.splice(entry.ends.indexOf(end), 1);
        if (entry.followers === 0) {
          this.followed.delete(serverId);
          for (const w of entry.waiters) w();
        }
      },
    };
  }

  /** Poll at once (a notification said a migration moved on, a call was just accepted). */
  pollNow(): void {
    this.poked = true;
    this.poke?.();
  }

  /** Listings tried so far, failed ones included: a silence means something only across listings. */
  listings(): number {
    return this.counters.polls + this.counters.pollErrors;
  }

  /** Servers followed now. */
  size(): number {
    return this.followed.size;
  }

  private changed(f: Followed, seen: number, timeoutMs: number): Promise<boolean> {
    if (f.version !== seen || f.followers === 0) return Promise.resolve(f.version !== seen);
    return new Promise<boolean>((resolve, reject) => {
      let done = false;
      const waiter = () => {
        if (done) return;
        done = true;
        f.waiters.delete(waiter);
        resolve(f.version !== seen);
      };
      f.waiters.add(waiter);
      // A clock that fails (a process dying in the crash tests) fails the waiting move too.
      this.clock.sleep(timeoutMs).then(waiter, (e: unknown) => {
        if (done) return;
        done = true;
        f.waiters.delete(waiter);
        reject(e);
      });
    });
  }

  private bump(f: Followed): void {
    f.version++;
    for (const w of [...f.waiters]) w();
  }

  /** true when something new was learnt. */
  private merge(f: Followed, records: LiveMigrationView[]): boolean {
    let news = false;
    for (const r of records) {
      const old = f.records.get(r.id);
      if (
        old &&
        old.status === r.status &&
        old.updatedAt === r.updatedAt &&
        old.dest === r.dest &&
        old.source === r.source
      )
        continue;
      f.records.set(r.id, r);
      news = true;
    }
    return news;
  }

  private ensureRunning(): void {
    if (this.running) return;
    this.running = true;
    void this.run().then((ended) => {
      this.running = false;
      // A follower that came while the loop was ending (not after a clock that failed: the next
      // follow starts it again).
      if (ended === 'idle' && this.followed.size > 0) this.ensureRunning();
    });
  }

  private async run(): Promise<'idle' | 'clock-failed'> {
    while (this.followed.size > 0) {
      // A call just accepted has no record with an updated_at yet: the first listing waits too.
      if (!this.poked) {
        try {
          await Promise.race([
            this.clock.sleep(this.nextPollAt() - this.clock.now()),
            new Promise<void>((resolve) => {
              this.poke = resolve;
            }),
          ]);
        } catch {
          this.poke = null;
          return 'clock-failed';
        }
      }
      this.poke = null;
      this.poked = false;
      if (this.followed.size === 0) return 'idle';
      await this.pollOnce();
    }
    return 'idle';
  }

  /**
   * The regular cadence from the last listing, or earlier the expected end of a migration no
   * listing has shown ended yet (and a follow-up shortly after an aimed listing that did not
   * show it), never closer than AIMED_SPACING_SHARE of a poll to the last listing.
   */
  private nextPollAt(): number {
    const now = this.clock.now();
    const last = this.lastPollAt ?? now;
    const pollMs = this.settings.pollSeconds * 1000;
    let next = last + this.intervalMs();
    for (const f of this.followed.values()) {
      if (f.ends.length === 0 || this.endedRecord(f) !== null) continue;
      for (const e of f.ends) {
        const at =
          e.stage === 'aim'
            ? e.sentAt + e.expectedMs + this.aimMs
            : e.stage === 'follow-up'
              ? e.followUpAt
              : null;
        if (at !== null && at > last) next = Math.min(next, at);
      }
    }
    return Math.max(next, last + pollMs * AIMED_SPACING_SHARE);
  }

  /** The followed server's newest record when it is final, else null. */
  private endedRecord(f: Followed): LiveMigrationView | null {
    let newest: LiveMigrationView | null = null;
    for (const r of f.records.values()) if (newest === null || r.id > newest.id) newest = r;
    return newest !== null && isFinalMigration(newest.status) ? newest : null;
  }

  /**
   * After a listing asked at `askedAt`: each end it was aimed at (or its follow-up) is judged. A
   * final record moves the aim earlier, none later (see HIT_QUANTILE); a miss gets one follow-up.
   */
  private judgeAims(askedAt: number): void {
    const pollMs = this.settings.pollSeconds * 1000;
    const step = pollMs * AIM_STEP_SHARE;
    for (const f of this.followed.values()) {
      const record = this.endedRecord(f);
      const ended = record !== null;
      for (const e of f.ends) {
        if (e.stage === 'follow-up' && (ended || e.followUpAt <= askedAt)) e.stage = 'done';
        if (e.stage !== 'aim') continue;
        // A refusal or a failure says nothing of how long a migration takes.
        if (ended && record.status !== 'completed') {
          e.stage = 'done';
          continue;
        }
        if (ended && e.sentAt + e.expectedMs + this.aimMs > askedAt) {
          // Shown ended before the aim came: the aim is late.
          e.stage = 'done';
          this.aimMs -= step;
          continue;
        }
        if (e.sentAt + e.expectedMs + this.aimMs > askedAt) continue;
        if (ended) {
          this.counters.aimedHits++;
          this.aimMs -= step;
          e.stage = 'done';
        } else {
          this.counters.aimedMisses++;
          this.aimMs += (step * HIT_QUANTILE) / (1 - HIT_QUANTILE);
          e.stage = 'follow-up';
          e.followUpAt = askedAt + pollMs * AIMED_FOLLOW_UP_SHARE;
        }
      }
    }
  }

  /**
   * About one listing per migration ending: the expected time between two endings (the
   * migrations' duration over how many run), between a quarter of pollSeconds and pollSeconds.
   */
  private intervalMs(): number {
    const slowest = this.settings.pollSeconds * 1000;
    let n = 0;
    let sum = 0;
    for (const f of this.followed.values()) {
      for (const e of f.expected) {
        n++;
        sum += e;
      }
    }
    if (n === 0) return slowest;
    const perMigration = this.observedSeconds ?? sum / n;
    return Math.min(slowest, Math.max(slowest * FASTEST_POLL_SHARE, (perMigration * 1000) / n));
  }

  private async pollOnce(): Promise<void> {
    const reachBack = this.reachBack;
    let since = this.cursor ?? this.clock.now() - this.settings.clockSkewSeconds * 1000;
    if (reachBack !== null) since = Math.min(since, reachBack);
    const askedAt = this.clock.now();
    this.lastPollAt = askedAt;
    try {
      const { records, newestOnFirstPage } = await this.cloud.listLiveMigrationsChangedSince(since);
      this.counters.polls++;
      if (reachBack !== null && this.reachBack === reachBack) this.reachBack = null;
      const byServer = new Map<string, LiveMigrationView[]>();
      for (const r of records) {
        if (r.status === 'completed' && r.updatedAt !== null) this.observe(r);
        if (!this.followed.has(r.serverId)) continue;
        const list = byServer.get(r.serverId);
        if (list) list.push(r);
        else byServer.set(r.serverId, [r]);
      }
      if (newestOnFirstPage !== null) {
        const next = newestOnFirstPage - LISTING_OVERLAP_MS;
        this.cursor = this.cursor === null ? next : Math.max(this.cursor, next);
      }
      const news: Followed[] = [];
      for (const [serverId, list] of byServer) {
        const f = this.followed.get(serverId);
        if (f && this.merge(f, list)) news.push(f);
      }
      // Judged before the followers wake (they may close and take their ends along).
      this.judgeAims(askedAt);
      for (const f of news) this.bump(f);
    } catch (e) {
      this.counters.pollErrors++;
      this.log?.debug('executor: listing of live migrations failed, asking again at the next poll', {
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }

  private observe(r: LiveMigrationView): void {
    // Listings overlap: each record counts once.
    if (this.observedIds.has(r.id)) return;
    if (this.observedIds.size >= 10_000) this.observedIds.clear();
    this.observedIds.add(r.id);
    const seconds = ((r.updatedAt ?? r.createdAt) - r.createdAt) / 1000;
    if (!(seconds > 0)) return;
    // A moving average: the cadence follows the cloud's migrations as they are now.
    this.observedSeconds =
      this.observedSeconds === null ? seconds : this.observedSeconds * 0.8 + seconds * 0.2;
  }
}
