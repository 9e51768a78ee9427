// Tiny handwritten clusters for checker tests. Hosts default to 16 VCPU (ratio 1) and 32768 MiB in
// zone "nova" and aggregate "gold"; usage defaults to the flavors of the servers placed on the host.
import { aggregateOutcome, type CheckOptions, checkPlan } from '../../src/checker/index.js';
import { serverLoad } from '../../src/checker/stats.js';
import { buildWorld } from '../../src/checker/world.js';
import type { AggregatePlan, Move, Plan, PlanThreshold } from '../../src/model/plan.js';
import type { Host, Server, ServerGroup, ServerGroupPolicy, Snapshot } from '../../src/model/snapshot.js';
import type { DimensionDef } from '../../src/policy/types.js';

export interface HostSpec {
  vcpus?: number;
  ramMB?: number;
  reservedVcpus?: number;
  reservedMB?: number;
  ratio?: number;
  az?: string;
  aggregates?: string[];
  state?: 'up' | 'down';
  status?: 'enabled' | 'disabled';
  forcedDown?: boolean;
  usage?: { VCPU: number; MEMORY_MB: number };
  load?: { cpu?: number; memoryMB?: number };
  maxConcurrentLiveMigrations?: number;
}

export function host(name: string, spec: HostSpec = {}): Host {
  const h: Host = {
    name,
    availabilityZone: spec.az ?? 'nova',
    aggregates: spec.aggregates ?? ['gold'],
    service: {
      state: spec.state ?? 'up',
      status: spec.status ?? 'enabled',
      forcedDown: spec.forcedDown ?? false,
    },
    inventory: {
      VCPU: { total: spec.vcpus ?? 16, reserved: spec.reservedVcpus ?? 0, allocationRatio: spec.ratio ?? 1 },
      MEMORY_MB: { total: spec.ramMB ?? 32768, reserved: spec.reservedMB ?? 0, allocationRatio: 1 },
      DISK_GB: { total: 1000, reserved: 0, allocationRatio: 1 },
    },
    usage: spec.usage ? { ...spec.usage } : {},
  };
  if (spec.load) h.load = { ...spec.load };
  if (spec.maxConcurrentLiveMigrations !== undefined)
    h.maxConcurrentLiveMigrations = spec.maxConcurrentLiveMigrations;
  return h;
}

export interface ServerSpec {
  vcpus?: number;
  ramMB?: number;
  status?: string;
  taskState?: string | null;
  sharedStorage?: boolean;
  sriov?: boolean;
  metadata?: Record<string, string>;
  extraSpecs?: Record<string, string>;
  load?: { cpu?: number; memoryMB?: number };
}

export function server(id: string, on: string, spec: ServerSpec = {}): Server {
  const s: Server = {
    id,
    name: `vm-${id}`,
    projectId: 'p1',
    host: on,
    status: spec.status ?? 'ACTIVE',
    taskState: spec.taskState === undefined ? null : spec.taskState,
    flavor: { name: 'm1', vcpus: spec.vcpus ?? 2, ramMB: spec.ramMB ?? 4096, diskGB: 20 },
    sharedStorage: spec.sharedStorage ?? true,
  };
  if (spec.extraSpecs) s.flavor.extraSpecs = { ...spec.extraSpecs };
  if (spec.sriov !== undefined) s.sriov = spec.sriov;
  if (spec.metadata) s.metadata = { ...spec.metadata };
  if (spec.load) s.load = { ...spec.load };
  return s;
}

export function group(
  name: string,
  policy: ServerGroupPolicy,
  members: string[],
  maxPerHost?: number,
): ServerGroup {
  const g: ServerGroup = { id: `g-${name}`, name, policy, members };
  if (maxPerHost !== undefined) g.rules = { max_server_per_host: maxPerHost };
  return g;
}

/** Hosts without an explicit usage get the sum of their servers' flavors, as Placement would show. */
export function snapshot(hosts: Host[], servers: Server[], serverGroups: ServerGroup[] = []): Snapshot {
  for (const h of hosts) {
    if (h.usage.VCPU !== undefined) continue;
    const on = servers.filter((s) => s.host === h.name);
    h.usage = {
      VCPU: on.reduce((n, s) => n + s.flavor.vcpus, 0),
      MEMORY_MB: on.reduce((n, s) => n + s.flavor.ramMB, 0),
    };
  }
  return {
    format: 'aicerine-snapshot/1',
    takenAt: '2026-11-29T14:00:00Z',
    source: 'test',
    hosts,
    servers,
    serverGroups,
  };
}

