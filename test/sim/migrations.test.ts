import { describe, expect, it } from 'vitest';
import { estimateMigrationSeconds } from '../../src/planner/cost-model.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import {
  abortMigration,
  forceCompleteMigration,
  NO_VALID_HOST,
  NO_VALID_HOST_PLACEMENT,
  startLiveMigration,
} from '../../src/sim/migrations.js';
import { SimError, DEFAULT_TIMING as T } from '../../src/sim/model.js';
import { frozenCloud, host, server, snapshot, usage } from './fixtures.js';

const twoHosts = () =>
  snapshot([host('c1'), host('c2'), host('c3')], [server(1, 'c1'), server(2, 'c1'), server(3, 'c1')]);
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('live migration timing', () => {
  it('runs for the time the cost model gives, through Nova statuses, then moves the server', () => {
    const cloud = frozenCloud(twoHosts());
    const expected = estimateMigrationSeconds({ ramMB: 8192 }, DEFAULT_POLICY.costModel);
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    expect(m.durationSeconds).toBe(expected);
    expect(m.status).toBe('accepted');
    expect(m.updatedMs).toBeNull();
    expect(cloud.serversByUuid.get(id(1))?.taskState).toBe('migrating');
    cloud.advance(T.scheduleSeconds);
    expect(m.status).toBe('preparing');
    expect(m.updatedMs).not.toBeNull();
    cloud.advance(T.prepareSeconds);
    expect(m.status).toBe('running');
    cloud.advance(expected - T.scheduleSeconds - T.prepareSeconds - 0.01);
    expect(m.status).toBe('running');
    expect(cloud.serversByUuid.get(id(1))?.host).toBe('c1');
    cloud.advance(0.02);
    // The server is done (on c2, ACTIVE, no task state) while its record still says running.
    const s = cloud.serversByUuid.get(id(1));
    expect(s?.host).toBe('c2');
    expect(s?.status).toBe('ACTIVE');
    expect(s?.taskState).toBeNull();
    expect(m.status).toBe('running');
    expect(cloud.placement.consumers.has(m.uuid)).toBe(true);
    cloud.advance(T.completionLagSeconds);
    expect(m.status).toBe('completed');
    expect(cloud.placement.consumers.has(m.uuid)).toBe(false);
    expect(cloud.hostsByName.get('c2')?.servers).toContain(s?.order);
    expect(cloud.hostsByName.get('c1')?.servers).not.toContain(s?.order);
  });

  it('stamps each status change at its own virtual time, however late the clock is read', () => {
    const cloud = frozenCloud(twoHosts());
    const t0 = cloud.nowMs();
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    cloud.advance(3600);
    expect(m.status).toBe('completed');
    expect(m.updatedMs).toBe(t0 + (m.durationSeconds + T.completionLagSeconds) * 1000);
  });

  it('takes the timings it is given', () => {
    const cloud = frozenCloud(twoHosts(), {
      timing: { scheduleSeconds: 0, prepareSeconds: 0, holdSeconds: 3, completionLagSeconds: 0 },
    });
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    cloud.advance(0);
    expect(m.status).toBe('running');
    cloud.advance(3);
    expect(m.status).toBe('completed');
  });
});

describe('early refusals below microversion 2.34', () => {
  it('checks the destination while the API call waits: a refusal throws 400 and leaves an error record', () => {
    const snap = twoHosts();
    (snap.hosts[2] as { service: { status: string } }).service.status = 'disabled';
    const cloud = frozenCloud(snap);
    // Placement finds no candidate on a disabled host (empty reason); a filter refuses the source.
    const answers = [
      ['c3', NO_VALID_HOST_PLACEMENT],
      ['c1', NO_VALID_HOST],
    ] as const;
    for (const [host, message] of answers) {
      try {
        startLiveMigration(cloud, { serverUuid: id(1), host, synchronousChecks: true });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(SimError);
        expect((e as SimError).status).toBe(400);
        expect((e as SimError).message).toBe(message);
      }
    }
    expect(cloud.migrations.map((m) => m.status)).toEqual(['error', 'error']);
    expect(cloud.serversByUuid.get(id(1))?.taskState).toBeNull();
    const ok = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2', synchronousChecks: true });
    expect(ok.status).toBe('preparing');
  });
});

