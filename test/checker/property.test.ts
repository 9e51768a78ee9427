// Properties over small random clusters: every single move a brute-force search (written here,
// independently of the checker) finds legal passes, and corrupting such a plan in one known way
// fails with exactly the violation that corruption should cause.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import type { Move, Plan } from '../../src/model/plan.js';
import type { Host, Server, ServerGroup, Snapshot } from '../../src/model/snapshot.js';
import { codes, group, host, move, plan, server, snapshot, withTrueStats } from './fixtures.js';

const hostArb = fc.record({
  vcpus: fc.constantFrom(4, 8, 16),
  ramMB: fc.constantFrom(4096, 8192, 16384),
  ratio: fc.constantFrom(1, 2),
  az: fc.constantFrom('nova', 'nova', 'az2'),
  aggregate: fc.constantFrom('gold', 'gold', 'silver'),
  state: fc.constantFrom<'up' | 'down'>('up', 'up', 'up', 'down'),
  status: fc.constantFrom<'enabled' | 'disabled'>('enabled', 'enabled', 'enabled', 'disabled'),
  forcedDown: fc.constantFrom(false, false, false, true),
  measured: fc.option(
    fc.record({ cpu: fc.integer({ min: 0, max: 8 }), memoryMB: fc.integer({ min: 0, max: 8000 }) }),
  ),
});

const serverArb = fc.record({
  on: fc.nat(),
  vcpus: fc.integer({ min: 1, max: 4 }),
  ramMB: fc.constantFrom(512, 1024, 2048, 4096),
  active: fc.constantFrom(true, true, true, false),
  shared: fc.constantFrom(true, true, true, false),
  load: fc.option(
    fc.record({
      cpu: fc.double({ min: 0, max: 4, noNaN: true }),
      memoryMB: fc.integer({ min: 0, max: 4096 }),
    }),
  ),
});

const groupArb = fc.option(
  fc.record({
    policy: fc.constantFrom('affinity' as const, 'anti-affinity' as const, 'soft-anti-affinity' as const),
    members: fc.uniqueArray(fc.nat({ max: 7 }), { minLength: 2, maxLength: 4 }),
    maxPerHost: fc.option(fc.integer({ min: 1, max: 2 })),
  }),
);

interface ClusterOptions {
  /** Every host up, enabled, not forced down, in one zone and aggregate; every server migratable. */
  tidy: boolean;
}

function clusterArb({ tidy }: ClusterOptions): fc.Arbitrary<Snapshot> {
  return fc
    .record({
      hosts: fc.array(hostArb, { minLength: 2, maxLength: 5 }),
      servers: fc.array(serverArb, { minLength: 1, maxLength: 8 }),
      group: groupArb,
    })
    .map(({ hosts, servers, group: g }) => {
      const hs = hosts.map((h, i) =>
        host(`h${i}`, {
          vcpus: h.vcpus,
          ramMB: h.ramMB,
          ratio: h.ratio,
          az: tidy ? 'nova' : h.az,
          aggregates: [tidy ? 'gold' : h.aggregate],
          state: tidy ? 'up' : h.state,
          status: tidy ? 'enabled' : h.status,
          forcedDown: tidy ? false : h.forcedDown,
          ...(h.measured ? { load: h.measured } : {}),
        }),
      );
      const ss = servers.map((s, i) =>
        server(`s${i}`, `h${s.on % hs.length}`, {
          vcpus: s.vcpus,
          ramMB: s.ramMB,
          status: tidy || s.active ? 'ACTIVE' : 'SHUTOFF',
          sharedStorage: tidy || s.shared,
          ...(s.load ? { load: s.load } : {}),
        }),
      );
      const groups: ServerGroup[] = [];
      if (g && !tidy) {
        const members = g.members.filter((m) => m < ss.length).map((m) => `s${m}`);
        groups.push(group('g', g.policy, members, g.maxPerHost ?? undefined));
      }
      return snapshot(hs, ss, groups);
    });
}

// --- brute-force legality, from formats.md, sharing no code with src/checker ---

const room = (h: Host, rc: 'VCPU' | 'MEMORY_MB'): number => {
  const inv = h.inventory[rc];
  return inv ? (inv.total - inv.reserved) * inv.allocationRatio - (h.usage[rc] ?? 0) : 0;
};

function hardViolations(g: ServerGroup, where: (id: string) => string | undefined): number {
  const perHost = new Map<string, number>();
  for (const m of g.members) {
    const h = where(m);
    if (h) perHost.set(h, (perHost.get(h) ?? 0) + 1);
  }
  const counts = [...perHost.values()];
  if (g.policy === 'anti-affinity') {
    return counts.map((c) => Math.max(0, c - (g.rules?.max_server_per_host ?? 1))).reduce((a, b) => a + b, 0);
  }
  if (g.policy === 'affinity') return counts.reduce((a, b) => a + b, 0) - Math.max(0, ...counts);
  return 0;
}

function legalMoves(snap: Snapshot): Array<{ s: Server; from: Host; to: Host }> {
  const byName = new Map(snap.hosts.map((h) => [h.name, h]));
  const out: Array<{ s: Server; from: Host; to: Host }> = [];
  for (const s of snap.servers) {
    const from = byName.get(s.host);
    if (!from || s.status !== 'ACTIVE' || !s.sharedStorage) continue;
    if (from.service.state !== 'up' || from.service.forcedDown) continue;
    for (const to of snap.hosts) {
      const ok =
        to !== from &&
        to.service.state === 'up' &&
        to.service.status === 'enabled' &&
        !to.service.forcedDown &&
        to.availabilityZone === from.availabilityZone &&
        to.aggregates[0] === from.aggregates[0] &&
        room(to, 'VCPU') >= s.flavor.vcpus &&
        room(to, 'MEMORY_MB') >= s.flavor.ramMB &&
        snap.serverGroups.every(
          (g) =>
            !g.members.includes(s.id) ||
            hardViolations(g, (id) =>
              id === s.id ? to.name : snap.servers.find((x) => x.id === id)?.host,
            ) <= hardViolations(g, (id) => snap.servers.find((x) => x.id === id)?.host),
        );
      if (ok) out.push({ s, from, to });
    }
  }
  return out;
}

