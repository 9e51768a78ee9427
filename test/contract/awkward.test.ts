// Where Nova is awkward for a control loop (issue 13): each test is a behaviour measured on the
// lab that the simulator must show too, so an executor developed against the simulator meets it
// before production. Same tests on both targets; timing assertions are one-sided bounds, and a
// window the lab shows only most of the time is required of the simulator alone (noted there).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FINAL_MIGRATION_STATUSES,
  type NovaMigration,
  type NovaServer,
} from '../../src/cloud/openstack/nova.js';
import { mapProvidersToHosts } from '../../src/cloud/record.js';
import { openWorld, PREFIX, type World } from './world.js';

let w: World;
beforeAll(async () => {
  w = await openWorld();
}, 300_000);
afterAll(async () => {
  await w?.close();
}, 300_000);

const TIMEOUT = 120_000;
// Between reads of Nova and Placement: they offer no event for a record's state (and these same
// tests run on the real lab), so every wait here polls the API.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Raw {
  status: number;
  body: unknown;
  contentType: string;
}

/** One request with an explicit microversion, whatever the answer (2xx, 400, 404, 409). */
async function raw(
  service: 'compute' | 'placement',
  method: string,
  path: string,
  opts: { mv?: string; body?: unknown } = {},
): Promise<Raw> {
  const header = service === 'compute' ? 'compute' : 'placement';
  const res = await w.session.service(service).request({
    method,
    path,
    headers: opts.mv ? { 'OpenStack-API-Version': `${header} ${opts.mv}` } : {},
    ...(opts.body === undefined ? {} : { body: opts.body }),
    accept: [400, 404, 409],
  });
  return { status: res.status, body: res.body, contentType: res.headers.get('content-type') ?? '' };
}

function otherHost(current: string, exclude: string[] = []): string {
  const h = w.hosts.find((x) => x !== current && !exclude.includes(x));
  if (!h) throw new Error(`no host besides ${current}`);
  return h;
}

async function hostOf(id: string): Promise<string> {
  const s = await w.session.nova.getServer(id);
  if (!s.host) throw new Error(`server ${id} has no host`);
  return s.host;
}

async function waitForStatus(serverId: string, since: Date, status: string): Promise<NovaMigration> {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const m = await w.session.nova.latestLiveMigration(serverId, since);
    if (m?.status === status) return m;
    if (m && FINAL_MIGRATION_STATUSES.has(m.status))
      throw new Error(`migration of ${serverId} ended ${m.status}, expected ${status}`);
    if (Date.now() > deadline) throw new Error(`migration of ${serverId} never reached ${status}`);
    await sleep(100);
  }
}

function follow(serverId: string, since: Date): Promise<NovaMigration> {
  return w.session.nova.followLiveMigration(serverId, { since, pollMs: 200, timeoutMs: TIMEOUT });
}

/** The newest migration id of a server so far (0: none). */
async function lastMigrationId(serverId: string): Promise<number> {
  const all = await w.session.nova.listMigrations({ serverId, migrationType: 'live-migration' });
  return Math.max(0, ...all.map((m) => m.id));
}

/** Follows the first migration of a server newer than `afterId` to its end (records of refusals come back-to-back). */
async function followNew(serverId: string, afterId: number): Promise<NovaMigration> {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const all = await w.session.nova.listMigrations({ serverId, migrationType: 'live-migration' });
    const m = all.filter((x) => x.id > afterId).sort((x, y) => x.id - y.id)[0];
    if (m && FINAL_MIGRATION_STATUSES.has(m.status)) return m;
    if (Date.now() > deadline) throw new Error(`no finished migration of ${serverId} after ${afterId}`);
    await sleep(200);
  }
}

/** Waits until the server has no task state again (the record may finish later, see below). */
async function settled(serverId: string): Promise<NovaServer> {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const s = await w.session.nova.getServer(serverId);
    if (s.taskState === null) return s;
    if (Date.now() > deadline) throw new Error(`server ${serverId} still ${s.taskState}`);
    await sleep(200);
  }
}

