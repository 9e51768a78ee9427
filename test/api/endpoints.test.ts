// The endpoints the dashboard draws from: hosts with utilization, imbalance history, a plan's
// before/after per host, snapshots (record, list, download), shadow reports, what-if, login and
// whoami; with Keystone (the simulator's) and in the no-auth mode.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeystoneTokenIssuer } from '../../src/api/login.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import type { Plan } from '../../src/model/plan.js';
import { type Harness, latestSnapshot, NOW, type SimKeystone, simKeystone, startApi } from './harness.js';

let ks: SimKeystone;
let h: Harness;
let reader: string;
let operator: string;

beforeAll(async () => {
  ks = await simKeystone();
  reader = await ks.tokenWithRoles(['aicerine-reader']);
  operator = await ks.tokenWithRoles(['aicerine-operator']);
  h = await startApi(
    { kind: 'keystone', validator: ks.validator },
    { login: new KeystoneTokenIssuer(ks.sim.authUrl) },
  );
});
afterAll(async () => {
  await h.close();
  await ks.sim.close();
});

const get = async (url: string, token = reader) => {
  const res = await h.app.inject({ method: 'GET', url, headers: { 'x-auth-token': token } });
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, raw: res };
};
const post = async (url: string, body: unknown, token: string | null = operator) => {
  const res = await h.app.inject({
    method: 'POST',
    url,
    headers: { ...(token !== null ? { 'x-auth-token': token } : {}), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
};

function gold(moves: { server: string; from: string; to: string }[]): Plan {
  const stats = {
    imbalance: 0.2,
    dimensions: { cpu: { stddev: 0.1, max: 0.5 }, memory: { stddev: 0.3, max: 0.7 } },
  };
  return {
    format: 'aicerine-plan/1',
    snapshotTakenAt: '2026-11-30T11:58:00Z',
    mode: 'spread',
    aggregates: [
      {
        name: 'gold',
        moves: moves.map((m, i) => ({
          ...m,
          step: i + 1,
          wave: 1,
          phase: 'spread' as const,
          reason: 'g1 runs hot',
          estimatedSeconds: 30,
        })),
        before: stats,
        after: { ...stats, imbalance: 0.05 },
        hostsFreed: [],
        unresolved: [],
      },
    ],
    stats: { planningMs: 1 },
  };
}

describe('hosts of an aggregate', () => {
  it('lists them by name with utilization per dimension, state, servers and VCPU ratio, paged', async () => {
    const all = await get('/v1/aggregates/gold/hosts');
    expect(all.status).toBe(200);
    expect(all.body.asOf).toBe('2026-11-30T11:58:00.000Z');
    expect(all.body.dimensions).toEqual(['cpu', 'memory']);
    const items = all.body.items as Record<string, unknown>[];
    expect(items.map((i) => i.name)).toEqual(['g1', 'g2', 'g3']);
    expect(items[0]).toMatchObject({
      enabled: true,
      up: true,
      disabledReason: null,
      servers: 6,
      vcpuAllocationRatio: 4,
      utilization: { cpu: 9 / 16, memory: expect.closeTo((6 * 8192 * 0.9) / 65024, 3) },
      allocation: { VCPU: { used: 0, capacity: 64 } },
    });
    expect(items[2]).toMatchObject({ servers: 0, utilization: { cpu: 0, memory: 0 } });
    const first = await get('/v1/aggregates/gold/hosts?limit=2');
    expect((first.body.items as { name: string }[]).map((i) => i.name)).toEqual(['g1', 'g2']);
    const next = await get(`/v1/aggregates/gold/hosts?limit=2&cursor=${first.body.nextCursor}`);
    expect((next.body.items as { name: string }[]).map((i) => i.name)).toEqual(['g3']);
    expect(next.body.nextCursor).toBeNull();
    const silver = await get('/v1/aggregates/silver/hosts');
    expect((silver.body.items as Record<string, unknown>[])[1]).toMatchObject({
      name: 's2',
      enabled: false,
      disabledReason: 'maintenance',
    });
  });

  it('404 for an aggregate neither configured nor in the snapshot; 503 without the loop', async () => {
    const missing = await get('/v1/aggregates/bronze/hosts');
    expect(missing.status).toBe(404);
    expect((missing.body.error as { field: string }).field).toBe('params.name');
    const bare = await startApi({ kind: 'none' }, { snapshots: null });
    try {
      const res = await bare.app.inject({ method: 'GET', url: '/v1/aggregates/gold/hosts' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.message).toMatch(/without the control loop/);
    } finally {
      await bare.close();
    }
  });
});

describe('imbalance history', () => {
  it('every cycle of the aggregate, newest first, since a time, paged', async () => {
    for (let i = 0; i < 3; i++)
      await h.store.history.record({
        aggregate: 'gold',
        at: new Date(NOW.getTime() - (3 - i) * 300_000).toISOString(),
        imbalance: 0.3 - i * 0.1,
        dimensions: {
          cpu: { stddev: 0.1, max: 0.5, mean: 0.3 },
          memory: { stddev: 0.2 - i * 0.05, max: 0.8 },
        },
        hosts: 3,
        planMoves: 3 - i,
      });
    const all = await get('/v1/aggregates/gold/history');
    const items = all.body.items as { imbalance: number; planMoves: number }[];
    expect(items.map((p) => p.planMoves)).toEqual([1, 2, 3]);
    const since = await get(
      `/v1/aggregates/gold/history?since=${new Date(NOW.getTime() - 400_000).toISOString()}`,
    );
    expect((since.body.items as unknown[]).length).toBe(1);
    const paged = await get('/v1/aggregates/gold/history?limit=2');
    expect(paged.body.nextCursor).not.toBeNull();
    expect((await get('/v1/aggregates/silver/history')).body.items).toEqual([]);
    expect((await get('/v1/aggregates/bronze/history')).status).toBe(404);
    const bad = await get('/v1/aggregates/gold/history?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: 'query.since', value: 'yesterday' });
  });
});

describe("a plan's hosts before and after", () => {
  it("charts the plan's moves on the latest snapshot's loads; a move already made counts as before", async () => {
    const snap = latestSnapshot();
    const s1 = snap.servers[0]!.id;
    const s2 = snap.servers[1]!.id;
    const plan = await h.store.plans.create({
      aggregate: 'gold',
      mode: 'assisted',
      plan: gold([
        { server: s1, from: 'g1', to: 'g3' },
        { server: s2, from: 'g1', to: 'g2' },
        { server: 'gone', from: 'g1', to: 'g2' },
      ]),
      createdAt: NOW.toISOString(),
    });
    const res = await get(`/v1/plans/${plan.id}/hosts`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      planId: plan.id,
      aggregate: 'gold',
      dimensions: ['cpu', 'memory'],
      skippedSteps: [3],
    });
    const hosts = res.body.hosts as {
      name: string;
      before: { cpu: number };
      after: { cpu: number };
      serversAfter: number;
    }[];
    expect(hosts.map((x) => [x.name, x.before.cpu, x.after.cpu, x.serversAfter])).toEqual([
      ['g1', 0.5625, 0.375, 4],
      ['g2', 0.0938, 0.1875, 2],
      ['g3', 0, 0.0938, 1],
    ]);
    expect((await get('/v1/plans/999999/hosts')).status).toBe(404);
  });
});

describe('snapshots', () => {
  it('an operator records one now; it is listed and downloads as aicerine-snapshot/1; a reader may not record', async () => {
    expect((await post('/v1/snapshots', {}, reader)).status).toBe(403);
    const made = await post('/v1/snapshots', { comment: 'before the change' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      takenAt: NOW.toISOString(),
      aggregate: null,
      recordedAt: NOW.toISOString(),
    });
    expect(made.body.sizeBytes).toBeGreaterThan(100);
    expect(await readdir(h.snapshotDir)).toHaveLength(1);
    const list = await get('/v1/snapshots');
    expect((list.body.items as { id: string }[]).map((s) => s.id)).toEqual([made.body.id]);
    const dl = await get(`/v1/snapshots/${made.body.id}`);
    expect(dl.status).toBe(200);
    expect(dl.raw.headers['content-type']).toMatch(/application\/json/);
    const doc = parseSnapshot(dl.body);
    expect(doc.hosts.map((x) => x.name)).toEqual(['g1', 'g2', 'g3', 's1', 's2']);
    const audit = await h.store.audit.list({ action: 'snapshot.record' });
    expect(audit.items[0]).toMatchObject({
      target: `snapshot:${made.body.id}`,
      detail: { comment: 'before the change' },
    });
    expect((await get('/v1/snapshots/424242')).status).toBe(404);
  });
});

describe('shadow reports', () => {
  it('what observe mode wrote, newest first, filtered by aggregate', async () => {
    for (const [agg, at] of [
      ['silver', '2026-11-29T12:00:00.000Z'],
      ['gold', '2026-11-29T12:00:00.000Z'],
      ['silver', '2026-11-30T12:00:00.000Z'],
    ] as const)
      await h.store.audit.record({
        actor: 'loop:observe',
        action: 'shadow.report',
        target: `aggregate:${agg}`,
        detail: { aggregate: agg, plansMade: 3 },
        at,
      });
    const silver = await get('/v1/shadow-reports?aggregate=silver');
    expect(
      (silver.body.items as { aggregate: string; at: string; report: unknown }[]).map((r) => [
        r.aggregate,
        r.at,
      ]),
    ).toEqual([
      ['silver', '2026-11-30T12:00:00.000Z'],
      ['silver', '2026-11-29T12:00:00.000Z'],
    ]);
    expect((silver.body.items as { report: unknown }[])[0]!.report).toEqual({
      aggregate: 'silver',
      plansMade: 3,
    });
    expect(((await get('/v1/shadow-reports')).body.items as unknown[]).length).toBe(3);
    expect(
      ((await get('/v1/shadow-reports?since=2026-11-30T00:00:00Z')).body.items as unknown[]).length,
    ).toBe(1);
  });
});

describe('what-if', () => {
  it('drains a host: the plan empties it; nothing is stored', async () => {
    const plansBefore = await h.store.plans.list();
    const res = await post('/v1/what-if', { aggregate: 'gold', drainHosts: ['g1'] }, reader);
    expect(res.status).toBe(200);
    const plan = res.body.plan as Plan;
    expect(plan.format).toBe('aicerine-plan/1');
    const moves = plan.aggregates[0]!.moves;
    expect(moves.filter((m) => m.from === 'g1')).toHaveLength(6);
    expect(res.body.changes).toEqual({ drained: ['g1'], added: [] });
    const g1 = (res.body.hosts as { name: string; serversAfter: number }[]).find((x) => x.name === 'g1');
    expect(g1?.serversAfter).toBe(0);
    expect(res.body.before).toEqual(plan.aggregates[0]!.before);
    expect(await h.store.plans.list()).toEqual(plansBefore);
  });

  it('adds hosts like one; another policy', async () => {
    const res = await post(
      '/v1/what-if',
      { aggregate: 'gold', addHosts: { like: 'g3', count: 2 }, policy: { budget: { maxMoves: 2 } } },
      reader,
    );
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual({ drained: [], added: ['g3-whatif-1', 'g3-whatif-2'] });
    expect((res.body.plan as Plan).aggregates[0]!.moves.length).toBeLessThanOrEqual(2);
    expect((res.body.hosts as { name: string }[]).map((x) => x.name)).toEqual([
      'g1',
      'g2',
      'g3',
      'g3-whatif-1',
      'g3-whatif-2',
    ]);
  });

  it('400 naming the field and value: unknown host, bad policy key or value, bad count', async () => {
    const cases: [unknown, string, unknown][] = [
      [{ aggregate: 'gold', drainHosts: ['g1', 'nope'] }, 'body.drainHosts[1]', 'nope'],
      [{ aggregate: 'gold', addHosts: { like: 's1', count: 1 } }, 'body.addHosts.like', 's1'],
      [{ aggregate: 'gold', addHosts: { like: 'g1', count: 0 } }, 'body.addHosts.count', 0],
      [{ aggregate: 'gold', policy: { mode: 'zigzag' } }, 'body.policy.mode', 'zigzag'],
      [{ aggregate: 'gold', policy: { budget: { maxMoves: -1 } } }, 'body.policy.budget.maxMoves', -1],
      [{ aggregate: 'gold', policy: { colour: 'red' } }, 'body.policy.colour', 'red'],
      [{ aggregate: 'gold', extra: 1 }, 'body.extra', 1],
      [{ drainHosts: [] }, 'body.aggregate', undefined],
    ];
    for (const [body, field, value] of cases) {
      const res = await post('/v1/what-if', body, reader);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = res.body.error as { field: string; value?: unknown; message: string };
      expect(err.field, err.message).toBe(field);
      if (value !== undefined) expect(err.value).toEqual(value);
    }
    expect((await post('/v1/what-if', { aggregate: 'bronze' }, reader)).status).toBe(404);
  });
});

describe('login and whoami', () => {
  it("Keystone issues a token for a user's password; whoami says who and what they may do", async () => {
    const ksUser = ks.sim.keystone.userByName('admin')!;
    const project = [...ksUser.roles.keys()][0]!;
    const projectName = ks.sim.keystone.projects.get(project)?.name ?? 'admin';
    const res = await post(
      '/v1/auth/tokens',
      { username: 'admin', password: ksUser.password, project: projectName },
      null,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ authenticated: true, mode: 'keystone', user: 'admin' });
    expect(res.body.actions).toContain('plan.approve');
    const token = res.body.token as string;
    const me = await get('/v1/whoami', token);
    expect(me.body).toMatchObject({ user: 'admin', roles: expect.arrayContaining(['admin']) });
    const mine = await get('/v1/whoami', reader);
    expect(mine.body.actions).toEqual(['read', 'what-if']);
    const bad = await post(
      '/v1/auth/tokens',
      { username: 'admin', password: 'wrong', project: projectName },
      null,
    );
    expect(bad.status).toBe(401);
    expect(JSON.stringify(bad.body)).not.toContain('wrong');
    expect((await get('/v1/whoami', 'not-a-token')).status).toBe(401);
    const missing = await post('/v1/auth/tokens', { username: 'admin', project: 'x' }, null);
    expect(missing.body.error).toMatchObject({ field: 'body.password' });
  });

  it('in the no-auth mode, whoami says so and login is not needed', async () => {
    const open = await startApi({ kind: 'none' });
    try {
      const me = await open.app.inject({ method: 'GET', url: '/v1/whoami' });
      expect(me.json()).toMatchObject({ authenticated: false, mode: 'no-auth', user: 'local' });
      expect(me.json().actions).toContain('execution.abort');
      const login = await open.app.inject({
        method: 'POST',
        url: '/v1/auth/tokens',
        payload: { username: 'a', password: 'b', project: 'c' },
      });
      expect(login.statusCode).toBe(409);
    } finally {
      await open.close();
    }
  });
});
