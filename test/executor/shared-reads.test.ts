// The reads pre-flight and the end of a move share (issue 27): each saved call must keep the
// safety the call gave. A refusal for want of room is decided on inventories read now; an
// allocation listed earlier is used only when it matches the server's flavor; a server missing
// from the shared listing of ends is read on its own.
import { describe, expect, it } from 'vitest';
import { ServerEndReads } from '../../src/executor/end-reads.js';
import { PlacementReads } from '../../src/executor/placement-reads.js';
import type { ExecutorCloud, HostRoomView, ServerView } from '../../src/executor/ports.js';
import { preflight } from '../../src/executor/preflight.js';
import { manualClock } from './manual-clock.js';

const server = (id: string, host: string, ramMB = 4096): ServerView => ({
  id,
  status: 'ACTIVE',
  taskState: null,
  host,
  fault: null,
  flavor: { vcpus: 2, ramMB },
});

type Calls = Map<string, number>;

/** A cloud for pre-flight: one server on c1, destination c2 whose inventory changes under us. */
function fakeCloud(state: {
  server: ServerView;
  listed: Record<string, number>;
  own: Record<string, number>;
  inventory: HostRoomView['inventories'];
  usages: HostRoomView['usages'];
}): { cloud: ExecutorCloud; calls: Calls } {
  const calls: Calls = new Map();
  const count = <T>(name: string, v: T): Promise<T> => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    return Promise.resolve(v);
  };
  const fail = (): never => {
    throw new Error('not used by pre-flight');
  };
  const svc = (host: string) => ({ host, up: true, enabled: true, forcedDown: false, disabledReason: null });
  const cloud: ExecutorCloud = {
    getServer: () => count('getServer', state.server),
    listServersChangedSince: fail,
    listLiveMigrations: fail,
    listLiveMigrationsChangedSince: fail,
    getComputeService: (h) => count('getComputeService', svc(h)),
    listComputeServices: fail,
    getHostRoom: fail,
    getHostInventories: () => count('getHostInventories', structuredClone(state.inventory)),
    getHostUsages: () => count('getHostUsages', { ...state.usages }),
    listHostAllocations: () =>
      count('listHostAllocations', new Map([[state.server.id, { ...state.listed }]])),
    getServerAllocation: () => count('getServerAllocation', { ...state.own }),
    liveMigrate: fail,
    abortLiveMigration: fail,
  };
  return { cloud, calls };
}

const move = { step: 1, wave: 1, serverId: 's1', from: 'c1', to: 'c2', estimatedSeconds: 10 };
const inv = (memory: number) => ({
  MEMORY_MB: { total: memory, reserved: 0, allocationRatio: 1 },
  VCPU: { total: 16, reserved: 0, allocationRatio: 1 },
});

describe('pre-flight on shared Placement reads', () => {
  it('says "fits" on kept inventories, but refuses only on inventories read now', async () => {
    const clock = manualClock();
    const state = {
      server: server('s1', 'c1'),
      listed: { MEMORY_MB: 4096, VCPU: 2 },
      own: { MEMORY_MB: 4096, VCPU: 2 },
      inventory: inv(16384),
      usages: { MEMORY_MB: 8192, VCPU: 4 },
    };
    const { cloud, calls } = fakeCloud(state);
    const reads = {
      service: (h: string) => cloud.getComputeService(h),
      placement: new PlacementReads(cloud, clock),
    };
    expect((await preflight(cloud, move, {}, reads)).ok).toBe(true);
    expect((await preflight(cloud, move, {}, reads)).ok).toBe(true);
    // Twice: inventories and the source's allocations read once, the server and usages each time.
    expect(calls.get('getHostInventories')).toBe(1);
    expect(calls.get('listHostAllocations')).toBe(1);
    expect(calls.get('getHostUsages')).toBe(2);
    expect(calls.get('getServer')).toBe(2);
    expect(calls.get('getServerAllocation') ?? 0).toBe(0);

    // Usage grew past the kept reading's capacity; the inventory grew too. "No room" on the kept
    // reading is checked again on a fresh one, which lets the move through.
    state.usages = { MEMORY_MB: 14000, VCPU: 4 };
    state.inventory = inv(32768);
    expect((await preflight(cloud, move, {}, reads)).ok).toBe(true);
    expect(calls.get('getHostInventories')).toBe(2);

    // Usage past the kept capacity again, and the inventory shrank: refused, with the capacity
    // read now.
    state.usages = { MEMORY_MB: 30000, VCPU: 4 };
    state.inventory = inv(16384);
    const refused = await preflight(cloud, move, {}, reads);
    expect(refused).toMatchObject({ ok: false, wait: false });
    expect(refused.ok ? '' : refused.reason).toBe(
      'no room on c2 for MEMORY_MB: used 30000 + needed 4096 > capacity 16384',
    );
    expect(calls.get('getHostInventories')).toBe(3);
  });

  it("reads the server's own allocation when the listed one does not match its flavor (a resize)", async () => {
    const clock = manualClock();
    const state = {
      server: server('s1', 'c1', 8192),
      listed: { MEMORY_MB: 4096, VCPU: 2 },
      own: { MEMORY_MB: 8192, VCPU: 2 },
      inventory: inv(16384),
      usages: { MEMORY_MB: 4096, VCPU: 2 },
    };
    const { cloud, calls } = fakeCloud(state);
    const reads = {
      service: (h: string) => cloud.getComputeService(h),
      placement: new PlacementReads(cloud, clock),
    };
    const r = await preflight(cloud, move, {}, reads);
    expect(r).toEqual({ ok: true, need: { MEMORY_MB: 8192, VCPU: 2 } });
    expect(calls.get('getServerAllocation')).toBe(1);
  });
});

describe('server reads at the end of migrations', () => {
  it('shares one listing among ends close together, and reads alone a server it does not show', async () => {
    const clock = manualClock();
    const calls: Calls = new Map();
    let since: number | null = null;
    const cloud = {
      getServer: async (id: string) => {
        calls.set('getServer', (calls.get('getServer') ?? 0) + 1);
        return server(id, 'c2');
      },
      listServersChangedSince: async (t: number) => {
        calls.set('list', (calls.get('list') ?? 0) + 1);
        since = t;
        return [server('a', 'c2'), server('b', 'c3'), { ...server('c', 'c2'), status: 'DELETED' }];
      },
    };
    let followed = 4;
    const reads = new ServerEndReads(cloud, clock, 1000, () => followed);
    const a = reads.read('a', 50_000);
    const b = reads.read('b', 40_000);
    const c = reads.read('c', 45_000);
    expect(calls.size).toBe(0);
    clock.advance(1000);
    expect((await a)?.host).toBe('c2');
    expect((await b)?.host).toBe('c3');
    // Listed as deleted: read on its own (a 404 is what says the server is gone).
    expect((await c)?.host).toBe('c2');
    expect(calls.get('list')).toBe(1);
    expect(calls.get('getServer')).toBe(1);
    // From the oldest record's creation, less the overlap.
    expect(since).toBe(37_000);

    // The only migration followed ends: read at once, on its own.
    followed = 1;
    expect((await reads.read('d', 60_000))?.id).toBe('d');
    expect(calls.get('getServer')).toBe(2);
    expect(calls.get('list')).toBe(1);
  });
});