describe('migration records', () => {
  it('hides a just-started migration from changes-since while its updated_at is still null', async () => {
    const id = w.servers.c.id;
    const dest = otherHost(await hostOf(id));
    const since = new Date(Date.now() - 2000);
    await w.session.nova.liveMigrate(id, dest);
    let sawHidden = false;
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
      // Filtered first: if the unfiltered read (later) still has updated_at null, so did the
      // record when the filtered read ran, and Nova's updated_at filter must have left it out.
      const filtered = await w.session.nova.listMigrations({
        serverId: id,
        migrationType: 'live-migration',
        changesSince: since.toISOString(),
      });
      const m = await w.session.nova.latestLiveMigration(id, since);
      if (m && m.updatedAt === null) {
        expect(filtered.map((x) => x.id)).not.toContain(m.id);
        sawHidden = true;
      }
      if (m && filtered.some((x) => x.id === m.id)) break;
      if (Date.now() > deadline) throw new Error('the migration never showed up under changes-since');
      await sleep(50);
    }
    // The lab's window is 0.1-2.8 s and polls usually, not always, land in it; the simulator
    // keeps it for timing.scheduleSeconds (1 s), so it must be seen there.
    if (w.target === 'sim') expect(sawHidden).toBe(true);
    expect((await follow(id, since)).status).toBe('completed');
    await settled(id);
  });

  it('shows the server done on its destination while its migration still says running', async () => {
    const id = w.servers.c.id;
    let sawServerFirst = false;
    // The lab's lag is 0.3-5 s; two tries make missing it with back-to-back polls vanishingly rare.
    for (let attempt = 0; attempt < 2 && !sawServerFirst; attempt++) {
      const dest = otherHost(await hostOf(id));
      const since = new Date();
      await w.session.nova.liveMigrate(id, dest);
      const deadline = Date.now() + TIMEOUT;
      for (;;) {
        // Server first: if it is done now and the record (read later) still runs, both held at once.
        const s = await w.session.nova.getServer(id);
        const m = await w.session.nova.latestLiveMigration(id, since);
        const serverDone = s.host === dest && s.taskState === null && s.status === 'ACTIVE';
        if (serverDone && m?.status === 'running') sawServerFirst = true;
        if (m?.status === 'completed') {
          // The other way round never happens: a completed record means a finished server.
          const after = await w.session.nova.getServer(id);
          expect(after).toMatchObject({ host: dest, taskState: null, status: 'ACTIVE' });
          break;
        }
        if (m && FINAL_MIGRATION_STATUSES.has(m.status)) throw new Error(`migration ended ${m.status}`);
        if (Date.now() > deadline) throw new Error('migration did not complete');
        await sleep(20);
      }
    }
    expect(sawServerFirst).toBe(true);
  });
});

