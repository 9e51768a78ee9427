import { afterEach, describe, expect, it, vi } from 'vitest';
import { CloudError } from '../../../src/cloud/errors.js';
import { HttpTransport } from '../../../src/cloud/http/transport.js';
import { createLogger } from '../../../src/cloud/log.js';
import { type FakeServer, startFake } from '../fake-server.js';

let fake: FakeServer;
afterEach(async () => {
  await fake.close();
});

const fast = { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5 };

describe('HttpTransport', () => {
  it('retries an idempotent request on 5xx with backoff, then answers', async () => {
    let n = 0;
    fake = await startFake({
      'GET /x': () => (++n < 3 ? { status: 503, body: { error: 'busy' } } : { body: { ok: true } }),
    });
    const t = new HttpTransport({ retry: fast });
    const res = await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(fake.requests).toHaveLength(3);
    expect(t.stats.total).toBe(3);
    expect(t.stats.retries).toBe(2);
    expect(t.stats.summary()).toBe('3 API calls (compute 3; 2 retries)');
  });

  it('returns the last 5xx after the retries run out', async () => {
    fake = await startFake({ 'GET /x': { status: 500, body: { computeFault: { message: 'boom' } } } });
    const t = new HttpTransport({ retry: fast });
    const res = await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' });
    expect(res.status).toBe(500);
    expect(fake.requests).toHaveLength(4);
  });

  it('never retries a POST (a lost answer may hide a started migration)', async () => {
    fake = await startFake({ 'POST /x': { status: 503 } });
    const t = new HttpTransport({ retry: fast });
    const res = await t.send({ method: 'POST', url: `${fake.url}/x`, service: 'compute', body: {} });
    expect(res.status).toBe(503);
    expect(fake.requests).toHaveLength(1);
  });

  it('never retries a 4xx', async () => {
    fake = await startFake({
      'GET /x': { status: 404, body: { itemNotFound: { message: 'nope' } } },
      'GET /y': { status: 409 },
    });
    const t = new HttpTransport({ retry: fast });
    expect((await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })).status).toBe(404);
    expect((await t.send({ method: 'GET', url: `${fake.url}/y`, service: 'compute' })).status).toBe(409);
    expect(fake.requests).toHaveLength(2);
  });

  it('times out, retries, and then says the service is unreachable', async () => {
    // The fake never answers: only the client's timeout ends each attempt, whatever the load.
    // It shares this process's event loop: a timeout of 50 ms, on a loaded machine, could fire
    // before the fake had read the retry it is to count. A quarter of a second leaves it room.
    fake = await startFake({ 'GET /slow': () => new Promise<never>(() => undefined) });
    const t = new HttpTransport({
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 2 },
      timeoutMs: 250,
    });
    const err = await t
      .send({ method: 'GET', url: `${fake.url}/slow`, service: 'placement' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudError);
    expect((err as CloudError).kind).toBe('timeout');
    expect((err as CloudError).message).toBe(
      `placement at ${fake.url} is unreachable (no answer within 250 ms)`,
    );
    expect(fake.requests).toHaveLength(2);
  });

  it('retries after a dropped connection', async () => {
    let n = 0;
    fake = await startFake({ 'GET /x': () => (++n === 1 ? 'hangup' : { body: { ok: 1 } }) });
    const t = new HttpTransport({ retry: fast });
    expect((await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })).body).toEqual({
      ok: 1,
    });
    expect(n).toBe(2);
  });

  it('opens the circuit after consecutive failures and stops sending', async () => {
    fake = await startFake({ 'GET /x': { status: 502 } });
    const t = new HttpTransport({
      retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 },
      breaker: { consecutiveFailures: 3, halfOpenAfterMs: 60_000 },
    });
    for (let i = 0; i < 3; i++)
      expect((await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })).status).toBe(502);
    const err = await t
      .send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })
      .catch((e: unknown) => e);
    expect((err as CloudError).kind).toBe('circuit-open');
    expect((err as CloudError).message).toMatch(
      /^compute at http:\/\/127\.0\.0\.1:\d+ failed 3 times in a row; not sending more requests for 60 s\. Check that the service is up/,
    );
    expect(fake.requests).toHaveLength(3);
  });

  it('lets the circuit close again after a successful trial', async () => {
    let healthy = false;
    fake = await startFake({ 'GET /x': () => (healthy ? { body: {} } : { status: 503 }) });
    const t = new HttpTransport({
      retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 },
      breaker: { consecutiveFailures: 2, halfOpenAfterMs: 30 },
    });
    await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' });
    await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' });
    await expect(t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })).rejects.toThrow(
      /in a row/,
    );
    healthy = true;
    // The breaker times its open state with Date.now(): move that clock past halfOpenAfterMs
    // instead of waiting on the wall clock.
    const later = Date.now() + 40;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => later);
    try {
      expect((await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })).status).toBe(200);
      expect((await t.send({ method: 'GET', url: `${fake.url}/x`, service: 'compute' })).status).toBe(200);
    } finally {
      clock.mockRestore();
    }
  });

  it('sends a request id, reports the one answered, and logs no secrets', async () => {
    fake = await startFake({
      'POST /x': { status: 201, body: { ok: 1 }, headers: { 'X-OpenStack-Request-ID': 'req-from-server' } },
    });
    const lines: string[] = [];
    const t = new HttpTransport({ logger: createLogger({ level: 'debug', write: (l) => lines.push(l) }) });
    const res = await t.send({
      method: 'POST',
      url: `${fake.url}/x?marker=abc`,
      service: 'identity',
      headers: { 'X-Auth-Token': 'gAAAAsecret-token' },
      body: { auth: { password: 'hunter2' } },
    });
    expect(res.requestId).toBe('req-from-server');
    expect(String(fake.requests[0]?.headers['x-openstack-request-id'])).toMatch(/^req-[0-9a-f-]{36}$/);
    const log = lines.join('\n');
    expect(log).toContain('POST');
    expect(log).toContain('req-from-server');
    expect(log).not.toContain('gAAAAsecret-token');
    expect(log).not.toContain('hunter2');
  });
});
