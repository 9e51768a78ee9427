// Tiny handwritten clusters for checker tests. Hosts default to 16 VCPU (ratio 1) and 32768 MiB in
// zone "nova" and aggregate "gold"; usage defaults to the flavors of the servers placed on the host.
import { aggregateOutcome, type CheckOptions, checkPlan } from '../../src/checker/index.js';
import { buildWorld } from '../../src/checker/world.js';
import type { AggregatePlan, Move, Plan } from '../../src/model/plan.js';
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
  return { step, wave, server: serverId, from, to, phase: 'spread', reason: 'test', estimatedSeconds: 10 };
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
