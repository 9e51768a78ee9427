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
  private readonly groupsOf = new Map<string, ServerGroup[]>();
  private serverById: Map<string, Server> | undefined;
  private serverIndex: Map<string, number> | undefined;
  private readonly aggregatesOfHost = new Map<string, readonly string[]>();

  constructor(readonly snapshot: Snapshot) {
    for (const h of snapshot.hosts) {
      const names = h.aggregates.length === 0 ? [UNASSIGNED] : [...new Set(h.aggregates)];
      this.aggregatesOfHost.set(h.name, names);
      for (const a of names) push(this.hostsOf, a, h);
    }
    for (const s of snapshot.servers)
      for (const a of this.aggregatesOfHost.get(s.host) ?? []) push(this.serversIn, a, s);
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
    const own = this.serversIn.get(aggregate) ?? [];
    const groups = new Set<ServerGroup>();
    for (const s of own) {
      const gs = this.groupsOf.get(s.id);
      if (gs !== undefined) for (const g of gs) groups.add(g);
    }
    // Members of those groups on hosts of other aggregates (rare: most groups live in one).
    const inHere = (s: Server) => this.aggregatesOfHost.get(s.host)?.includes(aggregate) === true;
    const extra = new Map<string, Server>();
    const extraHosts = new Set<string>();
    if (groups.size > 0) {
      this.serverById ??= new Map(this.snapshot.servers.map((s) => [s.id, s]));
      for (const g of groups)
        for (const m of g.members) {
          const s = this.serverById.get(m);
          if (s === undefined || extra.has(m) || inHere(s)) continue;
          extra.set(m, s);
          extraHosts.add(s.host);
        }
    }
    let servers: Server[];
    if (extra.size === 0) servers = [...own];
    else {
      // Snapshot order, so whatever iterates them sees the order the whole snapshot has.
      this.serverIndex ??= new Map(this.snapshot.servers.map((s, i) => [s.id, i]));
      const index = this.serverIndex;
      const others = [...extra.values()].sort((a, b) => index.get(a.id)! - index.get(b.id)!);
      servers = [];
      let i = 0;
      for (const s of others) {
        const at = index.get(s.id)!;
        while (i < own.length && index.get(own[i]!.id)! < at) servers.push(own[i++]!);
        servers.push(s);
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
