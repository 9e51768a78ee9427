// `load: forecast` as an objective the rest of the planner already knows how to search: each
// aggregate's K worst forecast slots become K copies of the policy's dimensions ("cpu@1" ..
// "memory@K", weights divided by K), whose load keys the snapshot's servers and hosts are given
// at those slots. The objective is then the mean of the K slots' imbalances, in the same units as
// before (imbalance x hosts for the worth threshold), and every phase, bound and the step-order
// replay of finalize.ts use it unchanged. Placement usage is untouched: every capacity check
// stays on what is allocated now.
//
// Mean rather than max of the slots' imbalances: the mean is a sum of per-dimension stddevs, so
// it keeps the incremental sums every search relies on; and every peak hour counts, so a move
// that cools the second-worst hour without warming the worst is worth making (the max would
// see no gain in it and the search would stall on its plateaus).

import { horizonSlots, isProfileKey, profileValue, worstSlots } from '../../forecast/forecast.js';
import type { AggregateForecast, ForecastPeak } from '../../model/plan.js';
import type { Host, LoadProfiles, Server, Snapshot } from '../../model/snapshot.js';
import type { DimensionDef, Policy } from '../../policy/types.js';
import { ClusterState } from '../state.js';

/** The objective's dimension for base dimension `name` at peak k (1-based). */
export const peakDimension = (name: string, k: number): string => `${name}@${k}`;

export interface ForecastObjective {
  /**
   * The snapshot with every server's and measured host's load at each peak (keys "<load>@k");
   * the snapshot and policy given, unchanged, when no aggregate plans on the forecast.
   */
  snapshot: Snapshot;
  /** The policy with the dimensions repeated per peak, weights divided by the peak count. */
  policy: Policy;
  peakCount: number;
  /** By aggregate name: what the plan says (imbalances filled in by the caller). */
  aggregates: Map<string, Omit<AggregateForecast, 'imbalanceBefore' | 'imbalanceAfter'>>;
}

function currentLoad(server: Server, dim: DimensionDef): number {
  const v = server.load?.[dim.load];
  if (v !== undefined) return v;
  switch (dim.missingServerLoad) {
    case 'zero':
      return 0;
    case 'flavor-vcpus':
      return server.flavor.vcpus;
    case 'flavor-ram':
      return server.flavor.ramMB;
    case 'flavor-disk':
      return server.flavor.diskGB;
  }
}

/** A server's load of a dimension at a slot: its profile's figure, or current load without one. */
function loadAt(
  profile: LoadProfiles['servers'][string] | undefined,
  server: Server,
  dim: DimensionDef,
  slot: number,
) {
  const v = isProfileKey(dim.load) ? profileValue(profile, dim.load, slot) : null;
  return v ?? currentLoad(server, dim);
}

function physical(host: Host, dim: DimensionDef): number {
  const inv = host.inventory[dim.capacity];
  return inv === undefined ? 0 : Math.max(0, inv.total - inv.reserved);
}

interface AggregateView {
  hosts: Host[];
  /** Hosts counted in the imbalance (up, enabled). */
  counted: Host[];
  servers: Map<string, Server[]>;
}

// Every mode plans on the forecast: whatever a plan picks by balance (spread's moves; the
// destinations of evacuations and hard-group repairs in spread and repair-only, and of repairs
// in pack) weighs the forecast peaks, and hot-first ordering reads hosts hot at a peak. Pack's
// drains pick hosts and destinations by Placement allocation (pack.maxFill, best fit), which no
// load figure enters, current or forecast (docs/planner.md).
function whyCurrent(name: string, view: AggregateView, snapshot: Snapshot, policy: Policy): string | null {
  const profiles = snapshot.profiles;
  if (profiles === undefined) return 'the snapshot has no load profiles';
  const error = profiles.errors?.[name];
  if (error !== undefined && error.meanAbsolute > policy.forecast.maxError)
    return `forecast error ${error.meanAbsolute.toFixed(3)} is above forecast.maxError ${policy.forecast.maxError}`;
  // Prediction must not make things worse: a forecast that missed by as much as current load
  // would have (profiles.errors[].currentLoadAbsolute) is no reason to move anything.
  if (error?.currentLoadAbsolute !== undefined && error.meanAbsolute >= error.currentLoadAbsolute)
    return `forecast error ${error.meanAbsolute.toFixed(3)} is no lower than current load's ${error.currentLoadAbsolute.toFixed(3)}`;
  const profiled = [...view.servers.values()].some((list) => list.some((s) => profiles.servers[s.id]));
  if (!profiled) return 'no server of the aggregate has a load profile';
  if (view.counted.length < 2) return 'fewer than two hosts to balance';
  return null;
}

/**
 * The forecast objective for a (scoped) snapshot, or null when the policy plans on current load.
 * Aggregates that cannot use the forecast keep current load at every peak (same imbalance as
 * without a forecast) and their entry says why.
 */
