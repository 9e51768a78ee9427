// Forecast figures for the API and dashboard: per host, the peak of its forecast utilization over
// the next hours (and when), beside the utilization it has now; per aggregate, how wrong the
// profiles were. From the snapshot's load profiles (src/forecast/forecast.ts). Pure.
import { type HorizonSlot, horizonSlots, hostForecastAt } from '../../forecast/forecast.js';
import type { ForecastError, Host, Snapshot } from '../../model/snapshot.js';

/** The hours the dashboard looks ahead: the next working day from any time of day. */
export const FORECAST_HOURS = 24;

export interface HostForecastPeak {
  /** Forecast utilization at the peak hour (load over physical capacity, 0..1). */
  cpu: number;
  memory: number;
  /** Start of the peak hour (UTC) and how reasons name it ("Tue 11:00"). */
  at: string;
  label: string;
  /** Servers on the host that plan on current load (no profile for that hour). */
  fellBack: number;
}

export interface AggregateForecast {
  error: ForecastError | null;
  refreshedAt: string;
  /** Servers of the aggregate that have a profile. */
  profiledServers: number;
  servers: number;
}

const physical = (h: Host, rc: string): number => {
  const inv = h.inventory[rc];
  return inv ? Math.max(0, inv.total - inv.reserved) : 0;
};

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/** By host name: the hour of the next FORECAST_HOURS whose forecast is highest (cpu or memory). */
export function hostForecastPeaks(
  snapshot: Snapshot,
  hostNames: readonly string[],
  now: Date,
): Map<string, HostForecastPeak> {
  const out = new Map<string, HostForecastPeak>();
  const profiles = snapshot.profiles;
  if (!profiles) return out;
  const slots: HorizonSlot[] = horizonSlots(now, FORECAST_HOURS, profiles);
  const wanted = new Set(hostNames);
  const onHost = new Map<string, Snapshot['servers']>();
  for (const s of snapshot.servers)
    if (wanted.has(s.host)) onHost.set(s.host, [...(onHost.get(s.host) ?? []), s]);
  for (const h of snapshot.hosts) {
    if (!wanted.has(h.name)) continue;
    const cores = physical(h, 'VCPU');
    const mem = physical(h, 'MEMORY_MB');
    let best: HostForecastPeak | null = null;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const slot of slots) {
      const f = hostForecastAt(h, onHost.get(h.name) ?? [], profiles, slot.slot);
      const cpu = cores > 0 ? f.load.cpu / cores : 0;
      const memory = mem > 0 ? f.load.memoryMB / mem : 0;
      const score = Math.max(cpu, memory);
      if (score > bestScore) {
        bestScore = score;
        best = {
          cpu: round4(cpu),
          memory: round4(memory),
          at: slot.at,
          label: slot.label,
          fellBack: f.fellBack,
        };
      }
    }
    if (best) out.set(h.name, best);
  }
  return out;
}

/** The aggregate's profile coverage and forecast error, or null when the snapshot has no profiles. */
export function aggregateForecast(
  snapshot: Snapshot,
  aggregate: string,
  inAggregate: (h: Host) => boolean,
): AggregateForecast | null {
  const p = snapshot.profiles;
  if (!p) return null;
  const hosts = new Set(snapshot.hosts.filter(inAggregate).map((h) => h.name));
  const servers = snapshot.servers.filter((s) => hosts.has(s.host));
  return {
    error: p.errors?.[aggregate] ?? null,
    refreshedAt: p.refreshedAt,
    profiledServers: servers.filter((s) => p.servers[s.id] !== undefined).length,
    servers: servers.length,
  };
}
