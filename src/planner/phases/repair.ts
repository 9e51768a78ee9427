// Phase 2: hard server-group violations. Anti-affinity: members beyond max_server_per_host
// leave their host one at a time. Affinity: the whole group gathers on one host, planned as a
// unit (all its moves or none), minority members first so no step adds a violation.

import { groupViolations } from '../constraints/hard-groups.js';
import { firstRejection } from '../constraints/index.js';
import type { PlanContext } from '../context.js';
import { serverLabel, summarizeRejections } from '../describe.js';
import type { GroupRec } from '../state.js';
import { searchDestination, tightness } from './destination-search.js';

export function repair(ctx: PlanContext): void {
  for (const group of ctx.state.groups) {
    if (group.members.length === 0 || groupViolations(group) === 0) continue;
    if (group.policy === 'anti-affinity') repairAntiAffinity(ctx, group);
    else if (group.policy === 'affinity') repairAffinity(ctx, group);
  }
}

export function repairAntiAffinity(ctx: PlanContext, group: GroupRec): void {
  const { state } = ctx;
  const crowded = [...group.count.entries()]
    .filter(([, c]) => c > group.maxPerHost)
    .sort((a, b) => a[0] - b[0]);
  for (const [host, count] of crowded) {
    const agg = state.hosts[host]!.aggregate;
    let extra = count - group.maxPerHost;
    const candidates = group.members
      .filter((m) => state.at[m] === host && ctx.movable(m))
      .sort((a, b) => state.servers[a]!.estSeconds - state.servers[b]!.estSeconds || a - b);
    const label = `server group ${group.name} (anti-affinity, max ${group.maxPerHost} per host)`;
    for (const m of candidates) {
      if (extra === 0) break;
      if (ctx.budgetLeft <= 0) break;
      const { best, rejections } = searchDestination(
        ctx,
        m,
        'balance',
        (to) => (group.count.get(to) ?? 0) < group.maxPerHost,
      );
      if (best === null) {
        ctx.note(
          agg,
          `${label}: no host can take ${serverLabel(state, m)} (${summarizeRejections(rejections)})`,
        );
        continue;
      }
      ctx.record(m, best.to, 'affinity', `${label} has ${count} members on ${state.hosts[host]!.name}`);
      extra--;
    }
    if (extra > 0) {
      ctx.note(
        agg,
        `${label}: ${extra} member(s) too many remain on ${state.hosts[host]!.name}${ctx.budgetLeft <= 0 ? ' (move budget spent)' : ''}`,
      );
    }
  }
}

export function repairAffinity(ctx: PlanContext, group: GroupRec): void {
  const { state } = ctx;
  const hostsOfGroup = [...group.count.keys()];
  const aggs = new Set(hostsOfGroup.map((h) => state.hosts[h]!.aggregate));
  const firstAgg = state.hosts[hostsOfGroup[0]!]!.aggregate;
  const label = `server group ${group.name} (affinity) is split over ${hostsOfGroup.length} hosts`;
  if (aggs.size > 1) {
    ctx.note(firstAgg, `${label} in different aggregates: Aicerine never moves servers across aggregates`);
    return;
  }
  // An immovable member pins the group to its host; otherwise any host that can hold them all.
  const pinned = new Set(group.members.filter((m) => !ctx.movable(m)).map((m) => state.at[m]!));
  if (pinned.size > 1) {
    ctx.note(firstAgg, `${label}, with members that cannot move on several of them`);
    return;
  }
  const targets = pinned.size === 1 ? [...pinned] : rankTargets(ctx, group);
  for (const target of targets) {
    const unit = group.members
      .filter((m) => state.at[m] !== target)
      .sort((a, b) => (group.count.get(state.at[a]!) ?? 0) - (group.count.get(state.at[b]!) ?? 0) || a - b);
    if (unit.length > ctx.budgetLeft) continue;
    let done = 0;
    for (const m of unit) {
      if (!ctx.movable(m) || firstRejection(state, m, target) !== null) break;
      ctx.record(m, target, 'affinity', `${label}: gathering it on ${state.hosts[target]!.name}`);
      done++;
    }
    if (done === unit.length) return;
    ctx.unrecord(firstAgg, done);
  }
  const reasons = new Map<string, number>();
  for (const m of group.members) {
    if (!ctx.movable(m)) continue;
    const { best, rejections } = searchDestination(ctx, m, 'balance');
    if (best === null) for (const [k, v] of rejections) reasons.set(k, (reasons.get(k) ?? 0) + v);
  }
  ctx.note(
    firstAgg,
    `${label}: no host can hold all ${group.members.length} members${ctx.budgetLeft < group.members.length ? ' within the move budget' : ''}${reasons.size ? ` (${summarizeRejections(reasons)})` : ''}`,
  );
}

/** The group's biggest host first (fewest moves), then the others by fit. */
function rankTargets(ctx: PlanContext, group: GroupRec): number[] {
  const { state } = ctx;
  const agg = state.hosts[state.at[group.members[0]!]!]!.aggregate;
  const probe = group.members[0]!;
  return state.aggregates[agg]!.hosts.filter((h) => state.hosts[h]!.usable)
    .map((h) => ({ h, members: group.count.get(h) ?? 0, fit: tightness(ctx, probe, h) }))
    .sort((a, b) => b.members - a.members || a.fit - b.fit || a.h - b.h)
    .map((t) => t.h);
}
