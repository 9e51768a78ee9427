// The forecast figures of a plan made with `load: forecast`, recomputed from the snapshot's load
// profiles alone (formats.md, docs/planner.md): which slot an hour is, the aggregate's pressure
// per slot and its worst slots, each server's and host's load at a slot. Written apart from
// src/forecast and the planner on purpose: a wrong slot or fallback there is caught here.
//
// A plan's forecast aggregate is judged on its own objective: the policy's dimensions once per
// peak ("cpu@1" .. "cpu@K", weights divided by K), with the loads the profiles give at the peak.
// The checker builds that as a second World whose servers and hosts carry those loads, so the
// worth, reason and hygiene checks read it through the same AggregateBalance as current load.
import type { AggregateForecast, Plan } from '../model/plan.js';
import type { Host, LoadProfiles, Server, Snapshot } from '../model/snapshot.js';
import type { DimensionDef } from '../policy/types.js';
import { isCounted } from './balance-replay.js';
import { serverLoad } from './stats.js';
import { buildWorld, type World } from './world.js';

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const HOUR = 3_600_000;

/** Monday-based day and hour of an instant on the wall clock of a time zone. */
function wallClock(ms: number, timeZone: string): { day: number; hour: number } {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const day = DAYS.indexOf(parts.find((p) => p.type === 'weekday')?.value ?? '');
  const hour = Number(parts.find((p) => p.type === 'hour')?.value) % 24;
  return { day, hour };
}

export function slotOf(ms: number, profiles: Pick<LoadProfiles, 'resolution' | 'timeZone'>): number {
  const { day, hour } = wallClock(ms, profiles.timeZone);
  if (profiles.resolution === 'hour-of-week') return day * 24 + hour;
  return (day >= 5 ? 24 : 0) + hour;
}

export function slotName(slot: number, resolution: LoadProfiles['resolution']): string {
  const hh = `${slot % 24 < 10 ? '0' : ''}${slot % 24}:00`;
  return resolution === 'hour-of-week'
    ? `${DAYS[Math.floor(slot / 24)]} ${hh}`
    : `${slot < 24 ? 'weekday' : 'weekend'} ${hh}`;
}

/** The horizon's hours as slots, first occurrence each, in time order with the hour's start. */
export function horizon(
  takenAt: string,
  hours: number,
  profiles: LoadProfiles,
): { slot: number; at: number }[] {
  const first = Math.floor(Date.parse(takenAt) / HOUR) * HOUR;
  const out: { slot: number; at: number }[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < hours; i++) {
    const at = first + i * HOUR;
    const slot = slotOf(at, profiles);
    if (!seen.has(slot)) {
      seen.add(slot);
      out.push({ slot, at });
    }
  }
  return out;
}

/** A server's load in a dimension at a slot: the profile's figure where there is one. */
export function serverLoadAt(
  profiles: LoadProfiles,
  server: Server,
  dim: DimensionDef,
  slot: number,
): number {
  const series =
    dim.load === 'cpu' || dim.load === 'memoryMB' ? profiles.servers[server.id]?.[dim.load] : undefined;
  const v = series?.[slot];
  return typeof v === 'number' && Number.isFinite(v) ? v : serverLoad(server, dim);
}

/** Whether a server has a profile figure at every slot for every profiled dimension. */
export function hasForecast(
  profiles: LoadProfiles,
  server: Server,
  dims: readonly DimensionDef[],
  slots: number[],
) {
  const p = profiles.servers[server.id];
  return slots.every((slot) =>
    dims.every((d) => {
      if (d.load !== 'cpu' && d.load !== 'memoryMB') return true;
      const v = p?.[d.load]?.[slot];
      return typeof v === 'number' && Number.isFinite(v);
    }),
  );
}

/** A host's load at a slot: its measured figure moved by its servers' forecast minus current. */
export function hostLoadAt(
  profiles: LoadProfiles,
  host: Host,
  servers: readonly Server[],
  dim: DimensionDef,
  slot: number,
): number {
  let now = 0;
  let then = 0;
  for (const s of servers) {
    now += serverLoad(s, dim);
    then += serverLoadAt(profiles, s, dim, slot);
  }
  return (host.load?.[dim.load] ?? now) + then - now;
}

