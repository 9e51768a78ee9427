// Each aggregate's part of a cycle's snapshot, cut once per cycle. A cloud of 5,000 hosts read
// in one snapshot holds 100,000 servers; an aggregate's gate, holds, measured balance, plan and
// check only ever look at its own hosts, the servers on them and the server groups those servers
// are in. Indexing the snapshot once and handing each aggregate its slice makes a cycle's cost
// follow the aggregate, not the cloud (each step used to scan or index the whole snapshot).
import type { Host, Server, ServerGroup, Snapshot } from '../model/snapshot.js';

export const UNASSIGNED = '_unassigned_';

export class AggregateSlices {
  private readonly hostsOf = new Map<string, Host[]>();
  /** Per aggregate, the servers on its hosts, in snapshot order (one pass, no sort). */
  private readonly serversIn = new Map<string, Server[]>();
  /** ... and their places in the snapshot, to merge in group members from elsewhere. */
  private readonly indexIn = new Map<string, number[]>();
  private readonly groupsOf = new Map<string, ServerGroup[]>();
  /** Servers in a group, with their places in the snapshot (only those: groups are few). */
  private readonly members = new Map<string, { server: Server; index: number }>();
  private readonly aggregatesOfHost = new Map<string, readonly string[]>();
  /**
   * Per aggregate, the server groups any of its servers is in, found in the constructor's pass:
   * looking each of an aggregate's 10,000 servers up again when cutting its slice cost a pass
   * per aggregate every cycle for groups that are few.
   */
  private readonly groupsIn = new Map<string, Set<ServerGroup>>();

  constructor(readonly snapshot: Snapshot) {
    for (const h of snapshot.hosts) {
      const names = h.aggregates.length === 0 ? [UNASSIGNED] : [...new Set(h.aggregates)];
      this.aggregatesOfHost.set(h.name, names);
      for (const a of names) push(this.hostsOf, a, h);
    }
    for (const g of snapshot.serverGroups) for (const m of new Set(g.members)) push(this.groupsOf, m, g);
    for (const [i, s] of snapshot.servers.entries()) {
      const names = this.aggregatesOfHost.get(s.host) ?? [];
      for (const a of names) {
        push(this.serversIn, a, s);
        push(this.indexIn, a, i);
      }
      const gs = this.groupsOf.get(s.id);
      if (gs === undefined) continue;
      this.members.set(s.id, { server: s, index: i });
      for (const a of names) {
        const set = this.groupsIn.get(a) ?? new Set<ServerGroup>();
        this.groupsIn.set(a, set);
        for (const g of gs) set.add(g);
      }
    }
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
    const own = this.serversIn.get(aggregate) ?? [];
    const groups: ReadonlySet<ServerGroup> = this.groupsIn.get(aggregate) ?? new Set();
    // Members of those groups on hosts of other aggregates (rare: most groups live in one).
    const inHere = (s: Server) => this.aggregatesOfHost.get(s.host)?.includes(aggregate) === true;
    const extra = new Map<string, { server: Server; index: number }>();
    const extraHosts = new Set<string>();
    for (const g of groups)
      for (const m of g.members) {
        const e = this.members.get(m);
        if (e === undefined || extra.has(m) || inHere(e.server)) continue;
        extra.set(m, e);
        extraHosts.add(e.server.host);
      }
    let servers: Server[];
    if (extra.size === 0) servers = [...own];
    else {
      // Snapshot order, so whatever iterates them sees the order the whole snapshot has.
      const index = this.indexIn.get(aggregate) ?? [];
      const others = [...extra.values()].sort((a, b) => a.index - b.index);
      servers = [];
      let i = 0;
      for (const e of others) {
        while (i < own.length && index[i]! < e.index) servers.push(own[i++]!);
        servers.push(e.server);
      }
      while (i < own.length) servers.push(own[i++]!);
    }
    const hostNames = new Set(hosts.map((h) => h.name));
    const allHosts =
      extraHosts.size === 0
        ? [...hosts]
        : this.snapshot.hosts.filter((h) => hostNames.has(h.name) || extraHosts.has(h.name));
    const { migrationHistory: _history, ...rest } = this.snapshot;
    return {
      ...rest,
      hosts: allHosts,
      servers,
      serverGroups: this.snapshot.serverGroups.filter((g) => groups.has(g)),
    };
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
