// Per-host utilization of one aggregate, as the planner measures it (the policy's dimensions:
// measured host load when the snapshot has it, else the sum of its servers' loads, over the
// host's physical capacity), for the API's host lists, plan charts and what-if answers. Pure.
import type { Move } from '../../model/plan.js';
import type { Host, Snapshot } from '../../model/snapshot.js';
import { ClusterState } from '../../planner/state.js';
import { aggregateScope, scopedSnapshot, UNASSIGNED_AGGREGATE } from '../../policy/aggregate-scope.js';
import type { Policy } from '../../policy/types.js';

export interface HostUtilization {
  name: string;
  /** Per dimension (cpu, memory, ...): load over physical capacity, 0..1 (above 1 when overcommitted). */
  utilization: Record<string, number>;
  servers: number;
}

export interface HostView extends HostUtilization {
  enabled: boolean;
  up: boolean;
  forcedDown: boolean;
  disabledReason: string | null;
  availabilityZone: string;
  /** Placement's VCPU allocation ratio, or null when the host has no VCPU inventory. */
  vcpuAllocationRatio: number | null;
  /** Placement allocations over capacity ((total - reserved) * ratio) per resource class. */
  allocation: Record<string, { used: number; capacity: number }>;
}

export const inAggregate = (aggregate: string) => (h: Host) =>
  aggregate === UNASSIGNED_AGGREGATE ? h.aggregates.length === 0 : h.aggregates.includes(aggregate);

/** The planner's state of one aggregate of the snapshot (null when no host of it is there). */
export function aggregateState(snapshot: Snapshot, policy: Policy, aggregate: string): ClusterState | null {
  const scope = aggregateScope(snapshot, { aggregates: [aggregate] });
  if (scope.issues.length > 0 || scope.planned.length === 0) return null;
  return new ClusterState(scopedSnapshot(snapshot, scope), { ...policy, aggregates: [aggregate] });
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** Every host of the state's aggregate, sorted by name, with its utilization per dimension now. */
export function utilizationOf(state: ClusterState): HostUtilization[] {
  return state.hosts
    .map((h) => ({
      name: h.name,
      utilization: Object.fromEntries(state.dims.map((d, i) => [d.name, round4(state.util(h.index, i))])),
      servers: state.on[h.index]!.size,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function hostViews(snapshot: Snapshot, policy: Policy, aggregate: string): HostView[] {
  const state = aggregateState(snapshot, policy, aggregate);
  if (state === null) return [];
  const byName = new Map(snapshot.hosts.map((h) => [h.name, h]));
  return utilizationOf(state).map((u) => {
    const h = byName.get(u.name)!;
    const allocation: HostView['allocation'] = {};
    for (const [rc, inv] of Object.entries(h.inventory))
      if (inv !== undefined)
        allocation[rc] = {
          used: h.usage[rc] ?? 0,
          capacity: round4((inv.total - inv.reserved) * inv.allocationRatio),
        };
    return {
      ...u,
      enabled: h.service.status === 'enabled',
      up: h.service.state === 'up',
      forcedDown: h.service.forcedDown,
      disabledReason: h.service.status === 'disabled' ? (h.service.disabledReason ?? null) : null,
      availabilityZone: h.availabilityZone,
      vcpuAllocationRatio: h.inventory.VCPU?.allocationRatio ?? null,
      allocation,
    };
  });
}

export interface BeforeAfter {
  dimensions: string[];
  hosts: {
    name: string;
    before: Record<string, number>;
    after: Record<string, number>;
    serversBefore: number;
    serversAfter: number;
  }[];
  /** Moves whose server is on neither end any more (moved by someone else, or gone): left out. */
  skippedSteps: number[];
}

/**
 * Host utilization before and after a plan's moves, on the given snapshot's loads: a server the
 * snapshot shows on a move's destination (the move ran) is put back on its source for "before";
 * "after" has every move applied. So the chart holds for a plan made on an older snapshot too.
 */
export function beforeAfter(state: ClusterState, moves: readonly Move[]): BeforeAfter {
  const skippedSteps: number[] = [];
  const usable: { server: number; from: number; to: number }[] = [];
  for (const m of moves) {
    const server = state.serverById.get(m.server);
    const from = state.hostByName.get(m.from);
    const to = state.hostByName.get(m.to);
    if (server === undefined || from === undefined || to === undefined) {
      skippedSteps.push(m.step);
      continue;
    }
    const at = state.at[server]!;
    if (at !== from && at !== to) {
      skippedSteps.push(m.step);
      continue;
    }
    usable.push({ server, from, to });
  }
  for (const u of usable) if (state.at[u.server] === u.to) state.apply(u.server, u.from);
  const before = utilizationOf(state);
  for (const u of usable) if (state.at[u.server] !== u.to) state.apply(u.server, u.to);
  const after = new Map(utilizationOf(state).map((h) => [h.name, h]));
  return {
    dimensions: state.dims.map((d) => d.name),
    hosts: before.map((b) => ({
      name: b.name,
      before: b.utilization,
      after: after.get(b.name)!.utilization,
      serversBefore: b.servers,
      serversAfter: after.get(b.name)!.servers,
    })),
    skippedSteps,
  };
}
