// A process that dies: once `proc.dead` is set, its journal and cloud calls throw and its clock's
// waits never end, as if the process had been killed at that instant. Calls already sent stay
// sent (the cloud acts on them); nothing after the crash point reaches the journal.
import type {
  ExecutionJournal,
  ExecutionRecord,
  ExecutionState,
  MoveRecord,
  MoveState,
  MoveTransition,
  PlannedMove,
} from '../../src/executor/journal.js';
import type { Clock, ExecutorCloud } from '../../src/executor/ports.js';

export class Crash extends Error {
  constructor() {
    super('the process was killed');
  }
}

export interface Proc {
  dead: boolean;
  /** Called once, at the crash: what a test waits on instead of polling `dead`. */
  onDeath?: () => void;
}

function kill(proc: Proc): void {
  if (proc.dead) return;
  proc.dead = true;
  proc.onDeath?.();
}

/** Resolves at the crash; fails after `timeoutMs` naming `what`. */
export function death(proc: Proc, what: string, timeoutMs = 20_000): Promise<void> {
  if (proc.dead) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
    proc.onDeath = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

export type CrashPoint =
  | { kind: 'transition'; when: 'before' | 'after'; to: MoveState; from?: MoveState; step?: number }
  | { kind: 'call'; when: 'before' | 'after'; call: 'liveMigrate' | 'abortLiveMigration'; serverId?: string };

const never = new Promise<never>(() => {});

export function dyingJournal(inner: ExecutionJournal, proc: Proc, point: CrashPoint): ExecutionJournal {
  const alive = () => {
    if (proc.dead) throw new Crash();
  };
  const hits = (step: number, from: MoveState, next: MoveTransition) =>
    point.kind === 'transition' &&
    point.to === next.state &&
    (point.from === undefined || point.from === from) &&
    (point.step === undefined || point.step === step);
  return {
    async createExecution(e: Omit<ExecutionRecord, 'state' | 'endedAt'>, moves: PlannedMove[]) {
      alive();
      return inner.createExecution(e, moves);
    },
    async transitionMove(id: string, step: number, from: MoveState, next: MoveTransition) {
      alive();
      const hit = hits(step, from, next);
      if (hit && point.when === 'before') {
        kill(proc);
        throw new Crash();
      }
      const ok = await inner.transitionMove(id, step, from, next);
      if (hit && ok) {
        kill(proc);
        throw new Crash();
      }
      alive();
      return ok;
    },
    async finishExecution(id: string, state: Exclude<ExecutionState, 'running'>, at: string) {
      alive();
      return inner.finishExecution(id, state, at);
    },
    async getExecution(id: string) {
      alive();
      return inner.getExecution(id);
    },
    async listMoves(id: string): Promise<MoveRecord[]> {
      alive();
      return inner.listMoves(id);
    },
    async listUnfinishedExecutions() {
      alive();
      return inner.listUnfinishedExecutions();
    },
  };
}

export function dyingCloud(inner: ExecutorCloud, proc: Proc, point: CrashPoint): ExecutorCloud {
  const wrap = <A extends unknown[], R>(name: keyof ExecutorCloud, f: (...a: A) => Promise<R>) => {
    return async (...a: A): Promise<R> => {
      if (proc.dead) throw new Crash();
      const hit =
        point.kind === 'call' &&
        point.call === name &&
        (point.serverId === undefined || point.serverId === a[0]);
      if (hit && point.when === 'before') {
        kill(proc);
        throw new Crash();
      }
      const r = await f(...a);
      if (hit || proc.dead) {
        kill(proc);
        throw new Crash();
      }
      return r;
    };
  };
  return {
    getServer: wrap('getServer', (id: string) => inner.getServer(id)),
    listServersChangedSince: wrap('listServersChangedSince', (t: number) => inner.listServersChangedSince(t)),
    listLiveMigrations: wrap('listLiveMigrations', (id: string) => inner.listLiveMigrations(id)),
    listLiveMigrationsChangedSince: wrap('listLiveMigrationsChangedSince', (since: number) =>
      inner.listLiveMigrationsChangedSince(since),
    ),
    getComputeService: wrap('getComputeService', (h: string) => inner.getComputeService(h)),
    listComputeServices: wrap('listComputeServices', () => inner.listComputeServices()),
    getHostRoom: wrap('getHostRoom', (h: string) => inner.getHostRoom(h)),
    getHostInventories: wrap('getHostInventories', (h: string) => inner.getHostInventories(h)),
    getHostUsages: wrap('getHostUsages', (h: string) => inner.getHostUsages(h)),
    listHostAllocations: wrap('listHostAllocations', (h: string) => inner.listHostAllocations(h)),
    getServerAllocation: wrap('getServerAllocation', (id: string) => inner.getServerAllocation(id)),
    liveMigrate: wrap('liveMigrate', (id: string, h: string) => inner.liveMigrate(id, h)),
    abortLiveMigration: wrap('abortLiveMigration', (id: string, m: number) =>
      inner.abortLiveMigration(id, m),
    ),
  };
}

export function dyingClock(inner: Clock, proc: Proc): Clock {
  return {
    now: () => inner.now(),
    sleep: async (ms) => {
      if (proc.dead) return never;
      await inner.sleep(ms);
      if (proc.dead) return never;
    },
  };
}