export function forecastObjective(snapshot: Snapshot, policy: Policy): ForecastObjective | null {
  if (policy.load !== 'forecast') return null;
  const K = policy.forecast.peakSlots;
  // The planner's own view says which aggregate each host is planned in.
  const base = new ClusterState(snapshot, policy);
  const hostByName = new Map(snapshot.hosts.map((h) => [h.name, h]));
  const serversOn = new Map<string, Server[]>();
  for (const s of snapshot.servers) {
    const list = serversOn.get(s.host);
    if (list === undefined) serversOn.set(s.host, [s]);
    else list.push(s);
  }
  const dims = policy.dimensions;
  const profiles = snapshot.profiles;
  const hostLoads = new Map<string, Record<string, number>>();
  const serverLoads = new Map<string, Record<string, number>>();
  const aggregates: ForecastObjective['aggregates'] = new Map();

  for (const agg of base.aggregates) {
    const hosts = agg.hosts.map((h) => hostByName.get(base.hosts[h]!.name)!);
    const counted = agg.counted.map((h) => hostByName.get(base.hosts[h]!.name)!);
    const view: AggregateView = {
      hosts,
      counted,
      servers: new Map(hosts.map((h) => [h.name, serversOn.get(h.name) ?? []])),
    };
    const serverCount = [...view.servers.values()].reduce((n, l) => n + l.length, 0);
    const error = profiles?.errors?.[agg.name]?.meanAbsolute;
    const fallback = whyCurrent(agg.name, view, snapshot, policy);
    const entry = {
      horizonHours: policy.forecast.horizonHours,
      peakSlots: K,
      maxError: policy.forecast.maxError,
      ...(error !== undefined ? { error } : {}),
    };
    if (fallback !== null || profiles === undefined) {
      aggregates.set(agg.name, {
        load: 'current',
        fallback: fallback ?? 'the snapshot has no load profiles',
        peaks: [],
        serversOnCurrentLoad: serverCount,
        ...entry,
      });
      for (const h of hosts) {
        if (h.load !== undefined)
          hostLoads.set(
            h.name,
            repeatPerPeak(dims, K, (d) => h.load?.[d.load]),
          );
        for (const s of view.servers.get(h.name)!)
          serverLoads.set(
            s.id,
            repeatPerPeak(dims, K, (d) => currentLoad(s, d)),
          );
      }
      continue;
    }

    // Per slot of the horizon: each counted host's forecast load per dimension, for the ranking.
    const horizon = horizonSlots(snapshot.takenAt, policy.forecast.horizonHours, profiles);
    const pressureAt = (slot: number): number => {
      let pressure = 0;
      for (const dim of dims) {
        let load = 0;
        let cap = 0;
        for (const h of counted) {
          load += hostLoadAt(h, view.servers.get(h.name)!, profiles, dim, slot);
          cap += physical(h, dim);
        }
        if (cap > 0) pressure += dim.weight * (load / cap);
      }
      return pressure;
    };
    const ranked = worstSlots(horizon, pressureAt, K);
    const peaks: ForecastPeak[] = ranked.map((r) => ({
      slot: r.slot,
      label: r.label,
      at: r.at,
      pressure: Math.round(r.pressure * 1e6) / 1e6,
    }));
    // A horizon with fewer distinct slots than K (a daylight-saving day) weighs its peaks again.
    const slotOfPeak = (k: number): number => peaks[k % peaks.length]!.slot;
    let onCurrent = 0;
    for (const h of hosts) {
      const on = view.servers.get(h.name)!;
      for (const s of on) {
        const profile = profiles.servers[s.id];
        const fellBack = peaks.some((p) =>
          dims.some((d) => isProfileKey(d.load) && profileValue(profile, d.load, p.slot) === null),
        );
        if (fellBack) onCurrent++;
        serverLoads.set(
          s.id,
          repeatPerPeak(dims, K, (d, k) => loadAt(profile, s, d, slotOfPeak(k))),
        );
      }
      if (h.load !== undefined)
        hostLoads.set(
          h.name,
          repeatPerPeak(dims, K, (d, k) => hostLoadAt(h, on, profiles, d, slotOfPeak(k))),
        );
    }
    aggregates.set(agg.name, { load: 'forecast', peaks, serversOnCurrentLoad: onCurrent, ...entry });
  }

  // Nothing to forecast: the plan is the one current load gives, with each aggregate saying why.
  if (![...aggregates.values()].some((a) => a.load === 'forecast'))
    return { snapshot, policy, peakCount: K, aggregates };
  const expanded: Snapshot = {
    ...snapshot,
    hosts: snapshot.hosts.map((h) => {
      const extra = hostLoads.get(h.name);
      return extra === undefined ? h : { ...h, load: { ...h.load, ...extra } };
    }),
    servers: snapshot.servers.map((s) => ({ ...s, load: { ...s.load, ...serverLoads.get(s.id) } })),
  };
  const peakDims: DimensionDef[] = [];
  for (let k = 1; k <= K; k++)
    for (const d of dims)
      peakDims.push({
        ...d,
        name: peakDimension(d.name, k),
        load: peakDimension(d.load, k),
        weight: d.weight / K,
      });
  return { snapshot: expanded, policy: { ...policy, dimensions: peakDims }, peakCount: K, aggregates };
}

/**
 * A measured host's load at a slot: its current figure with each server's current share
 * replaced by that server's forecast (src/forecast/forecast.ts hostForecastAt, per dimension).
 * Unmeasured hosts are the sum of their servers, which ClusterState takes itself.
 */
function hostLoadAt(
  host: Host,
  servers: readonly Server[],
  profiles: LoadProfiles,
  dim: DimensionDef,
  slot: number,
): number {
  let delta = 0;
  let sum = 0;
  for (const s of servers) {
    const current = currentLoad(s, dim);
    sum += current;
    delta += loadAt(profiles.servers[s.id], s, dim, slot) - current;
  }
  return (host.load?.[dim.load] ?? sum) + delta;
}

function repeatPerPeak(
  dims: readonly DimensionDef[],
  K: number,
  value: (dim: DimensionDef, k: number) => number | undefined,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (let k = 0; k < K; k++)
    for (const d of dims) {
      const v = value(d, k);
      if (v !== undefined) out[peakDimension(d.load, k + 1)] = v;
    }
  return out;
}