describe('placement claims while migrating', () => {
  it('holds the server on both hosts, the source under the migration record, until completion', () => {
    const cloud = frozenCloud(twoHosts());
    expect(usage(cloud, 'c1')).toBe(3 * 8192);
    expect(usage(cloud, 'c2')).toBe(0);
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    cloud.advance(2);
    expect(m.status).toBe('running');
    expect(usage(cloud, 'c1')).toBe(3 * 8192);
    expect(usage(cloud, 'c2')).toBe(8192);
    const c1 = cloud.hostsByName.get('c1')?.nodeUuid as string;
    const c2 = cloud.hostsByName.get('c2')?.nodeUuid as string;
    expect(Object.fromEntries(cloud.placement.allocationsOf(m.uuid).get(c1) ?? [])).toEqual({
      VCPU: 2,
      MEMORY_MB: 8192,
      DISK_GB: 20,
    });
    expect([...cloud.placement.allocationsOf(id(1)).keys()]).toEqual([c2]);
    cloud.advance(3600);
    expect(usage(cloud, 'c1')).toBe(2 * 8192);
    expect(usage(cloud, 'c2')).toBe(8192);
    expect(cloud.placement.consumers.has(m.uuid)).toBe(false);
  });

  it('refuses a destination without room, leaving the server and claims alone', () => {
    const snap = snapshot([host('c1'), host('c2')], [server(1, 'c1', 60000), server(2, 'c2', 8192)]);
    const cloud = frozenCloud(snap);
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    cloud.advance(1);
    expect(m.status).toBe('error');
    expect(m.dest).toBeNull();
    expect(cloud.serversByUuid.get(id(1))?.taskState).toBeNull();
    expect(usage(cloud, 'c2')).toBe(8192);
    expect(cloud.lastErrors.get(m.id)).toMatch(/not enough resources/);
  });

  it('refuses a disabled destination and the source itself', () => {
    const snap = twoHosts();
    (snap.hosts[1] as { service: { status: string } }).service.status = 'disabled';
    const cloud = frozenCloud(snap);
    const a = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c1' });
    cloud.advance(1);
    expect(a.status).toBe('error');
    expect(b.status).toBe('error');
  });

  it('rejects an unknown host and a server that is already migrating at once', () => {
    const cloud = frozenCloud(twoHosts());
    expect(() => startLiveMigration(cloud, { serverUuid: id(1), host: 'nosuch' })).toThrow(
      'Compute host nosuch could not be found.',
    );
    startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    try {
      startLiveMigration(cloud, { serverUuid: id(1), host: 'c3' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SimError);
      expect((e as SimError).status).toBe(409);
      expect((e as SimError).message).toBe(
        `Cannot 'os-migrateLive' instance ${id(1)} while it is in task_state migrating`,
      );
    }
  });

  it('lets the scheduler pick the destination with the most free memory when none is given', () => {
    const snap = snapshot([host('c1'), host('c2'), host('c3')], [server(1, 'c1'), server(2, 'c2')]);
    const cloud = frozenCloud(snap);
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: null });
    cloud.advance(1);
    expect(m.dest).toBe('c3');
  });
});

describe("the scheduler's stale instance view", () => {
  const grouped = () =>
    snapshot([host('c1'), host('c2'), host('c3'), host('c4')], [server(1, 'c1'), server(2, 'c2')], {
      serverGroups: [
        { id: 'g1', name: 'g', policy: 'anti-affinity', members: [id(1), id(2)], projectId: 'p' },
      ],
    });

  it('refuses a sibling the host a member just left, until the sync interval has passed', () => {
    const cloud = frozenCloud(grouped());
    const a = startLiveMigration(cloud, { serverUuid: id(1), host: 'c3' });
    cloud.advance(60);
    expect(a.status).toBe('completed');
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c1' });
    cloud.advance(T.scheduleSeconds);
    expect(b.status).toBe('error');
    expect(cloud.lastErrors.get(b.id)).toMatch(/still counts 1 moved group member/);
    // The member itself may go back where the scheduler still sees it.
    cloud.advance(T.schedulerSyncSeconds);
    const b2 = startLiveMigration(cloud, { serverUuid: id(2), host: 'c1' });
    cloud.advance(60);
    expect(b2.status).toBe('completed');
  });

  it('counts a rolled-back member on the destination it did not reach', () => {
    const cloud = frozenCloud(grouped());
    cloud.failServers.add(id(1));
    const a = startLiveMigration(cloud, { serverUuid: id(1), host: 'c3' });
    cloud.advance(60);
    expect(a.status).toBe('failed');
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c3' });
    cloud.advance(T.scheduleSeconds);
    expect(b.status).toBe('error');
  });

  it('has no memory when the sync interval is 0', () => {
    const cloud = frozenCloud(grouped(), { timing: { schedulerSyncSeconds: 0 } });
    startLiveMigration(cloud, { serverUuid: id(1), host: 'c3' });
    cloud.advance(60);
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c1' });
    cloud.advance(60);
    expect(b.status).toBe('completed');
  });
});

describe('max_concurrent_live_migrations', () => {
  it('queues outgoing migrations beyond the host limit and starts them as slots free', () => {
    const cloud = frozenCloud(twoHosts());
    const a = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c3' });
    cloud.advance(2);
    expect(a.status).toBe('running');
    expect(b.status).toBe('queued');
    // Claims are taken when the conductor accepts, before the compute queue.
    expect(usage(cloud, 'c3')).toBe(8192);
    cloud.advance(a.durationSeconds);
    expect(a.status).toBe('completed');
    expect(b.status).toBe('running');
    cloud.advance(b.durationSeconds);
    expect(b.status).toBe('completed');
  });

  it('runs them together when the host allows more', () => {
    const cloud = frozenCloud(twoHosts(), { maxConcurrentLiveMigrations: 2 });
    const a = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c3' });
    const c = startLiveMigration(cloud, { serverUuid: id(3), host: 'c3' });
    cloud.advance(2);
    expect([a.status, b.status, c.status]).toEqual(['running', 'running', 'queued']);
  });
});