describe('early refusals depend on the microversion', () => {
  const cases = ['disabled host', 'same host', 'anti-affinity sibling'] as const;
  const expected: Record<(typeof cases)[number], string> = {
    // Placement has no candidate on a disabled host (COMPUTE_STATUS_DISABLED): empty reason.
    'disabled host': 'No valid host was found. ',
    'same host': 'No valid host was found. There are not enough hosts available.',
    'anti-affinity sibling': 'No valid host was found. There are not enough hosts available.',
  };

  async function withDisabled<T>(host: string, fn: () => Promise<T>): Promise<T> {
    const svc = (await w.session.nova.listServices('nova-compute')).find((s) => s.host === host);
    if (!svc) throw new Error(`no nova-compute on ${host}`);
    await w.session.nova.setServiceStatus(svc.id, 'disabled', `${PREFIX}contract`);
    try {
      return await fn();
    } finally {
      await w.session.nova.setServiceStatus(svc.id, 'enabled');
    }
  }

  async function target(c: (typeof cases)[number]): Promise<{ server: string; host: string }> {
    const a = w.servers.a;
    if (c === 'same host') return { server: a.id, host: await hostOf(a.id) };
    if (c === 'anti-affinity sibling') return { server: a.id, host: await hostOf(w.servers.b.id) };
    const here = await hostOf(a.id);
    return { server: a.id, host: otherHost(here, [await hostOf(w.servers.b.id)]) };
  }

  async function attempt(c: (typeof cases)[number], mv: string): Promise<Raw> {
    const t = await target(c);
    const run = () =>
      raw('compute', 'POST', `/servers/${t.server}/action`, {
        mv,
        body: { 'os-migrateLive': { host: t.host, block_migration: 'auto' } },
      });
    return c === 'disabled host' ? withDisabled(t.host, run) : run();
  }

  it('answers 400 No valid host was found at once below 2.34 (here 2.30)', async () => {
    for (const c of cases) {
      const after = await lastMigrationId(w.servers.a.id);
      const before = await hostOf(w.servers.a.id);
      const r = await attempt(c, '2.30');
      expect({ case: c, status: r.status, body: r.body }).toEqual({
        case: c,
        status: 400,
        body: { badRequest: { code: 400, message: expected[c] } },
      });
      // The refused request still leaves an error record, and the server where it was.
      expect((await followNew(w.servers.a.id, after)).status).toBe('error');
      expect(await w.session.nova.getServer(w.servers.a.id)).toMatchObject({ host: before, taskState: null });
    }
  });

  it('accepts with 202 from 2.34 on (here 2.80) and ends the migration in error', async () => {
    for (const c of cases) {
      const after = await lastMigrationId(w.servers.a.id);
      const before = await hostOf(w.servers.a.id);
      const t = await target(c);
      const run = async () => {
        const r = await raw('compute', 'POST', `/servers/${t.server}/action`, {
          mv: '2.80',
          body: { 'os-migrateLive': { host: t.host, block_migration: 'auto' } },
        });
        expect({ case: c, status: r.status }).toEqual({ case: c, status: 202 });
        return followNew(w.servers.a.id, after);
      };
      const m = c === 'disabled host' ? await withDisabled(t.host, run) : await run();
      expect({ case: c, status: m.status }).toEqual({ case: c, status: 'error' });
      expect(await w.session.nova.getServer(w.servers.a.id)).toMatchObject({ host: before, taskState: null });
    }
  });
});

describe('timing and progress', () => {
  it('ends an injected failure when the held migration would have ended, not early', async () => {
    // Server c is in no group: a failed move of a group member leaves the scheduler believing
    // it sits on the destination for a while (see docs/simulator.md), which later tests avoid.
    const id = w.servers.c.id;
    const source = await hostOf(id);
    const hold = 3;
    await w.holdMigrations(hold);
    await w.failMigrations([id]);
    try {
      const since = new Date();
      await w.session.nova.liveMigrate(id, otherHost(source));
      await waitForStatus(id, since, 'running');
      const runningSeen = Date.now();
      const m = await follow(id, since);
      expect(m.status).toBe('failed');
      // Seen running a little after it started, so allow a small margin below the hold.
      expect(Date.now() - runningSeen).toBeGreaterThanOrEqual(hold * 1000 * 0.8);
      expect(await settled(id)).toMatchObject({ status: 'ACTIVE', host: source });
    } finally {
      await w.failMigrations(null);
      await w.holdMigrations(0);
    }
  });

  it('leaves memory progress null, and takes a while to cancel a queued migration', async () => {
    const c = w.servers.c.id;
    const a = w.servers.a.id;
    const source = await hostOf(a);
    if ((await hostOf(c)) !== source) {
      // Put c back next to a: the queue is per source host.
      const since = new Date();
      await w.session.nova.liveMigrate(c, source);
      expect((await follow(c, since)).status).toBe('completed');
      await settled(c);
    }
    const dest = otherHost(source, [await hostOf(w.servers.b.id)]);
    await w.holdMigrations(30);
    const sinceC = new Date();
    try {
      await w.session.nova.liveMigrate(c, dest);
      const runningC = await waitForStatus(c, sinceC, 'running');
      const progress = await w.session.nova.listServerMigrations(c);
      expect(progress.find((x) => x.id === runningC.id)).toMatchObject({
        status: 'running',
        memoryTotalBytes: null,
        memoryProcessedBytes: null,
        memoryRemainingBytes: null,
      });

      const sinceA = new Date();
      await w.session.nova.liveMigrate(a, dest);
      const queued = await waitForStatus(a, sinceA, 'queued');
      const unknown = await raw('compute', 'DELETE', `/servers/${a}/migrations/999999`, { mv: '2.80' });
      expect(unknown).toMatchObject({
        status: 404,
        body: { itemNotFound: { code: 404, message: `Migration 999999 not found for instance ${a}` } },
      });
      await w.session.nova.abortMigration(a, queued.id);
      // Accepted, but the record still says queued for a moment (about 1-2 s on the lab).
      expect((await w.session.nova.latestLiveMigration(a, sinceA))?.status).toBe('queued');
      expect((await follow(a, sinceA)).status).toBe('cancelled');
      expect(await settled(a)).toMatchObject({ host: source, status: 'ACTIVE' });

      await w.session.nova.forceCompleteMigration(c, runningC.id);
      expect((await follow(c, sinceC)).status).toBe('completed');
      await settled(c);
    } finally {
      await w.holdMigrations(0);
      // Leave no 30 s migration behind for the next test, whatever failed above.
      const left = (await w.session.nova.listServerMigrations(c)).find((x) => x.status === 'running');
      if (left) await w.session.nova.forceCompleteMigration(c, left.id).catch(() => undefined);
      await settled(c);
      await settled(a);
    }
  });
});

