// Forecast figures in the API: per aggregate the profiles' coverage and forecast error, per host
// its forecast peak over the next 24 hours and the hour of it, from the latest snapshot's profiles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/model/snapshot.js';
import { type Harness, latestSnapshot, startApi } from './harness.js';

// Weekday 14:00 UTC: four busy cores instead of 1.5 for gold's servers.
function withProfiles(): Snapshot {
  const s = latestSnapshot();
  const cpu = Array.from({ length: 48 }, (_, i) => (i === 14 ? 4 : 1.5));
  const servers = Object.fromEntries(
    s.servers.filter((v) => v.host.startsWith('g')).map((v) => [v.id, { cpu, samples: Array(48).fill(10) }]),
  );
  s.profiles = {
    format: 'aicerine-profiles/1',
    resolution: 'hour-of-day',
    quantile: 0.9,
    timeZone: 'UTC',
    from: '2026-11-16T00:00:00.000Z',
    to: '2026-11-30T00:00:00.000Z',
    refreshedAt: '2026-11-30T00:00:00.000Z',
    minSamples: 2,
    servers,
    errors: {
      gold: {
        meanAbsolute: 0.042,
        hours: 72,
        from: '2026-11-29T01:00:00.000Z',
        to: '2026-11-30T00:00:00.000Z',
      },
    },
  };
  return s;
}

let h: Harness;
let plain: Harness;
beforeAll(async () => {
  h = await startApi(
    { kind: 'none' },
    { snapshots: { latest: withProfiles, record: async () => withProfiles() } },
  );
  plain = await startApi({ kind: 'none' });
});
afterAll(async () => {
  await h.close();
  await plain.close();
});

const get = async (app: Harness, url: string) => {
  const res = await app.app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
  return res.json() as Record<string, any>;
};

describe('forecast in the API', () => {
  it('gives each aggregate its forecast error and profile coverage', async () => {
    const aggs = await get(h, '/v1/aggregates');
    const gold = aggs.items.find((a: { name: string }) => a.name === 'gold');
    expect(gold.forecast).toEqual({
      error: {
        meanAbsolute: 0.042,
        hours: 72,
        from: '2026-11-29T01:00:00.000Z',
        to: '2026-11-30T00:00:00.000Z',
      },
      refreshedAt: '2026-11-30T00:00:00.000Z',
      profiledServers: 7,
      servers: 7,
    });
    const silver = aggs.items.find((a: { name: string }) => a.name === 'silver');
    expect(silver.forecast).toMatchObject({ error: null, profiledServers: 0, servers: 2 });
    const none = await get(plain, '/v1/aggregates/gold');
    expect(none.forecast).toBeNull();
  });

  it('gives each host its forecast peak of the next 24 hours beside its current utilization', async () => {
    const hosts = (await get(h, '/v1/aggregates/gold/hosts')).items;
    // g1: six servers of 1.5 cores now (9 of 16 cores), 4 cores each at weekday 14:00; their
    // memory has no profile, so each falls back to current load for memory.
    expect(hosts[0]).toMatchObject({
      name: 'g1',
      utilization: { cpu: 9 / 16 },
      forecast: { cpu: 1.5, at: '2026-11-30T14:00:00.000Z', label: 'weekday 14:00', fellBack: 6 },
    });
    expect(hosts[2]).toMatchObject({ name: 'g3', forecast: { cpu: 0, fellBack: 0 } });
    // Silver's servers have no profile: their forecast is their current load.
    const silver = (await get(h, '/v1/aggregates/silver/hosts')).items;
    expect(silver[0].forecast).toMatchObject({ fellBack: 1 });
    expect((await get(plain, '/v1/aggregates/gold/hosts')).items[0].forecast).toBeNull();
  });

  it('documents the figures in the OpenAPI document', async () => {
    const doc = await get(h, '/v1/openapi.json');
    expect(doc.components.schemas.Aggregate.properties).toHaveProperty('forecast');
    expect(doc.components.schemas.Host.properties.forecast).toBeDefined();
  });
});
