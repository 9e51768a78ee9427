// Each aggregate's part of a cycle's snapshot, cut once per cycle. A cloud of 5,000 hosts read
// in one snapshot holds 100,000 servers; an aggregate's gate, holds, measured balance, plan and
// check only ever look at its own hosts, the servers on them and the server groups those servers
// are in. Indexing the snapshot once and handing each aggregate its slice makes a cycle's cost
// follow the aggregate, not the cloud (each step used to scan or index the whole snapshot).
import type { Host, Server, ServerGroup, Snapshot } from '../model/snapshot.js';

export const UNASSIGNED = '_unassigned_';

export class AggregateSlices {
  private readonly hostsOf = new Map<string, Host[]>();
  private readonly serversOn = new Map<string, Server[]>();
  private readonly groupsOf = new Map<string, ServerGroup[]>();
  private readonly serverById = new Map<string, Server>();
  private readonly serverIndex = new Map<string, number>();
  private readonly hostByName = new Map<string, Host>();

  constructor(readonly snapshot: Snapshot) {
    for (const h of snapshot.hosts) {
      this.hostByName.set(h.name, h);
      const names = h.aggregates.length === 0 ? [UNASSIGNED] : new Set(h.aggregates);
      for (const a of names) push(this.hostsOf, a, h);
    }
    for (const [i, s] of snapshot.servers.entries()) {
      push(this.serversOn, s.host, s);
      this.serverById.set(s.id, s);
      this.serverIndex.set(s.id, i);
    }
    for (const g of snapshot.serverGroups) for (const m of new Set(g.members)) push(this.groupsOf, m, g);
  }

  /** The aggregate's hosts, in snapshot order. */
  hosts(aggregate: string): readonly Host[] {
    return this.hostsOf.get(aggregate) ?? [];
  }

  /**
   * The aggregate's slice: its hosts and their servers, the server groups any of those servers
   * is in, and (so that a group's rule is judged as on the whole snapshot) those groups' other
   * members with the hosts they are on. Hosts of other aggregates brought in that way are not
   * members of this one: planner and checker take membership from each host's own list.
   */
  slice(aggregate: string): Snapshot {
    const hosts = this.hosts(aggregate);
    const hostNames = new Set(hosts.map((h) => h.name));
    const servers: Server[] = [];
    const groups = new Set<ServerGroup>();
    for (const h of hosts)
      for (const s of this.serversOn.get(h.name) ?? []) {
        servers.push(s);
        for (const g of this.groupsOf.get(s.id) ?? []) groups.add(g);
      }
    const serverIds = new Set(servers.map((s) => s.id));
    const extraHosts = new Set<string>();
    for (const g of groups)
      for (const m of g.members) {
        const s = this.serverById.get(m);
        if (s === undefined || serverIds.has(m)) continue;
        serverIds.add(m);
        servers.push(s);
        if (!hostNames.has(s.host)) extraHosts.add(s.host);
      }
    // Snapshot order, so whatever iterates them sees the order the whole snapshot has.
    const index = this.serverIndex;
    const order = (xs: Server[]) => xs.sort((a, b) => index.get(a.id)! - index.get(b.id)!);
    const allHosts =
      extraHosts.size === 0
        ? [...hosts]
        : this.snapshot.hosts.filter((h) => hostNames.has(h.name) || extraHosts.has(h.name));
    const { migrationHistory: _history, ...rest } = this.snapshot;
    return {
      ...rest,
      hosts: allHosts,
      servers: order(servers),
      serverGroups: this.snapshot.serverGroups.filter((g) => groups.has(g)),
    };
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
