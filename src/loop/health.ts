// The data-health gate: a cycle acts only on data it can trust. Stale, partial or contradictory
// reads block action for the aggregate (the plan may still be stored for reading), and the
// reasons are kept so an operator sees why nothing moved. Pure: everything comes in as input.
import type { Host, Server, Snapshot } from '../model/snapshot.js';
import { own } from '../util/maps.js';

export interface HealthThresholds {
  /** A snapshot older than this (seconds, against the cycle's clock) is stale. */
  maxSnapshotAgeSeconds: number;
  /** Fraction of the aggregate's hosts (or servers) allowed without a fresh measured load. */
  maxMissingLoadFraction: number;
  /** Placement usage may differ from the sum of the flavors on a host by this fraction before it counts as contradictory. */
  usageTolerance: number;
  /** Measured host cpu load (busy cores) above this multiple of its physical cores is not believable. */
  maxCpuLoadFactor: number;
  /**
   * After an execution, how long the gate waits for metrics newer than its migrations' ends
   * (dataHealth.maxMetricAge): past that, samples older than the end are stale anyway.
   */
  settleMaxSeconds: number;
}

export const DEFAULT_HEALTH_THRESHOLDS: HealthThresholds = {
  maxSnapshotAgeSeconds: 300,
  maxMissingLoadFraction: 0.1,
  usageTolerance: 0.05,
  maxCpuLoadFactor: 1.5,
  settleMaxSeconds: 300,
};

/** What the recorder says it could not see, per host or server: the loop passes them through. */
export interface ReadProblems {
  /** Hosts that were left out of the snapshot (no resource provider, read failed...). */
  hostsLeftOut: string[];
  /**
   * The Nova aggregates of each left-out host, when the reader knows them; a host missing here
   * counts against every aggregate (its membership is as unknown as its data).
   */
  leftOutAggregates?: Record<string, string[]>;
  /** Hosts / server ids with no (fresh) measured load, from the metrics health. */
  hostsWithoutLoad: string[];
  serversWithoutLoad: string[];
  /**
   * When each host's measured load was sampled (ISO; the oldest of its host rules' newest
   * samples); absent when no host metric is read.
   */
  hostSampledAt?: Record<string, string>;
  /**
   * What servers still building without a host claim in Placement, over the whole cloud: a host's
   * usage may exceed its servers' flavors by up to this while they are being scheduled.
   */
  building?: { servers: number; vcpus: number; ramMB: number };
  /** Other warnings that apply to the whole read (a failed list call): any one blocks. */
  partialReads: string[];
}

export interface HealthInput {
  aggregate: string;
  snapshot: Snapshot;
  problems: ReadProblems;
  /**
   * What Aicerine itself is migrating now: those servers' task states and the double claims on
   * their hosts are expected, not contradictions.
   */
  ownInFlight: { servers: ReadonlySet<string>; hosts: ReadonlySet<string> };
  now: Date;
  /**
   * The aggregate's last execution: when its migrations ended, per host on either end. Until a
   * host's load is sampled after that, the metrics still describe the placement before it.
   */
  settling?: { execution: string; endedAt: string; hosts: Record<string, string> };
}

export type HealthVerdictKind = 'ok' | 'blocked';

export interface HealthVerdict {
  aggregate: string;
  verdict: HealthVerdictKind;
  /** One line per problem, for an operator; empty when ok. */
  reasons: string[];
  at: string;
}

const inAggregate = (h: Host, aggregate: string): boolean =>
  aggregate === '_unassigned_' ? h.aggregates.length === 0 : h.aggregates.includes(aggregate);

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