function capacity(host: Host, dim: DimensionDef): number {
  const inv = host.inventory[dim.capacity];
  return inv ? Math.max(0, inv.total - inv.reserved) : 0;
}

/** Weighted total forecast load over total capacity of the aggregate's counted hosts. */
export function pressure(
  world: World,
  aggregate: string,
  profiles: LoadProfiles,
  dims: readonly DimensionDef[],
  slot: number,
): number {
  const hosts = world.hostsIn(aggregate).filter(isCounted);
  let total = 0;
  for (const dim of dims) {
    let load = 0;
    let cap = 0;
    for (const h of hosts) {
      load += hostLoadAt(profiles, h, world.serversOn.get(h.name) ?? [], dim, slot);
      cap += capacity(h, dim);
    }
    if (cap > 0) total += dim.weight * (load / cap);
  }
  return total;
}

/** The `count` slots of highest pressure, earlier first on ties, returned in time order. */
export function expectedPeaks(
  world: World,
  aggregate: string,
  profiles: LoadProfiles,
  dims: readonly DimensionDef[],
  takenAt: string,
  hours: number,
  count: number,
): { slot: number; at: number; pressure: number }[] {
  const all = horizon(takenAt, hours, profiles).map((h, i) => ({
    ...h,
    i,
    pressure: pressure(world, aggregate, profiles, dims, h.slot),
  }));
  return [...all]
    .sort((a, b) => b.pressure - a.pressure || a.i - b.i)
    .slice(0, count)
    .sort((a, b) => a.i - b.i);
}

/** The objective the plan's forecast aggregates were searched on, for AggregateBalance. */
export interface Objective {
  world: World;
  dims: DimensionDef[];
}

const peakName = (name: string, k: number) => `${name}@${k}`;

/**
 * The forecast objective of each aggregate the plan says planned on the forecast (keyed by
 * aggregate name). Empty when none did, or when the snapshot has no profiles to recompute from
 * (the forecast checker flags that claim).
 */
export function forecastObjectives(
  world: World,
  plan: Plan,
  dims: readonly DimensionDef[],
): Map<string, Objective> {
  const out = new Map<string, Objective>();
  const profiles = world.snapshot.profiles;
  const forecasts = plan.aggregates.filter(
    (a): a is typeof a & { forecast: AggregateForecast } => a.forecast?.load === 'forecast',
  );
  if (profiles === undefined || forecasts.length === 0) return out;
  for (const a of forecasts) {
    const f = a.forecast;
    const K = f.peakSlots;
    if (f.peaks.length === 0 || !Number.isInteger(K) || K < 1) continue;
    const slotOfRank = (k: number) => f.peaks[k % f.peaks.length]!.slot;
    const members = new Set(world.hostsIn(a.name).map((h) => h.name));
    const hosts: Host[] = world.snapshot.hosts.map((h) => {
      if (!members.has(h.name) || h.load === undefined) return h;
      const load = { ...h.load };
      const on = world.serversOn.get(h.name) ?? [];
      for (let k = 0; k < K; k++)
        for (const d of dims) load[peakName(d.load, k + 1)] = hostLoadAt(profiles, h, on, d, slotOfRank(k));
      return { ...h, load };
    });
    const servers: Server[] = world.snapshot.servers.map((s) => {
      if (!members.has(s.host)) return s;
      const load = { ...s.load };
      for (let k = 0; k < K; k++)
        for (const d of dims) load[peakName(d.load, k + 1)] = serverLoadAt(profiles, s, d, slotOfRank(k));
      return { ...s, load };
    });
    const snapshot: Snapshot = { ...world.snapshot, hosts, servers };
    const peakDims: DimensionDef[] = [];
    for (let k = 1; k <= K; k++)
      for (const d of dims)
        peakDims.push({ ...d, name: peakName(d.name, k), load: peakName(d.load, k), weight: d.weight / K });
    out.set(a.name, { world: buildWorld(snapshot), dims: peakDims });
  }
  return out;
}
