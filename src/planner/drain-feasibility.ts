// Can the rest of an aggregate take these hosts' servers? Asked before a host is disabled for
// maintenance: the hosts are treated as disabled, and their servers are placed one by one on the
// aggregate's other usable hosts the way the evacuation phase would place them (capacity, hard
// server groups, availability zone, every other planner constraint). Pure, like the planner.
//
// A yes is constructive: the placements returned are a legal drain. A no names every server that
// found no host or cannot move, with the constraints that ruled the hosts out. The placement is
// greedy (largest servers first, each where balance suffers least), so a no is what the planner
// would do, not a proof that no placement exists.
import { InputError, type InputIssue } from '../errors.js';
import type { Snapshot } from '../model/snapshot.js';
import { aggregateScope, scopedSnapshot } from '../policy/aggregate-scope.js';
import type { Policy } from '../policy/types.js';
import { PlanContext } from './context.js';
import { evacuate } from './phases/evacuate.js';
import { ClusterState } from './state.js';

export interface DrainPlacement {
  server: string;
  from: string;
  to: string;
}

export interface DrainFeasibility {
  /** True when every server of the hosts has a place on the rest of the aggregate. */
  ok: boolean;
  /** Where each movable server would go, in the order they would be placed. */
  placements: DrainPlacement[];
  /** Why not, one line per server that cannot move or found no host; empty when ok. */
  reasons: string[];
}

export function drainFeasibility(
  snapshot: Snapshot,
  policy: Policy,
  aggregate: string,
  hosts: readonly string[],
): DrainFeasibility {
  const issues: InputIssue[] = [];
  const scope = aggregateScope(snapshot, { aggregates: [aggregate] });
  issues.push(...scope.issues.map((i) => ({ ...i, path: 'aggregate', value: aggregate })));
  if (hosts.length === 0) issues.push({ path: 'hosts', message: 'expected at least one host' });
  hosts.forEach((name, i) => {
    if (!snapshot.hosts.some((h) => h.name === name))
      issues.push({ path: `hosts[${i}]`, message: 'no such host in the snapshot', value: name });
    else if (scope.issues.length === 0 && scope.aggregateOf.get(name) !== aggregate)
      issues.push({ path: `hosts[${i}]`, message: `not in aggregate ${aggregate}`, value: name });
  });
  if (issues.length > 0) throw new InputError(issues);

  const leaving = new Set(hosts);
  const scoped = scopedSnapshot(snapshot, scope);
  const trial: Snapshot = {
    ...scoped,
    hosts: scoped.hosts.map((h) =>
      leaving.has(h.name) && h.service.status === 'enabled'
        ? { ...h, service: { ...h.service, status: 'disabled', disabledReason: 'to be drained' } }
        : h,
    ),
  };
  const trialPolicy: Policy = {
    ...policy,
    mode: 'repair-only',
    aggregates: [aggregate],
    budget: { maxMoves: trial.servers.length },
  };
  const state = new ClusterState(trial, trialPolicy);
  const ctx = new PlanContext(state, trialPolicy);
  const reasons: string[] = [];
  for (const name of hosts) {
    const h = state.hosts[state.hostByName.get(name)!]!;
    // A host that is down keeps its servers: they need a cold evacuation, not a live drain.
    const n = state.on[h.index]!.size;
    if (!h.up && n > 0)
      reasons.push(`${name} is down: its ${n} server${n === 1 ? '' : 's'} cannot be live-migrated`);
  }
  evacuate(ctx, (host) => leaving.has(state.hosts[host]!.name));
  reasons.push(...ctx.unresolved.flat());
  const placements = ctx.moves.flat().map((m) => ({
    server: state.servers[m.server]!.id,
    from: state.hosts[m.from]!.name,
    to: state.hosts[m.to]!.name,
  }));
  return { ok: reasons.length === 0, placements, reasons };
}
