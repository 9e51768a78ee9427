// Guarantee 3: no move, taken in step order, adds to the violations of a hard server group.
// A migrating server counts on its destination from its own step on, so two moves of one wave that
// together crowd a host are caught at the second step. Soft policies are weighed by the planner,
// never vetoes, so they are not checked here.
import type { ServerGroup } from '../../model/snapshot.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';

export type Locate = (serverId: string) => string | undefined;

function membersPerHost(group: ServerGroup, locate: Locate): Map<string, number> {
  const counts = new Map<string, number>();
  for (const member of new Set(group.members)) {
    const host = locate(member);
    if (host !== undefined) counts.set(host, (counts.get(host) ?? 0) + 1);
  }
  return counts;
}

function violationsAs(kind: 'affinity' | 'anti-affinity', group: ServerGroup, locate: Locate): number {
  const counts = [...membersPerHost(group, locate).values()];
  if (kind === 'anti-affinity') {
    const limit = group.rules?.max_server_per_host ?? 1;
    return counts.reduce((sum, c) => sum + Math.max(0, c - limit), 0);
  }
  const placed = counts.reduce((sum, c) => sum + c, 0);
  return placed - Math.max(0, ...counts);
}

/** formats.md: anti-affinity counts members beyond max_server_per_host on each host; affinity counts
 *  members away from the host holding most of them (the count is the same whichever tied host). */
export function groupViolations(group: ServerGroup, locate: Locate): number {
  if (group.policy === 'anti-affinity' || group.policy === 'affinity')
    return violationsAs(group.policy, group, locate);
  return 0;
}

/** The same counts for the soft policies, which are weighed (softGroupPenalty), never vetoed. */
export function softGroupViolations(group: ServerGroup, locate: Locate): number {
  if (group.policy === 'soft-anti-affinity') return violationsAs('anti-affinity', group, locate);
  if (group.policy === 'soft-affinity') return violationsAs('affinity', group, locate);
  return 0;
}

function describe(group: ServerGroup, locate: Locate): string {
  const counts = [...membersPerHost(group, locate).entries()].sort(([a], [b]) => a.localeCompare(b));
  return counts.map(([host, n]) => `${n} on ${host}`).join(', ');
}

export function serverGroupChecker(): PlanChecker {
  return {
    constraint: 'server-groups',
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      const now: Locate = (id) => ctx.state.locationOf(id);
      const next: Locate = (id) => (id === m.server.id ? m.to.name : ctx.state.locationOf(id));
      for (const group of ctx.world.groupsOf.get(m.server.id) ?? []) {
        if (group.policy !== 'affinity' && group.policy !== 'anti-affinity') continue;
        const before = groupViolations(group, now);
        const after = groupViolations(group, next);
        if (after <= before) continue;
        ctx.report({
          code: group.policy === 'affinity' ? 'affinity-worse' : 'anti-affinity-worse',
          aggregate: m.aggregate,
          step: m.move.step,
          wave: m.move.wave,
          server: m.server.id,
          host: m.to.name,
          detail: `${group.policy} group ${group.name}: violations ${before} -> ${after} (members: ${describe(group, next)})`,
        });
      }
    },
  };
}
