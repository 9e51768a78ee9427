import { describe, expect, it } from 'vitest';
import { createApiLogger } from '../../src/api/logger.js';
import { simKeystone, startApi } from './harness.js';

describe('the API log', () => {
  it('writes one JSON line per request with its id, and never the token', async () => {
    const ks = await simKeystone();
    const lines: string[] = [];
    const logger = createApiLogger({ destination: { write: (l: string) => lines.push(l) } });
    const h = await startApi({ kind: 'keystone', validator: ks.validator }, { logger });
    try {
      const token = await ks.adminToken();
      const bad = `${token.slice(0, 20)}tampered`;
      const requests = [
        { url: '/v1/plans?limit=5', headers: { 'x-auth-token': token } },
        { url: `/v1/plans?cursor=${token}`, headers: { 'x-auth-token': token } },
        { url: '/v1/plans', headers: { 'x-auth-token': bad } },
        { url: `/v1/${token}`, headers: {} },
      ];
      const ids: string[] = [];
      for (const r of requests) {
        const res = await h.app.inject({ method: 'GET', ...r });
        ids.push(String(res.headers['x-request-id']));
      }
      await h.app.inject({
        method: 'POST',
        url: '/v1/pause',
        headers: { 'x-auth-token': token, 'content-type': 'application/json' },
        payload: JSON.stringify({ reason: 'x', password: token }),
      });
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const requestLines = records.filter((r) => r.msg === 'request');
      expect(requestLines).toHaveLength(5);
      expect(requestLines.map((r) => r.reqId).slice(0, 4)).toEqual(ids);
      expect(requestLines[0]).toMatchObject({
        method: 'GET',
        url: '/v1/plans?limit=',
        route: '/v1/plans',
        status: 200,
        user: 'admin',
        service: 'aicerine-api',
      });
      expect(typeof requestLines[0]!.ms).toBe('number');
      const all = lines.join('\n');
      expect(all).not.toContain(token);
      expect(all).not.toContain(bad);
      expect(all).not.toContain(token.slice(6, 40));
    } finally {
      await h.close();
      await ks.sim.close();
    }
  });
});