export function move(step: number, wave: number, serverId: string, from: string, to: string): Move {
  return { step, wave, server: serverId, from, to, phase: 'pack', reason: 'test', estimatedSeconds: 10 };
}

/** A spread move (the phase held to worth and gain), with any other fields given. */
export function spreadMove(
  step: number,
  wave: number,
  id: string,
  from: string,
  to: string,
  extra: Partial<Move> = {},
): Move {
  return { ...move(step, wave, id, from, to), phase: 'spread', ...extra };
}

export interface PlanSpec {
  mode?: Plan['mode'];
  limits?: Plan['limits'];
  dimensions?: DimensionDef[];
}

const DIMENSIONS: DimensionDef[] = [
  { name: 'cpu', weight: 0.5, load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' },
  { name: 'memory', weight: 0.5, load: 'memoryMB', capacity: 'MEMORY_MB', missingServerLoad: 'flavor-ram' },
];

/**
 * A plan whose reported numbers are right, so a test about another guarantee sees only its own
 * violation. Final placements are worked out here by applying the moves in step order; the numbers
 * come from the checker's stats module, which test/checker/stats.test.ts checks by hand.
 */
export function plan(snap: Snapshot, aggregates: Record<string, Move[]>, spec: PlanSpec = {}): Plan {
  const p: Plan = {
    format: 'aicerine-plan/1',
    snapshotTakenAt: snap.takenAt,
    mode: spec.mode ?? 'spread',
    aggregates: Object.entries(aggregates).map(([name, moves]) => ({
      name,
      moves,
      before: { imbalance: 0, dimensions: {} },
      after: { imbalance: 0, dimensions: {} },
      hostsFreed: [],
      unresolved: [],
    })),
    stats: { planningMs: 1 },
  };
  if (spec.limits) p.limits = spec.limits;
  return withTrueStats(snap, p, spec.dimensions);
}

/** Rewrites every aggregate's before/after/hostsFreed to what the plan's moves really give. */
export function withTrueStats(snap: Snapshot, p: Plan, dimensions: DimensionDef[] = DIMENSIONS): Plan {
  const world = buildWorld(snap);
  const location = new Map(snap.servers.map((s) => [s.id, s.host] as const));
  for (const a of p.aggregates) {
    for (const m of [...a.moves].sort((x, y) => x.step - y.step)) {
      // The checker leaves moves naming unknown servers or hosts out of the replay.
      if (location.has(m.server) && world.hosts.has(m.from) && world.hosts.has(m.to))
        location.set(m.server, m.to);
    }
  }
  const aggregates: AggregatePlan[] = p.aggregates.map((a) => {
    const outcome = aggregateOutcome(world, a.name, (id) => location.get(id), dimensions);
    return { ...a, before: outcome.before, after: outcome.after, hostsFreed: outcome.hostsFreed };
  });
  return { ...p, aggregates };
}

export function codes(violations: ReadonlyArray<{ code: string }>): string[] {
  return [...new Set(violations.map((v) => v.code))].sort();
}

/** Three hosts in gold; s1 and s2 on h1, s3 on h2, h3 empty. Override any host's or server's spec. */
export function threeHosts(
  hosts: Partial<Record<'h1' | 'h2' | 'h3', HostSpec>> = {},
  servers: Partial<Record<'s1' | 's2' | 's3', ServerSpec>> = {},
  groups: ServerGroup[] = [],
): Snapshot {
  return snapshot(
    [host('h1', hosts.h1), host('h2', hosts.h2), host('h3', hosts.h3)],
    [server('s1', 'h1', servers.s1), server('s2', 'h1', servers.s2), server('s3', 'h2', servers.s3)],
    groups,
  );
}

/** One row of a table test: a snapshot, a plan and options, and the violation codes expected. */
export interface Built {
  snap: Snapshot;
  plan: Plan;
  options?: CheckOptions;
}

export interface Case {
  name: string;
  build: () => Built;
  want: string[];
}

export function codesOf({ snap, plan: p, options }: Built): string[] {
  return codes(checkPlan(snap, p, options).violations);
}

/** The usual row: `moves` listed under gold on the given snapshot (three hosts by default). */
export function inGold(moves: Move[], options?: CheckOptions, snap: Snapshot = threeHosts()): Built {
  return options
    ? { snap, plan: plan(snap, { gold: moves }), options }
    : { snap, plan: plan(snap, { gold: moves }) };
}

/** Two aggregates of two hosts each: s1 on a1 (gold, with a2), s2 on b1 (silver, with b2). */
export function twoAggregates(): Snapshot {
  return snapshot(
    [host('a1'), host('a2'), host('b1', { aggregates: ['silver'] }), host('b2', { aggregates: ['silver'] })],
    [server('s1', 'a1'), server('s2', 'b1')],
  );
}

// --- plans an operator approves (issue 23): true reasons, gains and threshold tests ---

/** The threshold test plans in these fixtures are held to: small enough that the moves clear it. */
export const TEST_THRESHOLD: PlanThreshold = {
  level: null,
  mandatoryOnly: false,
  perMove: 0.001,
  perMinute: 0.001,
  perGiB: 0.0001,
  minGain: 0.0001,
  migrationCostPerSecond: 0.00001,
  softGroupPenalty: 0.5,
};

const pctOf = (u: number): string => `${Math.round(u * 100)}%`;

/** Soft-group violations counted by hand: members beyond the limit per host, or away from the biggest host. */
function softViolations(g: ServerGroup, where: (id: string) => string): number {
  const perHost = new Map<string, number>();
  for (const m of g.members) perHost.set(where(m), (perHost.get(where(m)) ?? 0) + 1);
  const counts = [...perHost.values()];
  if (g.policy === 'soft-anti-affinity')
    return counts.reduce((s, c) => s + Math.max(0, c - (g.rules?.max_server_per_host ?? 1)), 0);
  if (g.policy === 'soft-affinity') return counts.reduce((s, c) => s + c, 0) - Math.max(0, ...counts);
  return 0;
}

/**
 * Fills in what a plan says of each move: the reason's figures and words, `gain` and, for optional
 * balance moves, `threshold`. Everything is worked out from the snapshot placed as after the earlier
 * steps (the stats module, checked by hand in stats.test.ts, for imbalance and means; loads summed
 * here), not with the checker's incremental replay, so that the two can disagree.
 */
export function truthful(snap: Snapshot, p: Plan, dimensions: DimensionDef[] = DIMENSIONS): Plan {
  const world = buildWorld(snap);
  const t = p.limits?.threshold;
  const hot = p.limits?.hotThreshold ?? 0.85;
  const aggregates = p.aggregates.map((a) => {
    const location = new Map(snap.servers.map((s) => [s.id, s.host] as const));
    const counted = world
      .hostsIn(a.name)
      .filter((h) => h.service.state === 'up' && h.service.status === 'enabled');
    const n = counted.length;
    const util = (hostName: string, d: DimensionDef): number => {
      const h = world.hosts.get(hostName)!;
      const inv = h.inventory[d.capacity as 'VCPU' | 'MEMORY_MB']!;
      const load = snap.servers
        .filter((s) => location.get(s.id) === hostName)
        .reduce((sum, s) => sum + serverLoad(s, d), 0);
      return load / (inv.total - inv.reserved);
    };
    const utils = (h: string): string => dimensions.map((d) => `${d.name} ${pctOf(util(h, d))}`).join(', ');
    const moves = [...a.moves]
      .sort((x, y) => x.step - y.step)
      .map((m) => {
        const state = aggregateOutcome(world, a.name, (id) => location.get(id), dimensions).after;
        const server = world.servers.get(m.server)!;
        const words = [`moving ${m.server} from ${m.from} (${utils(m.from)}) to ${m.to} (${utils(m.to)})`];
        if (dimensions.some((d) => util(m.from, d) >= hot)) words.push(`${m.from} runs hot`);
        const cpu = dimensions[0]!;
        const above = Math.round((util(m.from, cpu) - state.dimensions[cpu.name]!.mean!) * 100);
        if (counted.some((h) => h.name === m.from) && above > 0)
          words.push(`${m.from} is ${above} points above the aggregate's ${cpu.name} mean`);
        if (dimensions.some((d) => util(m.to, d) < state.dimensions[d.name]!.mean!))
          words.push(`${m.to} has room`);
        const softBefore = snap.serverGroups.reduce(
          (s, g) => s + softViolations(g, (id) => location.get(id)!),
          0,
        );
        location.set(m.server, m.to);
        const softAfter = snap.serverGroups.reduce(
          (s, g) => s + softViolations(g, (id) => location.get(id)!),
          0,
        );
        const after = aggregateOutcome(world, a.name, (id) => location.get(id), dimensions).after;
        words.push(`imbalance ${state.imbalance.toFixed(4)} -> ${after.imbalance.toFixed(4)}`);
        if (m.exchangeWith !== undefined) words.push(`exchange with step ${m.exchangeWith}`);
        if (m.makesRoomFor !== undefined) words.push(`makes room for step ${m.makesRoomFor}`);
        const gain = state.imbalance - after.imbalance;
        const out: Move = { ...m, reason: words.join('; '), gain: Math.round(gain * 1e6) / 1e6 };
        const optional = m.mandatory === undefined && (m.phase === 'spread' || m.softGroup === true);
        if (t && optional) {
          const seconds = m.estimatedSeconds;
          const objective = Math.max(
            t.minGain + t.migrationCostPerSecond * seconds,
            t.perMove + (t.perMinute * seconds) / 60 + (t.perGiB * server.flavor.ramMB) / 1024,
          );
          const worth = gain + (t.softGroupPenalty * (softBefore - softAfter)) / n;
          out.threshold = {
            worth: Math.round(worth * 1e6) / 1e6,
            bar: Math.round((objective / n) * 1e6) / 1e6,
          };
        }
        return out;
      });
    return { ...a, moves };
  });
  return withTrueStats(snap, { ...p, aggregates }, dimensions);
}

/**
 * A plan an operator approves, over two aggregates, using every new field:
 * gold: g1 runs hot (cpu 88%); g4 is disabled; b1 and b2 break their anti-affinity group on g2;
 *   a2 and a3 share g1 against their soft anti-affinity group.
 * silver: s1 trades its big x1 for s2's small y1 (an exchange); z1 leaves s3 to make room for v1.
 */
export function approvedPlan(): { snap: Snapshot; plan: Plan } {
  const cpu = (c: number, ramMB = 4096): ServerSpec => ({ vcpus: 2, ramMB, load: { cpu: c } });
  const snap = snapshot(
    [
      host('g1'),
      host('g2'),
      host('g3'),
      host('g4', { status: 'disabled' }),
      host('g5'),
      ...['s1', 's2', 's3', 's4', 's5'].map((n) => host(n, { aggregates: ['silver'] })),
    ],
    [
      server('a1', 'g1', cpu(6)),
      server('a2', 'g1', cpu(4)),
      server('a3', 'g1', cpu(4)),
      server('b1', 'g2', cpu(2)),
      server('b2', 'g2', cpu(2)),
      server('c1', 'g3', cpu(1)),
      server('d1', 'g4', cpu(1)),
      server('e1', 'g5', cpu(3)),
      server('x1', 's1', cpu(8, 8192)),
      server('x2', 's1', cpu(2)),
      server('y1', 's2', cpu(1, 2048)),
      server('y2', 's2', cpu(1)),
      server('z1', 's3', cpu(4)),
      server('v1', 's5', cpu(6)),
      server('v2', 's5', cpu(5)),
    ],
    [group('db', 'anti-affinity', ['b1', 'b2']), group('web', 'soft-anti-affinity', ['a2', 'a3'])],
  );
  const m = spreadMove;
  const raw = plan(
    snap,
    {
      gold: [
        m(1, 1, 'a1', 'g1', 'g3'),
        m(2, 1, 'b2', 'g2', 'g5', { phase: 'affinity', mandatory: 'hard-group' }),
        m(3, 2, 'a3', 'g1', 'g3', { phase: 'affinity', softGroup: true }),
        m(4, 2, 'd1', 'g4', 'g2', { phase: 'evacuate', mandatory: 'evacuation' }),
      ],
      silver: [
        m(1, 1, 'x1', 's1', 's2', { exchangeWith: 3 }),
        m(2, 1, 'z1', 's3', 's4', { makesRoomFor: 4 }),
        m(3, 2, 'y1', 's2', 's1', { exchangeWith: 1 }),
        m(4, 2, 'v1', 's5', 's3'),
      ],
    },
    {
      limits: {
        maxMoves: 20,
        perHostOutgoing: 1,
        globalConcurrent: 10,
        threshold: TEST_THRESHOLD,
        hotThreshold: 0.85,
      },
    },
  );
  return { snap, plan: truthful(snap, raw) };
}
