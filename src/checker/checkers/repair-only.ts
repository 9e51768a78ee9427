// Mode repair-only (a plan with repairOnly: true): a move is allowed only for a server that
// breaks a rule in the snapshot, that is one on a disabled host or a member of a hard server
// group that has violations there. A plan that moves anything else is balancing under another
// name, and so is a move it marks softGroup: soft rules are weighed, never repaired.
import type { ServerGroup } from '../../model/snapshot.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';
import { groupViolations } from './server-groups.js';

export function repairOnlyChecker(): PlanChecker {
  const broken = new Map<ServerGroup, boolean>();
  return {
    constraint: 'repair-only',
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      if (ctx.plan.repairOnly !== true) return;
      if (m.move.softGroup === true) {
        ctx.report({
          code: 'repair-only-needless-move',
          aggregate: m.aggregate,
          step: m.move.step,
          wave: m.move.wave,
          server: m.server.id,
          host: m.from.name,
          detail: `repair-only plan moves ${m.server.name} (${m.server.id}) for a soft server group (softGroup: true), a rule it does not repair`,
        });
        return;
      }
      // Judged on the snapshot, not the replay: what the server broke when the plan was made.
      const origin = ctx.world.hosts.get(m.server.host);
      if (origin?.service.status === 'disabled') return;
      const locate = (id: string) => ctx.world.servers.get(id)?.host;
      for (const group of ctx.world.groupsOf.get(m.server.id) ?? []) {
        if (group.policy !== 'affinity' && group.policy !== 'anti-affinity') continue;
        if (!broken.has(group)) broken.set(group, groupViolations(group, locate) > 0);
        if (broken.get(group)) return;
      }
      ctx.report({
        code: 'repair-only-needless-move',
        aggregate: m.aggregate,
        step: m.move.step,
        wave: m.move.wave,
        server: m.server.id,
        host: m.from.name,
        detail: `repair-only plan moves ${m.server.name} (${m.server.id}), which is on an enabled host (${m.server.host}) and in no hard server group with violations`,
      });
    },
  };
}
