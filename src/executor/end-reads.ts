// The server reads that judge a migration whose record the listing shows final, shared: ends that
// come close together are read with one listing of the servers changed since the oldest of their
// records began (GET /servers/detail?changes-since), instead of one GET per server.
//
// Safe because the read is the same one, only shared: each server is judged on its state as
// Nova shows it after its record turned final (the listing is made after every request in it),
// and a server the listing does not show, or shows deleted, is read on its own as before
// (a compute host whose clock lags could save it with an older updated_at). The wait to fill a
// batch delays no migration: the move's slots are already free (RunBook.freeSlot), and a batch
// is sent at once when every migration followed is in it.
import type { Clock, ExecutorCloud, ServerView } from './ports.js';

/** Records are judged against servers changed from this long before their creation. */
const SERVER_OVERLAP_MS = 3000;

interface Request {
  serverId: string;
  sinceMs: number;
  resolve: (s: ServerView | null) => void;
  reject: (e: unknown) => void;
}

export interface EndReadCounters {
  /** Batches read with one listing of servers. */
  listings: number;
  /** Servers read on their own (a batch of one, or not in the listing). */
  single: number;
}

export class ServerEndReads {
  private batch: Request[] = [];
  private waiting = false;
  readonly counters: EndReadCounters = { listings: 0, single: 0 };

  constructor(
    private readonly cloud: Pick<ExecutorCloud, 'getServer' | 'listServersChangedSince'>,
    private readonly clock: Clock,
    /** How long the first end of a batch waits for others (virtual ms on a simulator's clock). */
    private readonly windowMs: number,
    /** Migrations followed now: when all of them are in the batch, nobody else can join it. */
    private readonly followed: () => number,
  ) {}

  /** The server after its migration's record turned final; `createdAt` is that record's (Nova's clock). */
  read(serverId: string, createdAt: number): Promise<ServerView | null> {
    return new Promise<ServerView | null>((resolve, reject) => {
      this.batch.push({ serverId, sinceMs: createdAt - SERVER_OVERLAP_MS, resolve, reject });
      if (this.batch.length >= this.followed()) {
        void this.flush();
        return;
      }
      if (this.waiting) return;
      this.waiting = true;
      this.clock.sleep(this.windowMs).then(
        () => {
          this.waiting = false;
          void this.flush();
        },
        (e: unknown) => {
          // A clock that fails (a process dying in the crash tests) fails the waiting reads too.
          this.waiting = false;
          for (const r of this.batch.splice(0)) r.reject(e);
        },
      );
    });
  }

  private async flush(): Promise<void> {
    const batch = this.batch.splice(0);
    if (batch.length === 0) return;
    if (batch.length === 1) {
      await this.single(batch[0] as Request);
      return;
    }
    let byId: Map<string, ServerView>;
    try {
      const since = Math.min(...batch.map((r) => r.sinceMs));
      byId = new Map((await this.cloud.listServersChangedSince(since)).map((s) => [s.id, s]));
      this.counters.listings++;
    } catch {
      // The listing failed: each server is read on its own (whose failure its move handles).
      byId = new Map();
    }
    await Promise.all(
      batch.map((r) => {
        const s = byId.get(r.serverId);
        if (s && s.status !== 'DELETED') {
          r.resolve(s);
          return Promise.resolve();
        }
        return this.single(r);
      }),
    );
  }

  private async single(r: Request): Promise<void> {
    this.counters.single++;
    try {
      r.resolve(await this.cloud.getServer(r.serverId));
    } catch (e) {
      r.reject(e);
    }
  }
}
