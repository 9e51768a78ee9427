// The snapshot, indexed for the checker, and the aggregate membership rule of formats.md.
// Membership comes from the snapshot alone: a host is in the Nova aggregates its snapshot entry
// lists, or in `_unassigned_` when it lists none. Neither the plan's grouping nor a policy can
// widen it, so a move across aggregates is caught whatever aggregate it is listed under.
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
  /** Aggregate names the host is in according to the snapshot; [UNASSIGNED] when none. */
  aggregatesOf(host: Host): readonly string[];
  inAggregate(host: Host, aggregate: string): boolean;
  hostsIn(aggregate: string): readonly Host[];
}

export function buildWorld(snapshot: Snapshot): World {
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

  const membership = new Map<string, readonly string[]>();
  for (const host of snapshot.hosts) {
    membership.set(host.name, host.aggregates.length > 0 ? [...new Set(host.aggregates)] : [UNASSIGNED]);
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
