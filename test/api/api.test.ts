import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, NOW, type SimKeystone, seedPlan, simKeystone, startApi } from './harness.js';

let ks: SimKeystone;
let h: Harness;
let admin: string;

beforeAll(async () => {
  ks = await simKeystone();
  admin = await ks.adminToken();
});
afterAll(async () => {
  await ks.sim.close();
});
beforeEach(async () => {
  await h?.close();
  h = await startApi({ kind: 'keystone', validator: ks.validator });
});

async function call(method: 'GET' | 'POST', url: string, body?: unknown, token: string | null = admin) {
  const res = await h.app.inject({
    method,
    url,
    headers: {
      ...(token !== null ? { 'x-auth-token': token } : {}),
      // A body-less action sends the clients' header, as the CLI does.
      ...(body !== undefined ? { 'content-type': 'application/json' } : { 'x-aicerine-client': 'test' }),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
  return { status: res.statusCode, body: res.json() as Record<string, any>, headers: res.headers };
}

describe('meta', () => {
  it('answers health and version without a token, and serves its OpenAPI document', async () => {
    expect(await call('GET', '/v1/health', undefined, null)).toMatchObject({
      status: 200,
      body: { status: 'ok', store: 'ok' },
    });
    const v = await call('GET', '/v1/version', undefined, null);
    expect(v.body).toMatchObject({ name: 'aicerine', api: 'v1' });
    expect(v.body.version).toMatch(/^\d+\.\d+\.\d+/);
    const doc = (await call('GET', '/v1/openapi.json', undefined, null)).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/plans',
        '/v1/plans/{id}',
        '/v1/plans/{id}/approve',
        '/v1/executions/{id}/abort',
        '/v1/quarantine/{serverId}/release',
        '/v1/aggregates/{name}/pause',
        '/v1/audit',
        '/v1/data-health',
      ]),
    );
    expect(doc.paths['/v1/plans'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'status', 'aggregate']),
    );
    expect(doc.components.schemas).toHaveProperty('PlanSummary');
    expect(doc.components.securitySchemes.keystone).toMatchObject({ in: 'header', name: 'X-Auth-Token' });
  });

  it('gives the configuration summary to admins', async () => {
    const r = await call('GET', '/v1/config');
    expect(r.status).toBe(200);
    expect(r.body.summary).toContain('gold');
  });

  it('answers every request with a request id', async () => {
    const r = await call('GET', '/v1/plans');
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('plans', () => {
  it('pages through plans newest first with limit and cursor', async () => {
    for (let i = 0; i < 5; i++) await seedPlan(h.store, 'gold', 2);
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await call('GET', `/v1/plans?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      ids.push(...r.body.items.map((p: { id: string }) => p.id));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(ids).toEqual(['5', '4', '3', '2', '1']);
    const filtered = await call('GET', '/v1/plans?status=proposed,approved&aggregate=gold&mode=assisted');
    expect(filtered.body.items).toHaveLength(5);
    expect((await call('GET', '/v1/plans?status=executed')).body.items).toHaveLength(0);
  });

  it('approves moves with a comment, shows the decisions and audits who did it with which credential', async () => {
    const plan = await seedPlan(h.store, 'gold', 3);
    const r = await call('POST', `/v1/plans/${plan.id}/approve`, {
      steps: [1, 2],
      comment: 'ok for tonight',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: plan.id, status: 'partially-approved' });
    const shown = await call('GET', `/v1/plans/${plan.id}`);
    expect(shown.body.decisions).toEqual([
      expect.objectContaining({
        step: 1,
        decision: 'approved',
        decidedBy: 'operator:admin',
        comment: 'ok for tonight',
      }),
      expect.objectContaining({ step: 2, decision: 'approved' }),
    ]);
    expect(shown.body.plan.aggregates[0].moves).toHaveLength(3);
    const rejected = await call('POST', `/v1/plans/${plan.id}/reject`, { steps: [3] });
    expect(rejected.body.status).toBe('partially-approved');
    const audit = await call('GET', '/v1/audit?action=plan.approve');
    expect(audit.body.items).toHaveLength(1);
    const entry = audit.body.items[0];
    expect(entry).toMatchObject({ actor: 'operator:admin', target: `plan:${plan.id}` });
    expect(entry.credential).toMatch(/^token:/);
    expect(JSON.stringify(entry)).not.toContain(admin);
    expect(entry.detail).toMatchObject({ steps: [1, 2], comment: 'ok for tonight' });
  });

  it('approves or rejects a whole plan; a closed or expired plan refuses decisions with 409', async () => {
    const a = await seedPlan(h.store, 'gold', 2);
    expect((await call('POST', `/v1/plans/${a.id}/approve`)).body.status).toBe('approved');
    const b = await seedPlan(h.store, 'gold', 2);
    expect((await call('POST', `/v1/plans/${b.id}/reject`, { comment: 'no' })).body.status).toBe('rejected');
    const again = await call('POST', `/v1/plans/${b.id}/approve`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/rejected; decisions are taken on open plans only/);
    const expired = await seedPlan(h.store, 'gold', 2, new Date(NOW.getTime() - 1000).toISOString());
    const late = await call('POST', `/v1/plans/${expired.id}/approve`, {});
    expect(late.status).toBe(409);
    expect(late.body.error.message).toMatch(/expired/);
    const missingStep = await call('POST', `/v1/plans/${a.id}/reject`, { steps: [9] });
    expect(missingStep.status).toBe(409);
    const none = await call('POST', '/v1/plans/999/approve', {});
    expect(none.status).toBe(404);
    expect(none.body.error).toMatchObject({ field: 'params.id', value: '999' });
    expect((await call('GET', '/v1/plans/999')).status).toBe(404);
  });
});

describe('executions', () => {
  async function seedExecution(id: string, moves: number, startedAt = '2026-11-30T11:00:00.000Z') {
    await h.store.createExecution(
      { id, aggregate: 'gold', planId: null, startedAt, startedBy: 'loop:active' },
      Array.from({ length: moves }, (_, i) => ({
        step: i + 1,
        wave: 1,
        serverId: `s${i + 1}`,
        from: 'compute-01',
        to: 'compute-02',
        estimatedSeconds: 30,
      })),
    );
  }

  it('lists executions with paging and shows one with its moves', async () => {
    for (let i = 0; i < 3; i++) await seedExecution(`e${i}`, 2, `2026-11-30T11:0${i}:00.000Z`);
    const first = await call('GET', '/v1/executions?limit=2');
    expect(first.body.items.map((e: { id: string }) => e.id)).toEqual(['e2', 'e1']);
    const next = await call(
      'GET',
      `/v1/executions?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );
    expect(next.body).toMatchObject({ items: [{ id: 'e0' }], nextCursor: null });
    const shown = await call('GET', '/v1/executions/e1');
    expect(shown.body).toMatchObject({
      id: 'e1',
      state: 'running',
      moves: [{ step: 1, state: 'pending' }, { step: 2 }],
    });
    expect((await call('GET', '/v1/executions/nope')).status).toBe(404);
  });

  it('aborts a running execution once: pending moves are skipped, the abort audited', async () => {
    await seedExecution('e1', 2);
    const r = await call('POST', '/v1/executions/e1/abort', { comment: 'customer complaint' });
    expect(r).toMatchObject({ status: 200, body: { outcome: 'aborting', executionId: 'e1' } });
    const shown = await call('GET', '/v1/executions/e1');
    expect(shown.body.state).toBe('aborted');
    expect(shown.body.moves.every((m: { state: string }) => m.state === 'skipped')).toBe(true);
    expect((await call('POST', '/v1/executions/e1/abort', {})).status).toBe(409);
    expect((await call('POST', '/v1/executions/nope/abort', {})).status).toBe(404);
    const audit = await call('GET', '/v1/audit?target=execution:e1');
    expect(audit.body.items[0]).toMatchObject({ action: 'execution.abort', actor: 'operator:admin' });
  });

  it('refuses to abort on the store alone while moves are in flight', async () => {
    await seedExecution('e1', 1);
    await h.store.transitionMove('e1', 1, 'pending', { state: 'issuing', at: NOW.toISOString() });
    const r = await call('POST', '/v1/executions/e1/abort', {});
    expect(r.status).toBe(409);
    expect(r.body.error.message).toMatch(/in flight/);
  });
});

describe('quarantine', () => {
  it('lists quarantined servers and releases one, audited', async () => {
    await h.store.quarantine.quarantine({
      serverId: 's1',
      aggregate: 'gold',
      reason: 'failed 3 attempts',
      attempts: 3,
      at: '2026-11-30T10:00:00.000Z',
    });
    const list = await call('GET', '/v1/quarantine');
    expect(list.body.items).toMatchObject([{ serverId: 's1', attempts: 3, releasedBy: null }]);
    const r = await call('POST', '/v1/quarantine/s1/release', { comment: 'host fixed' });
    expect(r.body).toMatchObject({ serverId: 's1', releasedBy: 'operator:admin' });
    expect((await call('GET', '/v1/quarantine')).body.items).toHaveLength(0);
    expect((await call('GET', '/v1/quarantine?state=released')).body.items).toHaveLength(1);
    expect((await call('POST', '/v1/quarantine/s1/release', {})).status).toBe(404);
    expect((await call('GET', '/v1/audit?action=quarantine.release')).body.items).toHaveLength(1);
  });
});

describe('pauses and aggregates', () => {
  it('pauses and resumes globally and per aggregate, audited, and the aggregates show it', async () => {
    await h.store.dataHealth.record({ aggregate: 'gold', verdict: 'ok', reasons: [], at: NOW.toISOString() });
    await seedPlan(h.store, 'gold', 4);
    // The imbalance shown is the one measured at the latest cycle, not the plan's (0.1).
    await h.store.history.record({
      aggregate: 'gold',
      at: NOW.toISOString(),
      imbalance: 0.05,
      dimensions: { cpu: { stddev: 0.05, max: 0.6 } },
      hosts: 3,
      planMoves: 4,
    });
    let aggs = await call('GET', '/v1/aggregates');
    expect(aggs.body.items).toMatchObject([
      {
        name: 'gold',
        mode: 'assisted',
        paused: false,
        window: { open: true },
        dataHealth: { verdict: 'ok' },
        latestPlan: { moveCount: 4 },
        imbalance: { overall: 0.05, dimensions: { cpu: { stddev: 0.05 } }, asOf: NOW.toISOString() },
        lastDecision: { started: 0, summary: expect.stringMatching(/^aggregate cooldown until /) },
      },
      {
        name: 'silver',
        mode: 'observe',
        window: { open: false },
        latestPlan: null,
        imbalance: null,
        lastDecision: null,
      },
    ]);
    const paused = await call('POST', '/v1/aggregates/gold/pause', { reason: 'network work' });
    expect(paused.body.aggregates[0]).toMatchObject({
      name: 'gold',
      runtime: { by: 'operator:admin', reason: 'network work' },
    });
    expect((await call('GET', '/v1/aggregates/gold')).body.paused).toBe(true);
    expect((await call('GET', '/v1/aggregates/silver')).body.paused).toBe(false);
    await call('POST', '/v1/pause', {});
    expect((await call('GET', '/v1/aggregates/silver')).body.paused).toBe(true);
    expect((await call('POST', '/v1/resume')).status).toBe(200);
    expect((await call('POST', '/v1/aggregates/gold/resume')).status).toBe(200);
    const again = await call('POST', '/v1/resume');
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/not paused/);
    expect((await call('GET', '/v1/pauses')).body.global).toEqual({ configured: false, runtime: null });
    expect((await call('POST', '/v1/aggregates/bronze/pause')).status).toBe(404);
    const audit = await call('GET', '/v1/audit?limit=10');
    expect(
      audit.body.items.map((e: { action: string; target: string }) => `${e.action} ${e.target}`),
    ).toEqual(['resume aggregate:gold', 'resume service', 'pause service', 'pause aggregate:gold']);
    aggs = await call('GET', '/v1/aggregates?limit=1');
    expect(aggs.body).toMatchObject({ items: [{ name: 'gold' }], nextCursor: 'gold' });
    expect((await call('GET', '/v1/aggregates?limit=1&cursor=gold')).body).toMatchObject({
      items: [{ name: 'silver' }],
      nextCursor: null,
    });
  });

  it('lists data-health verdicts filtered by aggregate and verdict', async () => {
    await h.store.dataHealth.record({ aggregate: 'gold', verdict: 'ok', reasons: [], at: NOW.toISOString() });
    await h.store.dataHealth.record({
      aggregate: 'gold',
      verdict: 'blocked',
      reasons: ['stale: snapshot 400 s old'],
      at: NOW.toISOString(),
    });
    const r = await call('GET', '/v1/data-health?aggregate=gold&verdict=blocked');
    expect(r.body.items).toMatchObject([{ verdict: 'blocked', reasons: ['stale: snapshot 400 s old'] }]);
  });
});

describe('ratio changes', () => {
  it("lists prevention's ratio writes filtered by host and class", async () => {
    for (const host of ['compute-01', 'compute-02'])
      await h.store.ratioChanges.record({
        host,
        resourceClass: 'VCPU',
        oldRatio: 4,
        newRatio: 3,
        reason: 'contention',
        generation: 1,
        at: NOW.toISOString(),
        by: 'prevention',
      });
    const r = await call('GET', '/v1/ratio-changes?host=compute-02&resourceClass=VCPU');
    expect(r.body).toMatchObject({
      items: [{ host: 'compute-02', oldRatio: 4, newRatio: 3 }],
      nextCursor: null,
    });
    expect((await call('GET', '/v1/ratio-changes?resourceClass=vcpu')).body.error.field).toBe(
      'query.resourceClass',
    );
  });
});

describe('bad requests', () => {
  it('names the field and value of an invalid request', async () => {
    const cases: [string, string, unknown, string, unknown][] = [
      ['GET', '/v1/plans?limit=0', undefined, 'query.limit', '0'],
      ['GET', '/v1/plans?limit=abc', undefined, 'query.limit', 'abc'],
      ['GET', '/v1/plans?statuss=proposed', undefined, 'query.statuss', 'proposed'],
      ['GET', '/v1/plans?status=open', undefined, 'query.status', 'open'],
      ['GET', '/v1/plans?cursor=abc', undefined, 'query.cursor', 'abc'],
      ['GET', '/v1/audit?from=yesterday', undefined, 'query.from', 'yesterday'],
      ['GET', '/v1/plans/abc', undefined, 'params.id', 'abc'],
      ['POST', '/v1/plans/1/approve', { steps: ['one'] }, 'body.steps[0]', 'one'],
      ['POST', '/v1/plans/1/approve', { steps: [] }, 'body.steps', 'a list of 0 items'],
      ['POST', '/v1/plans/1/approve', { step: [1] }, 'body.step', 'a list of 1 item'],
      ['POST', '/v1/plans/1/approve', { comment: 5 }, 'body.comment', 5],
      ['POST', '/v1/pause', { reason: null }, 'body.reason', null],
    ];
    for (const [method, url, body, field, value] of cases) {
      const r = await call(method as 'GET', url, body);
      expect(r.status, url).toBe(400);
      expect(r.body.error.field, url).toBe(field);
      expect(r.body.error.value, url).toEqual(value);
      expect(r.body.error.message.startsWith(`${field}: `), r.body.error.message).toBe(true);
    }
  });
});
