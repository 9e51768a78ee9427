// Which hosts a policy plans: the aggregate list selects whole aggregates, and a host outside the
// selection is neither a source nor a destination (formats.md). Hosts in no aggregate at all form
// `_unassigned_`; a host in some aggregate never falls back to it. Shared by the planner (which
// refuses a bad scope) and the CLI (which says so before any work, naming the policy file).
import type { InputIssue } from '../errors.js';
import type { Host, Snapshot } from '../model/snapshot.js';
import type { Policy } from './types.js';

export const UNASSIGNED_AGGREGATE = '_unassigned_';

export interface AggregateScope {
  /** Planned aggregate names, sorted; `_unassigned_` included when selected. */
  readonly planned: readonly string[];
  /** The planned aggregate of each host in scope (hosts out of scope are absent). */
  readonly aggregateOf: ReadonlyMap<string, string>;
  /** Why the policy cannot be planned on this snapshot; empty when it can. */
  readonly issues: readonly InputIssue[];
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Aggregate names the snapshot knows, `_unassigned_` among them when some host is in no aggregate. */
export function snapshotAggregates(snapshot: Snapshot): string[] {
  const names = new Set<string>();
  for (const h of snapshot.hosts) {
    if (h.aggregates.length === 0) names.add(UNASSIGNED_AGGREGATE);
    for (const a of h.aggregates) names.add(a);
  }
  return [...names].sort(cmp);
}

export function aggregateScope(
  snapshot: Snapshot,
  policy: Pick<Policy, 'aggregates'>,
  file?: string,
): AggregateScope {
  const known = snapshotAggregates(snapshot);
  const issues: InputIssue[] = [];
  let planned: string[];
  if (policy.aggregates.length === 0) planned = known;
  else {
    const knownSet = new Set(known);
    policy.aggregates.forEach((name, i) => {
      if (knownSet.has(name)) return;
      const list = known.length > 0 ? known.join(', ') : 'none';
      issues.push({
        file,
        path: `aggregates[${i}]`,
        message: `no host of the snapshot is in this aggregate (the snapshot's aggregates: ${list})`,
        value: name,
      });
    });
    planned = [...new Set(policy.aggregates)].filter((n) => knownSet.has(n)).sort(cmp);
  }

  const plannedSet = new Set(planned);
  const aggregateOf = new Map<string, string>();
  const overlaps = new Map<string, string[]>();
  for (const host of snapshot.hosts) {
    const names = plannedOf(host, plannedSet);
    if (names.length === 1) aggregateOf.set(host.name, names[0]!);
    else if (names.length > 1) {
      const key = names.join(' and ');
      overlaps.set(key, [...(overlaps.get(key) ?? []), host.name]);
    }
  }
  for (const [pair, hosts] of overlaps) {
    const shown =
      hosts.length > 3 ? `${hosts.slice(0, 3).join(', ')} and ${hosts.length - 3} more` : hosts.join(', ');
    issues.push({
      file,
      path: 'aggregates',
      message: `planned aggregates ${pair} share hosts (${shown}); a host may be in only one planned aggregate, so list the aggregates to plan`,
    });
  }
  return { planned, aggregateOf, issues };
}

function plannedOf(host: Host, planned: ReadonlySet<string>): string[] {
  if (host.aggregates.length === 0) return planned.has(UNASSIGNED_AGGREGATE) ? [UNASSIGNED_AGGREGATE] : [];
  return [...new Set(host.aggregates)].filter((a) => planned.has(a)).sort(cmp);
}

/** The part of the snapshot the policy plans: its hosts in scope and the servers on them. */
export function scopedSnapshot(snapshot: Snapshot, scope: AggregateScope): Snapshot {
  if (scope.aggregateOf.size === snapshot.hosts.length) return snapshot;
  const hosts = snapshot.hosts.filter((h) => scope.aggregateOf.has(h.name));
  const inScope = new Set(hosts.map((h) => h.name));
  return { ...snapshot, hosts, servers: snapshot.servers.filter((s) => inScope.has(s.host)) };
}
