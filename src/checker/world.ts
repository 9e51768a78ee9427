// The snapshot, indexed for the checker, and the aggregate membership rule of formats.md.
// Built from the snapshot and the plan's aggregate names only: the checker never asks the planner
// which aggregate a host is in.
import type { Plan } from '../model/plan.js';
import type { Host, Server, ServerGroup, Snapshot } from '../model/snapshot.js';

export const UNASSIGNED = '_unassigned_';

export interface World {
  readonly snapshot: Snapshot;
  readonly hosts: ReadonlyMap<string, Host>;
  readonly servers: ReadonlyMap<string, Server>;
  /** Groups each server is a member of (Nova allows one; a malformed snapshot may list more). */
  readonly groupsOf: ReadonlyMap<string, readonly ServerGroup[]>;
  /** Servers each host holds in the snapshot. */
  readonly serversOn: ReadonlyMap<string, readonly Server[]>;
  /** Planned aggregate names the host is in; [UNASSIGNED] when none. */
  aggregatesOf(host: Host): readonly string[];
  inAggregate(host: Host, aggregate: string): boolean;
  hostsIn(aggregate: string): readonly Host[];
}

export function buildWorld(snapshot: Snapshot, plan: Plan): World {
  const hosts = new Map(snapshot.hosts.map((h) => [h.name, h] as const));
  const servers = new Map(snapshot.servers.map((s) => [s.id, s] as const));

  const groupsOf = new Map<string, ServerGroup[]>();
  for (const group of snapshot.serverGroups) {
    for (const member of new Set(group.members)) {
      const list = groupsOf.get(member) ?? [];
      list.push(group);
      groupsOf.set(member, list);
    }
  }

  const serversOn = new Map<string, Server[]>();
  for (const server of snapshot.servers) {
    const list = serversOn.get(server.host) ?? [];
    list.push(server);
    serversOn.set(server.host, list);
  }

  const planned = new Set(plan.aggregates.map((a) => a.name).filter((n) => n !== UNASSIGNED));
  const membership = new Map<string, readonly string[]>();
  for (const host of snapshot.hosts) {
    const names = host.aggregates.filter((a) => planned.has(a));
    membership.set(host.name, names.length > 0 ? [...new Set(names)] : [UNASSIGNED]);
  }
  const aggregatesOf = (host: Host): readonly string[] => membership.get(host.name) ?? [UNASSIGNED];

  return {
    snapshot,
    hosts,
    servers,
    groupsOf,
    serversOn,
    aggregatesOf,
    inAggregate: (host, aggregate) => aggregatesOf(host).includes(aggregate),
    hostsIn: (aggregate) => snapshot.hosts.filter((h) => aggregatesOf(h).includes(aggregate)),
  };
}
