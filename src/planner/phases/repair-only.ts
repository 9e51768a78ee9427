// Mode repair-only: what the rules demand and nothing else. Disabled hosts are emptied and hard
// server groups repaired, each with the fewest moves; no spread, no pack, no soft-group moves,
// and a server that breaks no rule never moves, so a cluster that keeps every rule gets an
// empty plan.
//
// Order matters for the count. A split affinity group is gathered first, onto the usable host
// that already holds most of it, with its members on disabled hosts among those moved: if the
// evacuation went first it could send them anywhere their group allows, and as a server moves
// at most once per plan, the group would stay split. The evacuation then moves the other
// servers of disabled hosts (an anti-affinity member leaving a crowded disabled host counts
// against its crowding), and the anti-affinity repair moves only the members still too many.

import { groupViolations } from '../constraints/hard-groups.js';
import type { PlanContext } from '../context.js';
import { evacuate } from './evacuate.js';
import { repairAffinity, repairAntiAffinity } from './repair.js';

export function repairOnly(ctx: PlanContext): void {
  const broken = (policy: string) =>
    ctx.state.groups.filter((g) => g.policy === policy && g.members.length > 0 && groupViolations(g) > 0);
  for (const group of broken('affinity')) repairAffinity(ctx, group);
  evacuate(ctx);
  for (const group of broken('anti-affinity')) repairAntiAffinity(ctx, group);
}
