// Where an evacuated server can go: hosts sharing an aggregate with the source (the source's
// availability zone when it is in none), enabled, up, not held by another task, with room in
// Placement for what the server holds, and not breaking its server group (anti-affinity: no
// other member there; affinity: it cannot leave alone). The host with the most free memory
// after the claims made so far wins, as Nova's RAM weigher would pick, except that a "last
// resort" host (one a rolling-maintenance campaign still has to drain) is taken only when no
// other host fits: a server sent there would have to move again when its turn comes.
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
    let best: { host: string; lastResort: boolean; free: number } | null = null;
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
      const mem = c.room.inventories.MEMORY_MB;
      const free = mem
        ? (mem.total - mem.reserved) * mem.allocationRatio -
          (c.room.usages.MEMORY_MB ?? 0) -
          (this.claims.get(c.host)?.MEMORY_MB ?? 0)
        : 0;
      const lastResort = this.lastResort.has(c.host);
      if (
        best === null ||
        (best.lastResort && !lastResort) ||
        (best.lastResort === lastResort && free > best.free)
      )
        best = { host: c.host, lastResort, free };
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
