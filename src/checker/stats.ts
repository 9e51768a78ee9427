// Recomputes an aggregate's balance numbers the way formats.md defines them, to hold the plan's
// reported `before`, `after` and `hostsFreed` against:
// - utilization of a dimension = load / (total - reserved) of its capacity resource class;
// - a host's load is its measured load, or the sum of its servers' loads when it has none measured;
//   after the plan it is that minus the servers that left plus those that arrived;
// - imbalance = sum over dimensions of weight * population stddev of utilization, over the
//   aggregate's hosts that are up and enabled (hosts without that capacity are left out of that dimension).
import type { BalanceStats, DimensionStats } from '../model/plan.js';
import type { Host, Server } from '../model/snapshot.js';
import type { DimensionDef } from '../policy/types.js';
import type { World } from './world.js';

export function serverLoad(server: Server, dim: DimensionDef): number {
  const measured = server.load?.[dim.load];
  if (measured !== undefined) return measured;
  switch (dim.missingServerLoad) {
    case 'zero':
      return 0;
    case 'flavor-vcpus':
      return server.flavor.vcpus;
    case 'flavor-ram':
      return server.flavor.ramMB;
    case 'flavor-disk':
      return server.flavor.diskGB;
  }
}

function physicalCapacity(host: Host, dim: DimensionDef): number | undefined {
  const inv = host.inventory[dim.capacity];
  if (!inv) return undefined;
  const capacity = inv.total - inv.reserved;
  return capacity > 0 ? capacity : undefined;
}

export type HostLoad = (host: Host, dim: DimensionDef) => number;

export function balanceOf(
  hosts: readonly Host[],
  loadOf: HostLoad,
  dims: readonly DimensionDef[],
): BalanceStats {
  const dimensions: Record<string, DimensionStats> = {};
  let imbalance = 0;
  for (const dim of dims) {
    const utils: number[] = [];
    for (const host of hosts) {
      const capacity = physicalCapacity(host, dim);
      if (capacity !== undefined) utils.push(loadOf(host, dim) / capacity);
    }
    const n = utils.length;
    const mean = n === 0 ? 0 : utils.reduce((s, u) => s + u, 0) / n;
    const variance = n === 0 ? 0 : utils.reduce((s, u) => s + (u - mean) ** 2, 0) / n;
    const stddev = Math.sqrt(variance);
    dimensions[dim.name] = { stddev, max: n === 0 ? 0 : Math.max(...utils), mean };
    imbalance += dim.weight * stddev;
  }
  return { imbalance, dimensions };
}

export interface AggregateOutcome {
  before: BalanceStats;
  after: BalanceStats;
  /** Hosts of the aggregate that held servers in the snapshot and hold none after the plan. */
  hostsFreed: string[];
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** `locate` gives each server's host once every move is applied. */
export function aggregateOutcome(
  world: World,
  aggregate: string,
  locate: (serverId: string) => string | undefined,
  dims: readonly DimensionDef[],
): AggregateOutcome {
  const members = world.hostsIn(aggregate);
  const counted = members.filter((h) => h.service.state === 'up' && h.service.status === 'enabled');
  const names = new Set(members.map((h) => h.name));

  const sumOf = (servers: readonly Server[], dim: DimensionDef): number =>
    servers.reduce((s, server) => s + serverLoad(server, dim), 0);
  const loadBefore: HostLoad = (host, dim) =>
    host.load?.[dim.load] ?? sumOf(world.serversOn.get(host.name) ?? [], dim);

  const left = new Map<string, Server[]>();
  const arrived = new Map<string, Server[]>();
  const endsWith = new Map<string, number>();
  for (const server of world.snapshot.servers) {
    const end = locate(server.id) ?? server.host;
    endsWith.set(end, (endsWith.get(end) ?? 0) + 1);
    if (end === server.host) continue;
    if (names.has(server.host)) push(left, server.host, server);
    if (names.has(end)) push(arrived, end, server);
  }
  const loadAfter: HostLoad = (host, dim) =>
    loadBefore(host, dim) - sumOf(left.get(host.name) ?? [], dim) + sumOf(arrived.get(host.name) ?? [], dim);

  const hostsFreed = members
    .filter((h) => (world.serversOn.get(h.name)?.length ?? 0) > 0 && (endsWith.get(h.name) ?? 0) === 0)
    .map((h) => h.name);

  return {
    before: balanceOf(counted, loadBefore, dims),
    after: balanceOf(counted, loadAfter, dims),
    hostsFreed,
  };
}
