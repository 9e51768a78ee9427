// Ownership made visible: GET /v1/replicas lists the live replicas (address, heartbeat, the
// aggregates each holds and their fences), /v1/aggregates names each aggregate's owner, and the
// aicerine_aggregate_owner metric follows a hand-over. Two real AggregateOwnership instances
// share one lock service, as two replicas share etcd.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiMetrics } from '../../src/api/metrics.js';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { AggregateOwnership } from '../../src/coordination/ownership.js';
import { assignAggregates } from '../../src/coordination/rendezvous.js';
import { NOW, startApi } from './harness.js';

const AGGREGATES = ['bronze', 'gold', 'silver', 'tin'];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function replica(id: string, locks: LocalLockService) {
  const o = new AggregateOwnership({
    locks,
    replicaId: id,
    aggregates: () => AGGREGATES,
    ttlMs: 5000,
    intervalMs: 1_000_000,
    address: `http://${id}.example:8080`,
    now: () => NOW.getTime(),
    hooks: { acquired: async () => {}, releasing: async () => {}, lost: () => {} },
  });
  cleanups.push(() => o.stop());
  return o;
}

describe('replicas in the API', () => {
  it('lists replicas, owners per aggregate and the owner metric, and follows a hand-over', async () => {
    const locks = new LocalLockService(() => NOW.getTime());
    const r1 = replica('r1', locks);
    const r2 = replica('r2', locks);
    await r1.start();
    await r2.start();
    await r1.rebalance(); // hands r2's share over
    await r2.rebalance(); // which r2 takes
    const metrics = new ApiMetrics();
    const h = await startApi({ kind: 'none' }, { replicas: r1, metrics });
    cleanups.push(() => h.close());
    const get = async (url: string) => {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };
    const share = assignAggregates(AGGREGATES, ['r1', 'r2']);
    const mine = (r: string) => AGGREGATES.filter((a) => share.get(a) === r);

    const body = (await get('/v1/replicas')).json() as {
      coordination: string;
      replicas: {
        id: string;
        address: string;
        lastHeartbeat: string;
        self: boolean;
        aggregates: unknown[];
      }[];
    };
    expect(body.coordination).toBe('etcd');
    expect(body.replicas.map((r) => [r.id, r.address, r.self, r.lastHeartbeat])).toEqual([
      ['r1', 'http://r1.example:8080', true, NOW.toISOString()],
      ['r2', 'http://r2.example:8080', false, NOW.toISOString()],
    ]);
    for (const r of body.replicas)
      expect(r.aggregates).toEqual(
        mine(r.id).map((a) => ({
          aggregate: a,
          fence: expect.any(Number),
        })),
      );

    const aggs = (await get('/v1/aggregates?limit=100')).json() as {
      items: { name: string; owner: { replica: string; fence: number } | null }[];
    };
    for (const a of aggs.items.filter((x) => AGGREGATES.includes(x.name)))
      expect(a.owner?.replica).toBe(share.get(a.name));
    const gold = (await get('/v1/aggregates/gold')).json() as { owner: { replica: string } | null };
    expect(gold.owner?.replica).toBe(share.get('gold'));

    const owners = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('aicerine_aggregate_owner{'))
        .map((l) => l.replace(/ 1$/, ''))
        .sort();
    expect(owners((await get('/metrics')).body)).toEqual(
      AGGREGATES.map((a) => `aicerine_aggregate_owner{aggregate="${a}",replica="${share.get(a)}"}`).sort(),
    );

    // r2 leaves: r1 takes everything, and the metric shows only the new owner of each.
    await r2.stop();
    await r1.rebalance();
    expect(owners((await get('/metrics')).body)).toEqual(
      AGGREGATES.map((a) => `aicerine_aggregate_owner{aggregate="${a}",replica="r1"}`).sort(),
    );
    const after = (await get('/v1/replicas')).json() as { replicas: { id: string }[] };
    expect(after.replicas.map((r) => r.id)).toEqual(['r1']);

    // The OpenAPI document has the route, like every other.
    const doc = (await get('/v1/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain('/v1/replicas');
  });

  it('answers a single process with no replicas and no owners', async () => {
    const h = await startApi({ kind: 'none' });
    cleanups.push(() => h.close());
    const res = await h.app.inject({ method: 'GET', url: '/v1/replicas' });
    expect(res.json()).toEqual({ coordination: 'local', replicas: [] });
    const gold = (await h.app.inject({ method: 'GET', url: '/v1/aggregates/gold' })).json() as {
      owner: unknown;
    };
    expect(gold.owner).toBeNull();
  });
});
