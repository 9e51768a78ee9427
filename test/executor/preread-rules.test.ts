// When a pre-read (a pre-flight made before the move's slots were free) still stands in for a
// pre-flight now (issue 27): a claim of ours towards the destination that left `coming` since
// (Placement shows it now, or its move ended) was counted by the pre-read and leaves it usable;
// a claim added since was not counted, and makes the move read again.
import { describe, expect, it } from 'vitest';
import type { MoveRecord } from '../../src/executor/journal.js';
import { MemoryJournal } from '../../src/executor/memory-journal.js';
import { MoveDriver } from '../../src/executor/move-driver.js';
import { ActuatorError, type Clock, type ExecutorCloud } from '../../src/executor/ports.js';
import { RunBook } from '../../src/executor/run-book.js';
import { resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';

const clock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms / 1000))),
};

/** c1 -> c2 with room; os-migrateLive refused (the attempt ends there, its reads counted). */
function cloudCounting(): { cloud: ExecutorCloud; serverReads: () => number } {
  let reads = 0;
  const unused = (): never => {
    throw new Error('not used by a pre-flight');
  };
  const svc = (host: string) => ({ host, up: true, enabled: true, forcedDown: false, disabledReason: null });
  const cloud: ExecutorCloud = {
    getServer: (id) => {
      reads++;
      return Promise.resolve({
        id,
        status: 'ACTIVE',
        taskState: null,
        host: 'c1',
        fault: null,
        flavor: { vcpus: 2, ramMB: 4096 },
      });
    },
    listServersChangedSince: unused,
    listLiveMigrations: unused,
    listLiveMigrationsChangedSince: unused,
    getComputeService: unused,
    listComputeServices: () => Promise.resolve([svc('c1'), svc('c2'), svc('c3')]),
    getHostRoom: unused,
    getHostInventories: () =>
      Promise.resolve({
        MEMORY_MB: { total: 65536, reserved: 0, allocationRatio: 1 },
        VCPU: { total: 64, reserved: 0, allocationRatio: 1 },
      }),
    getHostUsages: () => Promise.resolve({ MEMORY_MB: 0 }),
    listHostAllocations: (h) =>
      Promise.resolve(new Map(h === 'c1' ? [['s1', { MEMORY_MB: 4096, VCPU: 2 }]] : [])),
    getServerAllocation: unused,
    liveMigrate: () => Promise.reject(new ActuatorError('refused', 'refused by the test', 400)),
    abortLiveMigration: unused,
  };
  return { cloud, serverReads: () => reads };
}

async function setUp() {
  const journal = new MemoryJournal();
  const settings = resolveExecutorSettings({ pollSeconds: 2 });
  const execution = {
    id: 'e1',
    aggregate: 'agg',
    planId: null,
    startedAt: new Date().toISOString(),
    startedBy: 'test',
  };
  const planned = [
    { step: 1, wave: 1, serverId: 's1', from: 'c1', to: 'c2', estimatedSeconds: 10 },
    // Another source's move towards the same destination, whose claim comes and goes.
    { step: 2, wave: 1, serverId: 's2', from: 'c3', to: 'c2', estimatedSeconds: 10 },
  ];
  await journal.createExecution(execution, planned);
  const { cloud, serverReads } = cloudCounting();
  const book = new RunBook(
    { journal, cloud, clock, settings, slots: new MigrationSlots(settings.limits), timeoutFor: () => 600 },
    { ...execution, state: 'running', endedAt: null },
    { deadline: null, shouldStop: () => false },
  );
  for (const m of await journal.listMoves('e1')) book.moves.set(m.step, m);
  return { book, driver: new MoveDriver(book), serverReads, other: book.move(2) as MoveRecord };
}

describe('a pre-read when the move starts', () => {
  it('is used although a claim of ours towards the destination left `coming` since', async () => {
    const { book, driver, serverReads, other } = await setUp();
    book.setComing(other, { MEMORY_MB: 8192 });
    await driver.preread(book.move(1));
    expect(book.counters.prereads).toBe(1);
    // Step 2's record was listed as scheduled: Placement shows its claim now.
    book.dropComing(2);
    const readsBefore = serverReads();
    await driver.drive(1, false);
    expect(book.counters).toMatchObject({ prereadsUsed: 1, prereadsStale: 0 });
    expect(serverReads()).toBe(readsBefore);
  });

  it('is read again when a claim of ours towards the destination was added since', async () => {
    const { book, driver, serverReads, other } = await setUp();
    await driver.preread(book.move(1));
    expect(book.counters.prereads).toBe(1);
    // Step 2 started towards the same destination: the pre-read's usages do not hold its claim.
    book.setComing(other, { MEMORY_MB: 8192 });
    const readsBefore = serverReads();
    await driver.drive(1, false);
    expect(book.counters).toMatchObject({ prereadsUsed: 0, prereadsStale: 1 });
    expect(serverReads()).toBe(readsBefore + 1);
  });

  it('is read again when a claim left `coming` and another of the same size was added', async () => {
    const { book, driver, serverReads, other } = await setUp();
    book.setComing(other, { MEMORY_MB: 8192 });
    await driver.preread(book.move(1));
    book.dropComing(2);
    // The same amounts coming as at the read, but not the same claim.
    book.setComing(other, { MEMORY_MB: 8192 });
    const readsBefore = serverReads();
    await driver.drive(1, false);
    expect(book.counters).toMatchObject({ prereadsUsed: 0, prereadsStale: 1 });
    expect(serverReads()).toBe(readsBefore + 1);
  });
});