describe('Placement during a migration', () => {
  it('bumps the source generation once at the start and once at the end, with the lab shapes', async () => {
    const id = w.servers.c.id;
    const source = await hostOf(id);
    const dest = otherHost(source);
    const rpOf = mapProvidersToHosts(
      await w.session.placement.listResourceProviders(),
      await w.session.nova.listHypervisors(),
    );
    const src = rpOf.get(source)?.uuid as string;
    const dst = rpOf.get(dest)?.uuid as string;
    const generation = async (rp: string) =>
      (
        (await raw('placement', 'GET', `/resource_providers/${rp}`, { mv: '1.39' })).body as {
          generation: number;
        }
      ).generation;
    const g0 = { src: await generation(src), dst: await generation(dst) };
    await w.holdMigrations(3);
    try {
      const since = new Date();
      await w.session.nova.liveMigrate(id, dest);
      const m = await waitForStatus(id, since, 'running');
      // One POST /allocations moves the server's claim to the migration record; one PUT claims
      // the destination for the server.
      expect({ src: await generation(src), dst: await generation(dst) }).toEqual({
        src: g0.src + 1,
        dst: g0.dst + 1,
      });
      const byConsumer = (await raw('placement', 'GET', `/allocations/${m.uuid}`, { mv: '1.39' }))
        .body as Record<string, unknown>;
      expect(Object.keys(byConsumer).sort()).toEqual([
        'allocations',
        'consumer_generation',
        'consumer_type',
        'project_id',
        'user_id',
      ]);
      expect(byConsumer.consumer_type).toBe('unknown');
      expect(Object.keys(byConsumer.allocations as object)).toEqual([src]);
      const onSource = (
        await raw('placement', 'GET', `/resource_providers/${src}/allocations`, { mv: '1.39' })
      ).body as { allocations: Record<string, Record<string, unknown>> };
      expect(Object.keys(onSource.allocations[m.uuid as string] ?? {}).sort()).toEqual([
        'consumer_generation',
        'resources',
      ]);
      expect((await follow(id, since)).status).toBe('completed');
      // Emptying the record's claim (PUT with no allocations) bumps the source again; the
      // destination keeps its generation. Nova saves the record `completed` before it empties the
      // claim (nova/compute/manager.py, _post_live_migration), so on the lab the source may still
      // be at +1 for a moment after the record reads completed: wait for it to move.
      const deadline = Date.now() + TIMEOUT;
      while ((await generation(src)) === g0.src + 1 && Date.now() < deadline) await sleep(100);
      expect({ src: await generation(src), dst: await generation(dst) }).toEqual({
        src: g0.src + 2,
        dst: g0.dst + 1,
      });
    } finally {
      await w.holdMigrations(0);
    }
  });
});

