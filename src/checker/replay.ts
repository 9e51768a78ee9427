// The replay engine: walks a plan in the order formats.md says it executes and lets each checker
// watch. Each aggregate's moves are taken in `step` order; a run of consecutive steps with the same
// `wave` is one wave in flight. A migrating server counts on its destination from its step on
// (for server groups), while Placement holds its claim on both hosts until its wave ends.
import type { AggregatePlan, Move, Plan } from '../model/plan.js';
import type { Host, Server } from '../model/snapshot.js';
import type { Limits } from './options.js';
import type { Violation } from './violations.js';
import type { World } from './world.js';

/** Resource classes a live migration claims on its destination (formats.md guarantee 2). */
export const CLAIMED_CLASSES = ['VCPU', 'MEMORY_MB'] as const;
export type ClaimedClass = (typeof CLAIMED_CLASSES)[number];

export function claimOf(server: Server, rc: ClaimedClass): number {
  return rc === 'VCPU' ? server.flavor.vcpus : server.flavor.ramMB;
}

/** A move whose server and hosts all exist in the snapshot. */
export interface ResolvedMove {
  readonly aggregate: string;
  readonly move: Move;
  readonly server: Server;
  readonly from: Host;
  readonly to: Host;
}

/** One wave as executed: consecutive steps of an aggregate sharing a wave number. */
export interface WaveRun {
  readonly aggregate: string;
  readonly wave: number;
  readonly moves: readonly ResolvedMove[];
}

/** The wave's steps grouped by their source (`from`) or destination (`to`) host, in step order. */
export function stepsByHost(wave: WaveRun, side: 'from' | 'to'): Array<{ host: Host; steps: number[] }> {
  const byHost = new Map<string, { host: Host; steps: number[] }>();
  for (const m of wave.moves) {
    const host = m[side];
    const entry = byHost.get(host.name) ?? { host, steps: [] };
    entry.steps.push(m.move.step);
    byHost.set(host.name, entry);
  }
  return [...byHost.values()];
}

export interface ReplayState {
  /** Host the server counts on now: its destination from the moment its step is taken. */
  locationOf(serverId: string): string | undefined;
  /** Placement usage of a host now, including claims of migrations in flight. */
  usageOf(host: string, rc: ClaimedClass): number;
}

export type Report = (violation: Omit<Violation, 'constraint'>) => void;

export interface ReplayContext {
  readonly world: World;
  readonly plan: Plan;
  readonly limits: Limits;
  readonly state: ReplayState;
  readonly report: Report;
}

/**
 * One constraint's watcher. Hooks it does not need are left out. onMove sees the state just before
 * the move is applied; onWaveEnd sees every claim of the wave in place (the worst moment for capacity),
 * before the sources are released.
 */
export interface PlanChecker {
  readonly constraint: string;
  startsWith?(ctx: ReplayContext): void;
  onWaveStart?(ctx: ReplayContext, wave: WaveRun): void;
  onMove?(ctx: ReplayContext, move: ResolvedMove): void;
  onWaveEnd?(ctx: ReplayContext, wave: WaveRun): void;
  endsWith?(ctx: ReplayContext): void;
}

class MutableState implements ReplayState {
  private readonly location = new Map<string, string>();
  private readonly usage = new Map<string, Record<ClaimedClass, number>>();

  constructor(world: World) {
    for (const server of world.snapshot.servers) this.location.set(server.id, server.host);
    for (const host of world.snapshot.hosts) {
      this.usage.set(host.name, { VCPU: host.usage.VCPU ?? 0, MEMORY_MB: host.usage.MEMORY_MB ?? 0 });
    }
  }

  locationOf(serverId: string): string | undefined {
    return this.location.get(serverId);
  }

  usageOf(host: string, rc: ClaimedClass): number {
    return this.usage.get(host)?.[rc] ?? 0;
  }

  /** Moves the server and claims its flavor on the destination; returns where it really was. */
  start(server: Server, to: string): string | undefined {
    const origin = this.location.get(server.id);
    this.location.set(server.id, to);
    this.add(to, server, 1);
    return origin;
  }

  release(server: Server, origin: string): void {
    this.add(origin, server, -1);
  }

  private add(host: string, server: Server, sign: 1 | -1): void {
    const usage = this.usage.get(host);
    if (!usage) return;
    for (const rc of CLAIMED_CLASSES) usage[rc] += sign * claimOf(server, rc);
  }
}

const REFERENCES = 'references';

function resolve(world: World, aggregate: string, move: Move, report: Report): ResolvedMove | undefined {
  const server = world.servers.get(move.server);
  const from = world.hosts.get(move.from);
  const to = world.hosts.get(move.to);
  const at = { aggregate, step: move.step, wave: move.wave, server: move.server };
  if (!server)
    report({ ...at, code: 'unknown-server', detail: `server ${move.server} is not in the snapshot` });
  for (const [role, name, host] of [
    ['source', move.from, from],
    ['destination', move.to, to],
  ] as const) {
    if (!host)
      report({
        ...at,
        host: name,
        code: 'unknown-host',
        detail: `${role} host ${name} is not in the snapshot`,
      });
  }
  return server && from && to ? { aggregate, move, server, from, to } : undefined;
}

/** The aggregate's moves in execution order: by step, ties kept in listed order. */
export function executionOrder(aggregate: AggregatePlan): Move[] {
  return aggregate.moves
    .map((move, index) => ({ move, index }))
    .sort((a, b) => a.move.step - b.move.step || a.index - b.index)
    .map((e) => e.move);
}

function wavesOf(ordered: readonly Move[]): Move[][] {
  const runs: Move[][] = [];
  for (const move of ordered) {
    const last = runs[runs.length - 1];
    if (last && last[0]?.wave === move.wave) last.push(move);
    else runs.push([move]);
  }
  return runs;
}

export function replay(
  world: World,
  plan: Plan,
  limits: Limits,
  checkers: readonly PlanChecker[],
): Violation[] {
  const violations: Violation[] = [];
  const state = new MutableState(world);
  const contextFor = (constraint: string): ReplayContext => ({
    world,
    plan,
    limits,
    state,
    report: (v) => violations.push({ ...v, constraint }),
  });
  const watchers = checkers.map((checker) => ({ checker, ctx: contextFor(checker.constraint) }));
  const references = contextFor(REFERENCES);

  for (const { checker, ctx } of watchers) checker.startsWith?.(ctx);

  for (const aggregate of plan.aggregates) {
    for (const run of wavesOf(executionOrder(aggregate))) {
      const moves = run.flatMap((m) => resolve(world, aggregate.name, m, references.report) ?? []);
      const wave: WaveRun = { aggregate: aggregate.name, wave: run[0]?.wave ?? 0, moves };
      for (const { checker, ctx } of watchers) checker.onWaveStart?.(ctx, wave);
      const origins: Array<[Server, string]> = [];
      for (const move of moves) {
        for (const { checker, ctx } of watchers) checker.onMove?.(ctx, move);
        const origin = state.start(move.server, move.to.name);
        if (origin !== undefined) origins.push([move.server, origin]);
      }
      for (const { checker, ctx } of watchers) checker.onWaveEnd?.(ctx, wave);
      for (const [server, origin] of origins) state.release(server, origin);
    }
  }

  for (const { checker, ctx } of watchers) checker.endsWith?.(ctx);
  return violations;
}