export function assessHealth(
  input: HealthInput,
  t: HealthThresholds = DEFAULT_HEALTH_THRESHOLDS,
): HealthVerdict {
  const { aggregate, snapshot, problems, now } = input;
  const reasons: string[] = [];
  const hosts = snapshot.hosts.filter((h) => inAggregate(h, aggregate));
  const hostNames = new Set(hosts.map((h) => h.name));

  const age = (now.getTime() - Date.parse(snapshot.takenAt)) / 1000;
  if (!Number.isFinite(age)) reasons.push(`snapshot time "${snapshot.takenAt}" is not a date`);
  else if (age > t.maxSnapshotAgeSeconds)
    reasons.push(`stale: snapshot taken ${Math.round(age)} s ago (limit ${t.maxSnapshotAgeSeconds} s)`);
  else if (age < -60) reasons.push(`snapshot dated ${Math.round(-age)} s in the future: clocks disagree`);

  if (hosts.length === 0) reasons.push('partial: no host of this aggregate was recorded');
  for (const h of problems.hostsLeftOut) {
    const member = problems.leftOutAggregates === undefined ? undefined : own(problems.leftOutAggregates, h);
    const ours =
      member === undefined ||
      (aggregate === '_unassigned_' ? member.length === 0 : member.includes(aggregate));
    if (ours) reasons.push(`partial: host ${h} was left out of the snapshot`);
  }
  for (const w of problems.partialReads) reasons.push(`partial: ${w}`);

  // One pass over the slice's servers for everything the gate takes from them (it runs every
  // cycle for every aggregate, changes or not): which are here, their flavors per host, and
  // which are migrating.
  const servers: Server[] = [];
  const flavorSums = new Map<string, { vcpu: number; ram: number }>();
  for (const h of hostNames) flavorSums.set(h, { vcpu: 0, ram: 0 });
  const migrating: Server[] = [];
  for (const s of snapshot.servers) {
    const sum = flavorSums.get(s.host);
    if (sum === undefined) continue;
    servers.push(s);
    sum.vcpu += s.flavor.vcpus;
    sum.ram += s.flavor.ramMB;
    if (s.taskState?.startsWith('migrat') === true) migrating.push(s);
  }
  const missingHosts = problems.hostsWithoutLoad.filter((h) => hostNames.has(h));
  if (hosts.length > 0 && missingHosts.length / hosts.length > t.maxMissingLoadFraction) {
    reasons.push(
      `stale or missing metrics: ${missingHosts.length} of ${hosts.length} hosts (${pct(missingHosts.length / hosts.length)}, limit ${pct(t.maxMissingLoadFraction)}) have no fresh load, e.g. ${missingHosts.slice(0, 3).join(', ')}`,
    );
  }
  // Usually none is missing: the aggregate's servers are indexed only when some are.
  const serverIds = problems.serversWithoutLoad.length === 0 ? null : new Set(servers.map((s) => s.id));
  const missingServers = problems.serversWithoutLoad.filter((id) => serverIds?.has(id) === true);
  if (servers.length > 0 && missingServers.length / servers.length > t.maxMissingLoadFraction) {
    reasons.push(
      `stale or missing metrics: ${missingServers.length} of ${servers.length} servers (${pct(missingServers.length / servers.length)}, limit ${pct(t.maxMissingLoadFraction)}) have no fresh load`,
    );
  }

  if (input.settling && problems.hostSampledAt) {
    const waited = (now.getTime() - Date.parse(input.settling.endedAt)) / 1000;
    if (waited <= t.settleMaxSeconds) {
      const lagging: string[] = [];
      for (const [host, end] of Object.entries(input.settling.hosts)) {
        const sampled = problems.hostSampledAt[host];
        if (!hostNames.has(host) || sampled === undefined) continue;
        if (Date.parse(sampled) <= Date.parse(end))
          lagging.push(`${host} (sampled ${sampled}, moved ${end})`);
      }
      if (lagging.length > 0)
        reasons.push(
          `settling: metrics predate execution ${input.settling.execution}'s migrations on ${lagging.length} host(s), e.g. ${lagging.slice(0, 2).join(', ')}; waiting up to ${t.settleMaxSeconds} s after its end for samples of the new placement`,
        );
    }
  }

  for (const h of hosts) {
    if (input.ownInFlight.hosts.has(h.name)) continue;
    const sum = flavorSums.get(h.name) ?? { vcpu: 0, ram: 0 };
    const building = problems.building;
    const checks: [string, number | undefined, number, number][] = [
      ['VCPU', h.usage.VCPU, sum.vcpu, building?.vcpus ?? 0],
      ['MEMORY_MB', h.usage.MEMORY_MB, sum.ram, building?.ramMB ?? 0],
    ];
    for (const [rc, used, flavors, claimed] of checks) {
      if (used === undefined) continue;
      // Placement also counts servers Nova lists elsewhere (building, or a migration's second
      // claim), so only a gap in either direction beyond the tolerance is a contradiction. A
      // server the scheduler has placed but Nova not yet (no host) claims on some host: usage
      // above the flavors by at most what the servers building claim is not one either.
      const scale = Math.max(used, flavors, 1);
      const excess = used - flavors;
      if (excess > 0 && excess <= claimed) continue;
      if (Math.abs(excess) / scale > t.usageTolerance) {
        reasons.push(
          `contradictory: host ${h.name} Placement ${rc} usage ${used}, its servers' flavors sum to ${flavors}`,
        );
      }
    }
    const cores = h.inventory.VCPU ? h.inventory.VCPU.total - h.inventory.VCPU.reserved : undefined;
    const cpu = h.load?.cpu;
    if (cpu !== undefined && cores !== undefined && cores > 0 && cpu > cores * t.maxCpuLoadFactor) {
      reasons.push(`contradictory: host ${h.name} measured cpu load ${cpu} on ${cores} physical cores`);
    }
  }

  const foreign = migrating.filter((s) => !input.ownInFlight.servers.has(s.id));
  if (foreign.length > 0) {
    reasons.push(
      `busy: ${foreign.length} server(s) migrating not by Aicerine (e.g. ${foreign
        .slice(0, 3)
        .map((s) => s.name || s.id)
        .join(', ')}): capacity is moving under the plan`,
    );
  }

  return { aggregate, verdict: reasons.length === 0 ? 'ok' : 'blocked', reasons, at: now.toISOString() };
}