describe('smaller API behaviours', () => {
  it('serves os-hypervisors/statistics up to 2.87 and 404s it from 2.88', async () => {
    const r = await raw('compute', 'GET', '/os-hypervisors/statistics', { mv: '2.87' });
    expect(r.status).toBe(200);
    const stats = (r.body as { hypervisor_statistics: Record<string, number> }).hypervisor_statistics;
    expect(Object.keys(stats).sort()).toEqual(
      [
        'count',
        'current_workload',
        'disk_available_least',
        'free_disk_gb',
        'free_ram_mb',
        'local_gb',
        'local_gb_used',
        'memory_mb',
        'memory_mb_used',
        'running_vms',
        'vcpus',
        'vcpus_used',
      ].sort(),
    );
    expect(stats.count).toBeGreaterThanOrEqual(3);
    expect(await raw('compute', 'GET', '/os-hypervisors/statistics', { mv: '2.88' })).toMatchObject({
      status: 404,
      body: { itemNotFound: { code: 404, message: 'The resource could not be found.' } },
    });
  });

  it('answers os-hypervisors/{id}/uptime errors in JSON', async () => {
    const missing = 'c0000000-0000-4000-8000-000000000099';
    const r = await raw('compute', 'GET', `/os-hypervisors/${missing}/uptime`, { mv: '2.53' });
    expect(r).toMatchObject({
      status: 404,
      body: { itemNotFound: { code: 404, message: `Hypervisor with ID '${missing}' could not be found.` } },
    });
    expect(r.contentType).toMatch(/^application\/json/);
    expect(await raw('compute', 'GET', '/os-hypervisors/999/uptime', { mv: '2.53' })).toMatchObject({
      status: 400,
      body: { badRequest: { code: 400, message: 'Invalid uuid 999' } },
    });
    const hv = (await w.session.nova.listHypervisors())[0];
    const up = await raw('compute', 'GET', `/os-hypervisors/${hv?.id}/uptime`, { mv: '2.87' });
    expect(up.status).toBe(200);
    expect((up.body as { hypervisor: { uptime: string } }).hypervisor.uptime).toMatch(/ up /);
    expect(await raw('compute', 'GET', `/os-hypervisors/${hv?.id}/uptime`, { mv: '2.88' })).toMatchObject({
      status: 404,
      body: { itemNotFound: { code: 404, message: 'The resource could not be found.' } },
    });
  });

  it('refuses changes-since later than changes-before with a 400', async () => {
    const q = '?changes-since=2026-01-02T00:00:00Z&changes-before=2026-01-01T00:00:00Z';
    expect(await raw('compute', 'GET', `/os-migrations${q}`, { mv: '2.80' })).toMatchObject({
      status: 400,
      body: {
        badRequest: {
          code: 400,
          message: 'The value of changes-since must be less than or equal to changes-before.',
        },
      },
    });
    expect(await raw('compute', 'GET', `/os-migrations${q}`, { mv: '2.65' })).toMatchObject({
      status: 400,
      body: {
        badRequest: {
          code: 400,
          message: "Additional properties are not allowed ('changes-before' was unexpected)",
        },
      },
    });
  });

  it('issues tokens that live 24 hours', async () => {
    const own = await w.session.token();
    const res = await w.session.service('identity').request({
      method: 'GET',
      path: '/auth/tokens',
      headers: { 'X-Subject-Token': own.token },
    });
    const t = (res.body as { token: { issued_at: string; expires_at: string } }).token;
    const hours = (Date.parse(t.expires_at) - Date.parse(t.issued_at)) / 3_600_000;
    expect(hours).toBeCloseTo(24, 1);
  });

  it('keeps serving a token cached by Nova after its application credential is deleted', async () => {
    const me = (await w.session.token()).userId as string;
    const identity = w.session.service('identity');
    const created = await identity.request({
      method: 'POST',
      path: `/users/${me}/application_credentials`,
      body: { application_credential: { name: `${PREFIX}deleted-${Date.now()}` } },
    });
    const ac = (created.body as { application_credential: { id: string; secret: string } })
      .application_credential;
    const authUrl = w.authUrl.replace(/\/+$/, '');
    const issue = () =>
      fetch(`${authUrl}/auth/tokens`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['application_credential'],
              application_credential: { id: ac.id, secret: ac.secret },
            },
          },
        }),
      });
    const issued = await issue();
    expect(issued.status).toBe(201);
    const token = issued.headers.get('x-subject-token') as string;
    const compute = (await w.session.service('compute').endpoint()).replace(/\/+$/, '');
    const servers = () => fetch(`${compute}/servers`, { headers: { 'X-Auth-Token': token } });
    expect((await servers()).status).toBe(200);
    await identity.request({ method: 'DELETE', path: `/users/${me}/application_credentials/${ac.id}` });
    // Keystone no longer backs it, and it cannot make new tokens ...
    const check = await identity.request({
      method: 'GET',
      path: '/auth/tokens',
      headers: { 'X-Subject-Token': token },
      accept: [404],
    });
    expect(check.status).toBe(404);
    const again = await issue();
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({
      error: { code: 404, message: `Could not find Application Credential: ${ac.id}.` },
    });
    // ... but nova-api's keystonemiddleware cache still takes it (token_cache_time, 300 s).
    expect((await servers()).status).toBe(200);
  });

  it('pauses a server, live-migrates it paused, and unpauses it', async () => {
    const id = w.servers.c.id;
    const action = (body: unknown) => raw('compute', 'POST', `/servers/${id}/action`, { mv: '2.80', body });
    expect((await action({ pause: null })).status).toBe(202);
    const deadline = Date.now() + TIMEOUT;
    let s = await w.session.nova.getServer(id);
    while (!(s.status === 'PAUSED' && s.taskState === null)) {
      if (Date.now() > deadline) throw new Error(`server never paused (${s.status}/${s.taskState})`);
      await sleep(100);
      s = await w.session.nova.getServer(id);
    }
    expect(await action({ pause: null })).toMatchObject({
      status: 409,
      body: {
        conflictingRequest: {
          code: 409,
          message: `Cannot 'pause' instance ${id} while it is in vm_state paused`,
        },
      },
    });
    const dest = otherHost(s.host as string);
    const since = new Date();
    await w.session.nova.liveMigrate(id, dest);
    expect((await follow(id, since)).status).toBe('completed');
    expect(await settled(id)).toMatchObject({ host: dest, status: 'PAUSED' });
    expect((await action({ unpause: null })).status).toBe(202);
    s = await w.session.nova.getServer(id);
    while (!(s.status === 'ACTIVE' && s.taskState === null)) {
      if (Date.now() > deadline) throw new Error(`server never unpaused (${s.status}/${s.taskState})`);
      await sleep(100);
      s = await w.session.nova.getServer(id);
    }
  });
});

describe("the scheduler's view of a server group", () => {
  it('refuses a sibling the host a group member just left (until that host syncs, up to 2 min)', async () => {
    const a = w.servers.a.id;
    const b = w.servers.b.id;
    const aHost = await hostOf(a);
    const free = otherHost(aHost, [await hostOf(b)]);
    const since = new Date();
    await w.session.nova.liveMigrate(a, free);
    expect((await follow(a, since)).status).toBe('completed');
    await settled(a);
    const after = await lastMigrationId(b);
    await w.session.nova.liveMigrate(b, aHost);
    const m = await followNew(b, after);
    // The lab's computes resync the scheduler every 120 s, each at its own phase: a sync in the
    // few seconds since a left lets b through (seldom; 0 of 2 runs measured). The simulator
    // keeps the stale entry the whole interval, so there it must be refused.
    if (w.target === 'sim') expect(m.status).toBe('error');
    else expect(['error', 'completed']).toContain(m.status);
    await settled(b);
  });
});
