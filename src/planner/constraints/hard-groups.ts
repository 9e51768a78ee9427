import type { ClusterState, GroupRec } from '../state.js';
import type { DestinationConstraint } from './types.js';

// formats.md guarantee 3: no move may increase the violations of a hard server group.
export const hardGroups: DestinationConstraint = {
  name: 'server-group',
  check(state, server, to) {
    const g = state.servers[server]!.group;
    if (g < 0) return null;
    const group = state.groups[g]!;
    if (group.policy !== 'anti-affinity' && group.policy !== 'affinity') return null;
    const delta = groupViolationDelta(state, group, state.at[server]!, to);
    if (delta <= 0) return null;
    return {
      constraint: this.name,
      detail:
        group.policy === 'anti-affinity'
          ? `${state.hosts[to]!.name} already has ${group.count.get(to) ?? 0} of group ${group.name} (max ${group.maxPerHost})`
          : `group ${group.name} (affinity) would be split further`,
    };
  },
};

/** Violations of a group in the current state (hard or soft policy, same counting). */
export function groupViolations(group: GroupRec): number {
  if (group.policy === 'anti-affinity' || group.policy === 'soft-anti-affinity') {
    const limit = group.policy === 'anti-affinity' ? group.maxPerHost : 1;
    let v = 0;
    for (const c of group.count.values()) v += Math.max(0, c - limit);
    return v;
  }
  let max = 0;
  for (const c of group.count.values()) max = Math.max(max, c);
  return group.members.length - max;
}

/** Change in violations if one member moved from `from` to `to`: O(hosts the group spans). */
export function groupViolationDelta(_state: ClusterState, group: GroupRec, from: number, to: number): number {
  const cf = group.count.get(from) ?? 0;
  const ct = group.count.get(to) ?? 0;
  if (group.policy === 'anti-affinity' || group.policy === 'soft-anti-affinity') {
    const m = group.policy === 'anti-affinity' ? group.maxPerHost : 1;
    const before = Math.max(0, cf - m) + Math.max(0, ct - m);
    const after = Math.max(0, cf - 1 - m) + Math.max(0, ct + 1 - m);
    return after - before;
  }
  let maxBefore = 0;
  let maxAfter = 0;
  for (const [h, c] of group.count) {
    maxBefore = Math.max(maxBefore, c);
    const nc = h === from ? c - 1 : h === to ? c + 1 : c;
    maxAfter = Math.max(maxAfter, nc);
  }
  if (!group.count.has(to)) maxAfter = Math.max(maxAfter, 1);
  return maxBefore - maxAfter;
}