describe('abort, force-complete and failures', () => {
  it('cancels a running migration: the server stays and its claim returns to the source', () => {
    const cloud = frozenCloud(twoHosts());
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    cloud.advance(2);
    abortMigration(cloud, id(1), m.id, true);
    expect(m.status).toBe('running');
    cloud.advance(0.5);
    expect(m.status).toBe('cancelled');
    expect(cloud.serversByUuid.get(id(1))?.host).toBe('c1');
    expect(cloud.serversByUuid.get(id(1))?.taskState).toBeNull();
    expect(usage(cloud, 'c1')).toBe(3 * 8192);
    expect(usage(cloud, 'c2')).toBe(0);
    cloud.advance(3600);
    expect(m.status).toBe('cancelled');
  });

  it('cancels a queued migration only from microversion 2.65 on', () => {
    const cloud = frozenCloud(twoHosts());
    startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c3' });
    cloud.advance(2);
    expect(() => abortMigration(cloud, id(2), b.id, false)).toThrow(/is queued. Cannot abort live migration/);
    abortMigration(cloud, id(2), b.id, true);
    // The lab takes about 2 s to show it; the claim is held until then.
    expect(b.status).toBe('queued');
    expect(usage(cloud, 'c3')).toBe(8192);
    cloud.advance(T.queuedAbortSeconds);
    expect(b.status).toBe('cancelled');
    expect(usage(cloud, 'c3')).toBe(0);
    // It never started, even though its slot freed up meanwhile.
    cloud.advance(3600);
    expect(b.status).toBe('cancelled');
  });

  it('refuses to abort or force a migration that is not running', () => {
    const cloud = frozenCloud(twoHosts());
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    expect(() => abortMigration(cloud, id(1), m.id, true)).toThrow(/is accepted/);
    expect(() => forceCompleteMigration(cloud, id(1), m.id)).toThrow(/is accepted/);
    expect(() => abortMigration(cloud, id(1), 999, true)).toThrow(SimError);
    expect(() => abortMigration(cloud, id(2), m.id, true)).toThrow(
      `Instance ${id(2)} is in an invalid state for 'abort live migration'`,
    );
  });

  it('force-completes a running migration within a second, the record a moment after the server', () => {
    const snap = snapshot([host('c1'), host('c2')], [server(1, 'c1', 32768, { dirtyRateMBps: 2000 })]);
    const cloud = frozenCloud(snap);
    const m = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    cloud.advance(2);
    expect(m.durationSeconds).toBeGreaterThan(30);
    forceCompleteMigration(cloud, id(1), m.id);
    cloud.advance(T.forceCompleteSeconds);
    expect(m.status).toBe('running');
    cloud.advance(T.completionLagSeconds);
    expect(m.status).toBe('completed');
    expect(cloud.serversByUuid.get(id(1))?.host).toBe('c2');
  });

  it('fails migrations of chosen servers, or all, the way a libvirt error does', () => {
    const cloud = frozenCloud(twoHosts(), { maxConcurrentLiveMigrations: 3 });
    cloud.failServers.add(id(1));
    const a = startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' });
    const b = startLiveMigration(cloud, { serverUuid: id(2), host: 'c3' });
    cloud.advance(3600);
    expect(a.status).toBe('failed');
    expect(b.status).toBe('completed');
    expect(cloud.serversByUuid.get(id(1))?.host).toBe('c1');
    expect(usage(cloud, 'c2')).toBe(0);
    expect(a.updatedMs).toBe(a.runEndsMs as number);
    cloud.failAllMigrations = true;
    const c = startLiveMigration(cloud, { serverUuid: id(3), host: 'c2' });
    cloud.advance(3600);
    expect(c.status).toBe('failed');
    expect(cloud.serversByUuid.get(id(3))?.status).toBe('ACTIVE');
  });
});

describe('allocation ratio pinned by nova.conf', () => {
  it('rewrites the VCPU ratio every period, bumping the provider generation', () => {
    const cloud = frozenCloud(twoHosts());
    const rp = cloud.hostsByName.get('c1')?.rp;
    if (!rp) throw new Error('no rp');
    cloud.pinCpuAllocationRatio('c1', { ratio: 2, periodSeconds: 60 });
    expect(rp.inventories.get('VCPU')?.allocation_ratio).toBe(2);
    const inv = rp.inventories.get('VCPU');
    if (!inv) throw new Error('no VCPU');
    inv.allocation_ratio = 8;
    rp.generation++;
    const g = rp.generation;
    cloud.advance(59);
    expect(inv.allocation_ratio).toBe(8);
    cloud.advance(1);
    expect(inv.allocation_ratio).toBe(2);
    expect(rp.generation).toBe(g + 1);
    cloud.pinCpuAllocationRatio('c1', null);
    inv.allocation_ratio = 8;
    cloud.advance(600);
    expect(inv.allocation_ratio).toBe(8);
  });
});