function singleMovePlan(snap: Snapshot, m: Move, aggregate: string): Plan {
  const aggregates: Record<string, Move[]> = { gold: [], silver: [] };
  aggregates[aggregate] = [m];
  return plan(snap, aggregates);
}

describe('random single-move plans', () => {
  it('every legal single move found by brute force passes', () => {
    fc.assert(
      fc.property(clusterArb({ tidy: false }), fc.nat(), (snap, pick) => {
        const legal = legalMoves(snap);
        fc.pre(legal.length > 0);
        const { s, from, to } = legal[pick % legal.length]!;
        const p = singleMovePlan(snap, move(1, 1, s.id, from.name, to.name), from.aggregates[0] ?? 'gold');
        expect(checkPlan(snap, p).violations).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('every single move brute force rejects fails', () => {
    fc.assert(
      fc.property(clusterArb({ tidy: false }), fc.nat(), fc.nat(), (snap, i, j) => {
        const s = snap.servers[i % snap.servers.length]!;
        const to = snap.hosts[j % snap.hosts.length]!;
        const legal = legalMoves(snap).some((m) => m.s === s && m.to === to);
        const p = singleMovePlan(snap, move(1, 1, s.id, s.host, to.name), 'gold');
        const source = snap.hosts.find((h) => h.name === s.host);
        fc.pre(source?.aggregates[0] === 'gold');
        expect(checkPlan(snap, p).ok).toBe(legal);
      }),
      { numRuns: 300 },
    );
  });

  type Corruption = (
    snap: Snapshot,
    m: Move,
  ) => { snap: Snapshot; plan: Plan; options?: { maxMoves: number } };

  // A spare host that is legal in every way but the one the corruption spoils.
  const spare = (snap: Snapshot, spec: Parameters<typeof host>[1]): Snapshot =>
    snapshot(
      [...snap.hosts, host('spare', { vcpus: 64, ramMB: 262144, ...spec })],
      snap.servers,
      snap.serverGroups,
    );
  const toSpare = (snap: Snapshot, m: Move) =>
    withTrueStats(snap, plan(snap, { gold: [{ ...m, to: 'spare' }] }));
  const viaSpare =
    (spec: Parameters<typeof host>[1]): Corruption =>
    (snap, m) => {
      const s = spare(snap, spec);
      return { snap: s, plan: toSpare(s, m) };
    };
  const replaceServer = (snap: Snapshot, id: string, edit: (s: Server) => Server): Snapshot => ({
    ...snap,
    servers: snap.servers.map((s) => (s.id === id ? edit(s) : s)),
  });

  const corruptions: Array<[string, Corruption]> = [
    ['destination-disabled', viaSpare({ status: 'disabled' })],
    ['destination-not-up', viaSpare({ state: 'down' })],
    ['destination-forced-down', viaSpare({ forcedDown: true })],
    ['zone-mismatch', viaSpare({ az: 'az9' })],
    ['aggregate-mismatch', viaSpare({ aggregates: ['elsewhere'] })],
    ['capacity-exceeded', viaSpare({ vcpus: 1, usage: { VCPU: 1, MEMORY_MB: 0 } })],
    [
      'server-not-on-source',
      (snap, m) => {
        const s = spare(snap, {});
        return { snap: s, plan: withTrueStats(s, plan(s, { gold: [{ ...m, from: 'spare' }] })) };
      },
    ],
    ['unknown-server', (snap, m) => ({ snap, plan: plan(snap, { gold: [{ ...m, server: 'ghost' }] }) })],
    ['unknown-host', (snap, m) => ({ snap, plan: plan(snap, { gold: [{ ...m, to: 'ghost' }] }) })],
    [
      'not-migratable',
      (snap, m) => {
        const s = replaceServer(snap, m.server, (x) => ({ ...x, taskState: 'migrating' }));
        return { snap: s, plan: plan(s, { gold: [m] }) };
      },
    ],
    ['budget-exceeded', (snap, m) => ({ snap, plan: plan(snap, { gold: [m] }), options: { maxMoves: 0 } })],
    ['wave-order', (snap, m) => ({ snap, plan: plan(snap, { gold: [{ ...m, wave: 2 }] }) })],
    ['steps-not-ordered', (snap, m) => ({ snap, plan: plan(snap, { gold: [{ ...m, step: 2 }] }) })],
    [
      'stats-mismatch',
      (snap, m) => {
        const p = plan(snap, { gold: [m] });
        const [gold] = p.aggregates;
        return {
          snap,
          plan: { ...p, aggregates: gold ? [{ ...gold, after: { ...gold.after, imbalance: 7 } }] : [] },
        };
      },
    ],
  ];

  it.each(corruptions)('a legal move corrupted to cause %s fails with exactly that', (code, corrupt) => {
    fc.assert(
      fc.property(clusterArb({ tidy: true }), fc.nat(), (snap, pick) => {
        const legal = legalMoves(snap);
        fc.pre(legal.length > 0);
        const { s, from, to } = legal[pick % legal.length]!;
        const bad = corrupt(snap, move(1, 1, s.id, from.name, to.name));
        expect(codes(checkPlan(bad.snap, bad.plan, bad.options).violations)).toEqual([code]);
      }),
      { numRuns: 60 },
    );
  });
});
