// The incremental balance replay (the worth and reasons checks) must give, after every move, what
// the stats module recomputes from scratch on the same placement (stats.test.ts checks that by hand).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AggregateBalance } from '../../src/checker/balance-replay.js';
import { DEFAULT_CHECK_DIMENSIONS } from '../../src/checker/options.js';
import { aggregateOutcome } from '../../src/checker/stats.js';
import { buildWorld } from '../../src/checker/world.js';
import { host, server, snapshot } from './fixtures.js';

const cluster = fc
  .record({
    hosts: fc.array(
      fc.record({
        vcpus: fc.constantFrom(8, 16, 48),
        ramMB: fc.constantFrom(16384, 65536),
        status: fc.constantFrom<'enabled' | 'disabled'>('enabled', 'enabled', 'disabled'),
        aggregate: fc.constantFrom('gold', 'gold', 'silver'),
        measured: fc.option(fc.record({ cpu: fc.double({ min: 0, max: 8, noNaN: true }) })),
      }),
      { minLength: 2, maxLength: 6 },
    ),
    servers: fc.array(
      fc.record({
        on: fc.nat(),
        ramMB: fc.constantFrom(512, 2048, 8192),
        cpu: fc.option(fc.double({ min: 0, max: 4, noNaN: true })),
      }),
      { minLength: 1, maxLength: 12 },
    ),
    moves: fc.array(fc.record({ server: fc.nat(), to: fc.nat() }), { minLength: 1, maxLength: 30 }),
  })
  .map(({ hosts, servers, moves }) => {
    const hs = hosts.map((h, i) =>
      host(`h${i}`, {
        vcpus: h.vcpus,
        ramMB: h.ramMB,
        status: h.status,
        aggregates: [h.aggregate],
        ...(h.measured ? { load: h.measured } : {}),
      }),
    );
    const ss = servers.map((s, i) =>
      server(`s${i}`, `h${s.on % hs.length}`, {
        ramMB: s.ramMB,
        ...(s.cpu !== null ? { load: { cpu: s.cpu } } : {}),
      }),
    );
    return {
      snap: snapshot(hs, ss),
      moves: moves.map((m) => ({ server: m.server % ss.length, to: m.to % hs.length })),
    };
  });

describe('AggregateBalance', () => {
  it('follows the from-scratch imbalance, means and utilizations move after move', () => {
    fc.assert(
      fc.property(cluster, ({ snap, moves }) => {
        const world = buildWorld(snap);
        const dims = DEFAULT_CHECK_DIMENSIONS;
        const balance = new AggregateBalance(world, 'gold', dims);
        const location = new Map(snap.servers.map((s) => [s.id, s.host] as const));
        for (const m of moves) {
          const s = snap.servers[m.server]!;
          const to = snap.hosts[m.to]!.name;
          balance.apply(s, location.get(s.id)!, to);
          location.set(s.id, to);
          const { after } = aggregateOutcome(world, 'gold', (id) => location.get(id), dims);
          expect(balance.imbalance()).toBeCloseTo(after.imbalance, 7);
          dims.forEach((dim, d) => {
            expect(balance.mean(d)).toBeCloseTo(after.dimensions[dim.name]!.mean!, 7);
          });
        }
        for (const h of snap.hosts) {
          const ramMB = snap.servers
            .filter((s) => location.get(s.id) === h.name)
            .reduce((sum, s) => sum + s.flavor.ramMB, 0);
          expect(balance.utilization(h.name, 1)).toBeCloseTo(ramMB / h.inventory.MEMORY_MB!.total, 12);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('counts only the aggregate\u2019s hosts that are up and enabled', () => {
    const snap = snapshot(
      [
        host('a'),
        host('b', { status: 'disabled' }),
        host('c', { state: 'down' }),
        host('d', { aggregates: ['x'] }),
      ],
      [],
    );
    expect(new AggregateBalance(buildWorld(snap), 'gold', DEFAULT_CHECK_DIMENSIONS).counted).toBe(1);
  });
});
