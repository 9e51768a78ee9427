// The start of an execution (issue 27): while the execution is written to the journal, the
// readings its first pre-flights share are taken at once (the clients' microversions and
// providers, the compute services, the first moves' destination inventories and source
// allocations), and the pre-flights then use them instead of reading again.
import { describe, expect, it } from 'vitest';
import {
  Executor,
  MemoryJournal,
  MigrationSlots,
  resolveExecutorSettings,
} from '../../src/executor/index.js';
import type { ExecutionRecord, PlannedMove } from '../../src/executor/journal.js';
import type { Clock, ExecutorCloud } from '../../src/executor/ports.js';

/** A journal whose createExecution waits until the test lets it through. */
class GatedJournal extends MemoryJournal {
  private open: () => void = () => {};
  readonly gate = new Promise<void>((resolve) => {
    this.open = resolve;
  });
  writing = false;

  release(): void {
    this.open();
  }

  override async createExecution(
    execution: Omit<ExecutionRecord, 'state' | 'endedAt'>,
    moves: PlannedMove[],
  ): Promise<void> {
    this.writing = true;
    await this.gate;
    await super.createExecution(execution, moves);
  }
}

const clock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms / 1000))),
};

/** Counts every read; the servers are gone, so each pre-flight refuses its move at once. */
function countingCloud() {
  const calls = new Map<string, string[]>();
  let notify: () => void = () => {};
  const count = <T>(name: string, arg: string, v: T): Promise<T> => {
    calls.set(name, [...(calls.get(name) ?? []), arg]);
    notify();
    return Promise.resolve(v);
  };
  const unused = (): never => {
    throw new Error('not used when every server is gone');
  };
  const inv = { MEMORY_MB: { total: 65536, reserved: 0, allocationRatio: 1 } };
  const cloud: ExecutorCloud = {
    prepare: () => count('prepare', '', undefined),
    getServer: (id) => count('getServer', id, null),
    listServersChangedSince: unused,
    listLiveMigrations: unused,
    listLiveMigrationsChangedSince: unused,
    getComputeService: unused,
    listComputeServices: () =>
      count('listComputeServices', '', [
        ...['a1', 'a2', 'a3', 'b1', 'b2'].map((host) => ({
          host,
          up: true,
          enabled: true,
          forcedDown: false,
          disabledReason: null,
        })),
      ]),
    getHostRoom: unused,
    getHostInventories: (h) => count('getHostInventories', h, inv),
    getHostUsages: (h) => count('getHostUsages', h, { MEMORY_MB: 0 }),
    listHostAllocations: (h) => count('listHostAllocations', h, new Map()),
    getServerAllocation: unused,
    liveMigrate: unused,
    abortLiveMigration: unused,
  };
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      notify = () => {
        if (done()) resolve();
      };
      notify();
    });
  return { cloud, calls, until };
}

const mv = (step: number, wave: number, from: string, to: string, after?: number[]): PlannedMove => ({
  step,
  wave,
  serverId: `s${step}`,
  from,
  to,
  estimatedSeconds: 10,
  ...(after ? { after } : {}),
});

describe('the start of an execution', () => {
  it("reads what the first moves' pre-flights share while the execution is written, and once", async () => {
    const journal = new GatedJournal();
    const { cloud, calls, until } = countingCloud();
    const settings = resolveExecutorSettings({ pollSeconds: 2, limits: { global: 20 } });
    const executor = new Executor({
      journal,
      cloud,
      clock,
      settings,
      slots: new MigrationSlots(settings.limits),
      timeoutFor: () => 600,
    });
    const moves = [
      mv(1, 1, 'a1', 'b1'),
      mv(2, 1, 'a2', 'b2'),
      // a1's second move and a later wave's move are not the first to start: not warmed.
      mv(3, 1, 'a1', 'b2'),
      mv(4, 2, 'a3', 'b1'),
    ];
    const run = executor.start(
      { aggregate: 'agg', planId: null, startedBy: 'test', moves },
      { deadline: null, shouldStop: () => false },
    );
    await until(
      () =>
        (calls.get('getHostInventories')?.length ?? 0) === 2 &&
        (calls.get('listHostAllocations')?.length ?? 0) === 2 &&
        calls.has('listComputeServices') &&
        calls.has('prepare'),
    );
    // All of it before the execution is stored, and before any move's own reads.
    expect(journal.writing).toBe(true);
    expect(calls.has('getServer')).toBe(false);
    expect(calls.get('getHostInventories')?.sort()).toEqual(['b1', 'b2']);
    expect(calls.get('listHostAllocations')?.sort()).toEqual(['a1', 'a2']);
    journal.release();
    const summary = await run;
    // Every server is gone: each move's pre-flight refused it, on the readings already taken.
    expect(summary.counts.skipped).toBe(4);
    expect(calls.get('getServer')?.length).toBe(4);
    expect(calls.get('listComputeServices')?.length).toBe(1);
    expect(calls.get('getHostInventories')?.sort()).toEqual(['b1', 'b2']);
    expect(calls.get('listHostAllocations')?.sort()).toEqual(['a1', 'a2', 'a3']);
  });
});
