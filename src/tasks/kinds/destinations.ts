// Where an evacuated server can go: hosts sharing an aggregate with the source (the source's
// availability zone when it is in none), enabled, up, not held by another task, with room in
// Placement for what the server holds, and not breaking its server group (anti-affinity: no
// other member there; affinity: it cannot leave alone). The host left with the most room on the
// server's tightest resource (VCPU or memory, as a share of the host's capacity, after the claims
// made so far) wins, then the most free memory: the memory-only choice filled a host's VCPUs with
// small servers and left a large one nowhere to go. A "last resort" host (one a rolling-
// maintenance campaign still has to drain) is taken only when no other host fits: a server sent
// there would have to move again when its turn comes.
import type { NovaServerGroup } from '../../cloud/openstack/nova.js';
import type { HostRoomView } from '../../executor/ports.js';
import { roomProblem } from '../../executor/preflight.js';

export interface Candidate {
  host: string;
  room: HostRoomView;
}

export class DestinationChooser {
  /** What this evacuation already sent to each host, by resource class. */
  private readonly claims = new Map<string, Record<string, number>>();
  /** Where each server of a group is (or is going). */
  private readonly placeOf = new Map<string, string>();

  constructor(
    private readonly candidates: readonly Candidate[],
    private readonly groups: readonly NovaServerGroup[],
    serverHosts: ReadonlyMap<string, string>,
    private readonly lastResort: ReadonlySet<string> = new Set(),
  ) {
    for (const [id, host] of serverHosts) this.placeOf.set(id, host);
  }

  /** The best destination for the server, or why there is none. Claims the room it picks. */
  choose(
    serverId: string,
    need: Record<string, number>,
    only: string | null,
  ): { host: string } | { why: string } {
    const group = this.groups.find((g) => g.members.includes(serverId));
    if (group?.policy === 'affinity' && group.members.some((m) => m !== serverId))
      return { why: `member of affinity group ${group.name}: it cannot leave its group's host alone` };
    const reasons: string[] = [];
    let best: { host: string; lastResort: boolean; left: number; free: number } | null = null;
    for (const c of this.candidates) {
      if (only !== null && c.host !== only) continue;
      const problem = roomProblem(c.host, c.room, need, this.claims.get(c.host) ?? {});
      if (problem !== null) {
        reasons.push(problem);
        continue;
      }
      if (group?.policy === 'anti-affinity') {
        const max = typeof group.rules.max_server_per_host === 'number' ? group.rules.max_server_per_host : 1;
        const there = group.members.filter((m) => m !== serverId && this.placeOf.get(m) === c.host).length;
        if (there >= max) {
          reasons.push(`${c.host} already has ${there} member(s) of anti-affinity group ${group.name}`);
          continue;
        }
      }
      const claims = this.claims.get(c.host) ?? {};
      const freeOf = (rc: string): number | null => {
        const inv = c.room.inventories[rc];
        if (!inv) return null;
        return (
          (inv.total - inv.reserved) * inv.allocationRatio - (c.room.usages[rc] ?? 0) - (claims[rc] ?? 0)
        );
      };
      let left = Number.POSITIVE_INFINITY;
      for (const rc of ['VCPU', 'MEMORY_MB']) {
        const inv = c.room.inventories[rc];
        const free = freeOf(rc);
        if (!inv || free === null) continue;
        const capacity = (inv.total - inv.reserved) * inv.allocationRatio;
        if (capacity > 0) left = Math.min(left, (free - (need[rc] ?? 0)) / capacity);
      }
      const free = freeOf('MEMORY_MB') ?? 0;
      const lastResort = this.lastResort.has(c.host);
      const better =
        best === null ||
        (best.lastResort && !lastResort) ||
        (best.lastResort === lastResort &&
          (left > best.left + 1e-9 || (Math.abs(left - best.left) <= 1e-9 && free > best.free)));
      if (better) best = { host: c.host, lastResort, left, free };
    }
    if (best === null) {
      if (only !== null && !this.candidates.some((c) => c.host === only))
        return { why: `target ${only} is not an enabled, up host of the source's aggregates` };
      return { why: reasons.length > 0 ? `no destination: ${reasons.join('; ')}` : 'no destination host' };
    }
    const claim = { ...(this.claims.get(best.host) ?? {}) };
    for (const [rc, n] of Object.entries(need)) claim[rc] = (claim[rc] ?? 0) + n;
    this.claims.set(best.host, claim);
    this.placeOf.set(serverId, best.host);
    return { host: best.host };
  }

  /** Gives back the claim of a server that did not go. */
  unclaim(serverId: string, host: string, need: Record<string, number>, stayedOn: string): void {
    const claim = this.claims.get(host);
    if (claim) for (const [rc, n] of Object.entries(need)) claim[rc] = (claim[rc] ?? 0) - n;
    this.placeOf.set(serverId, stayedOn);
  }
}
