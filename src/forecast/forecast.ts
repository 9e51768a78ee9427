// Forecast figures at a slot of a typical week, from the snapshot's load profiles
// (src/model/snapshot.ts, "aicerine-profiles/1"). Pure: used by the planner's forecast objective,
// the API and the dashboard. The checker recomputes the same figures on its own (src/checker).
import type { Host, LoadProfiles, ProfileResolution, Server, ServerProfile } from '../model/snapshot.js';

/** The load keys a profile carries. */
export const PROFILE_KEYS = ['cpu', 'memoryMB'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];

export const isProfileKey = (key: string): key is ProfileKey => key === 'cpu' || key === 'memoryMB';

const HOUR_MS = 3_600_000;
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

// Intl formatters are costly to build and a plan asks for the same zone many times.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: 'numeric', hourCycle: 'h23' });
    } catch {
      throw new RangeError(`profiles.timeZone: "${timeZone}" is not an IANA time zone`);
    }
    formatters.set(timeZone, f);
  }
  return f;
}

function toMs(instant: Date | string | number): number {
  const ms =
    instant instanceof Date ? instant.getTime() : typeof instant === 'string' ? Date.parse(instant) : instant;
  if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${String(instant)}`);
  return ms;
}

/** Day of the week (0 = Monday) and hour (0..23) of an instant, on the wall clock of `timeZone`. */
export function localWeekHour(
  instant: Date | string | number,
  timeZone: string,
): { day: number; hour: number } {
  const parts = formatter(timeZone).formatToParts(new Date(toMs(instant)));
  const weekday = parts.find((p) => p.type === 'weekday')?.value;
  const hour = Number(parts.find((p) => p.type === 'hour')?.value);
  const day = WEEKDAYS.indexOf(weekday as (typeof WEEKDAYS)[number]);
  if (day < 0 || !Number.isInteger(hour)) throw new RangeError(`cannot read the wall clock of ${timeZone}`);
  return { day, hour: hour % 24 };
}

/**
 * The profile slot an instant falls in: hour-of-week, day * 24 + hour (Monday = 0); hour-of-day,
 * the hour on weekdays and 24 + the hour on Saturday and Sunday.
 */
export function slotAt(
  instant: Date | string | number,
  profiles: Pick<LoadProfiles, 'resolution' | 'timeZone'>,
): number {
  const { day, hour } = localWeekHour(instant, profiles.timeZone);
  return slotOfDayHour(day, hour, profiles.resolution);
}

export function slotOfDayHour(day: number, hour: number, resolution: ProfileResolution): number {
  if (resolution === 'hour-of-week') return day * 24 + hour;
  return day >= 5 ? 24 + hour : hour;
}

/** How a slot reads in reasons: "Tue 11:00" (hour-of-week), "weekday 11:00" / "weekend 11:00". */
export function slotLabel(slot: number, resolution: ProfileResolution): string {
  const hour = `${String(slot % 24).padStart(2, '0')}:00`;
  if (resolution === 'hour-of-week') return `${WEEKDAYS[Math.floor(slot / 24)]} ${hour}`;
  return `${slot >= 24 ? 'weekend' : 'weekday'} ${hour}`;
}

export interface HorizonSlot {
  slot: number;
  /** Start of the hour, ISO UTC: the first hour of the horizon this slot stands for. */
  at: string;
  /** As reasons print it, on the profiles' wall clock. */
  label: string;
}

/**
 * The slots of the `hours` hours starting with the one `from` falls in, in time order, each once
 * (a horizon longer than the profile's period, or a daylight-saving repeat, meets slots again).
 */
export function horizonSlots(
  from: Date | string | number,
  hours: number,
  profiles: Pick<LoadProfiles, 'resolution' | 'timeZone'>,
): HorizonSlot[] {
  if (!Number.isInteger(hours) || hours < 1)
    throw new RangeError(`horizon hours: expected a positive integer, got ${hours}`);
  const start = Math.floor(toMs(from) / HOUR_MS) * HOUR_MS;
  const seen = new Set<number>();
  const out: HorizonSlot[] = [];
  for (let i = 0; i < hours; i++) {
    const t = start + i * HOUR_MS;
    const slot = slotAt(t, profiles);
    if (seen.has(slot)) continue;
    seen.add(slot);
    out.push({ slot, at: new Date(t).toISOString(), label: slotLabel(slot, profiles.resolution) });
  }
  return out;
}

/** A profile's figure at a slot, or null where it has none (no series, too few samples, short series). */
export function profileValue(
  profile: ServerProfile | undefined,
  key: ProfileKey,
  slot: number,
): number | null {
  const v = profile?.[key]?.[slot];
  return v === undefined || v === null || !Number.isFinite(v) ? null : v;
}

/**
 * A server's current load for a profile key, as formats.md reads a missing figure: cpu counts as
 * zero, memory as the flavor's RAM.
 */
export function currentServerLoad(server: Server, key: ProfileKey): number {
  const v = server.load?.[key];
  if (v !== undefined) return v;
  return key === 'memoryMB' ? server.flavor.ramMB : 0;
}

export interface ServerForecast {
  /** Forecast load per key: the profile's figure, or the current load where it has none. */
  load: Record<ProfileKey, number>;
  /** Keys that fell back to current load (no profile, no series for the key, or a null slot). */
  fellBack: ProfileKey[];
}

export function serverForecastAt(
  server: Server,
  profiles: LoadProfiles | undefined,
  slot: number,
): ServerForecast {
  const profile = profiles?.servers[server.id];
  const fellBack: ProfileKey[] = [];
  const load = { cpu: 0, memoryMB: 0 };
  for (const key of PROFILE_KEYS) {
    const v = profileValue(profile, key, slot);
    if (v === null) fellBack.push(key);
    load[key] = v ?? currentServerLoad(server, key);
  }
  return { load, fellBack };
}

export interface HostForecast {
  load: Record<ProfileKey, number>;
  /** Servers on the host that fell back to current load for at least one key. */
  fellBack: number;
}

/**
 * A host's forecast load at a slot: its current load with each server's current share replaced
 * by that server's forecast. Where the host's load is measured, the part no server accounts for
 * (hypervisor, emulator threads, page cache) has no profile of its own and is kept at its current
 * value; this is also how the planner moves load (a server's figure off one host, onto another),
 * so forecast and plan agree. Without a measured figure the host is the sum of its servers.
 */
export function hostForecastAt(
  host: Host,
  servers: readonly Server[],
  profiles: LoadProfiles | undefined,
  slot: number,
): HostForecast {
  let fellBack = 0;
  const delta = { cpu: 0, memoryMB: 0 };
  const sum = { cpu: 0, memoryMB: 0 };
  for (const s of servers) {
    const f = serverForecastAt(s, profiles, slot);
    if (f.fellBack.length > 0) fellBack++;
    for (const key of PROFILE_KEYS) {
      const current = currentServerLoad(s, key);
      delta[key] += f.load[key] - current;
      sum[key] += current;
    }
  }
  const load = { cpu: 0, memoryMB: 0 };
  for (const key of PROFILE_KEYS) load[key] = (host.load?.[key] ?? sum[key]) + delta[key];
  return { load, fellBack };
}

/** What a worst-slot ranking weighs: a load key over the physical capacity of a resource class. */
export interface ForecastDimension {
  load: string;
  capacity: string;
  weight: number;
}

const physical = (host: Host, rc: string): number => {
  const inv = host.inventory[rc];
  return inv === undefined ? 0 : Math.max(0, inv.total - inv.reserved);
};

/**
 * How loaded an aggregate is forecast to be at a slot: per dimension, the hosts' total forecast
 * load over their total physical capacity, weighted. It does not depend on where servers are,
 * so a plan cannot change which slots are the worst; a dimension without a profile key counts at
 * its current figure, the same in every slot.
 */
export function aggregatePressureAt(
  hosts: readonly Host[],
  serversOf: (host: Host) => readonly Server[],
  profiles: LoadProfiles | undefined,
  slot: number,
  dims: readonly ForecastDimension[],
): number {
  const forecasts = hosts.map((h) => hostForecastAt(h, serversOf(h), profiles, slot));
  let pressure = 0;
  for (const dim of dims) {
    let load = 0;
    let cap = 0;
    hosts.forEach((h, i) => {
      load += isProfileKey(dim.load) ? forecasts[i]!.load[dim.load] : (h.load?.[dim.load] ?? 0);
      cap += physical(h, dim.capacity);
    });
    if (cap > 0) pressure += dim.weight * (load / cap);
  }
  return pressure;
}

export interface RankedSlot extends HorizonSlot {
  pressure: number;
}

/**
 * The `count` slots of a horizon with the highest pressure, in time order. Ties keep the earlier
 * slot, so the choice is deterministic.
 */
export function worstSlots(
  horizon: readonly HorizonSlot[],
  pressureOf: (slot: number) => number,
  count: number,
): RankedSlot[] {
  const ranked = horizon.map((h, order) => ({ ...h, pressure: pressureOf(h.slot), order }));
  ranked.sort((a, b) => b.pressure - a.pressure || a.order - b.order);
  return ranked
    .slice(0, Math.max(0, count))
    .sort((a, b) => a.order - b.order)
    .map(({ order: _order, ...rest }) => rest);
}

/** The aggregate's worst slots of the horizon starting at `from`, by aggregatePressureAt. */
export function aggregateWorstSlots(args: {
  hosts: readonly Host[];
  servers: readonly Server[];
  profiles: LoadProfiles;
  from: Date | string | number;
  hours: number;
  count: number;
  dims: readonly ForecastDimension[];
}): RankedSlot[] {
  const byHost = new Map<string, Server[]>();
  for (const s of args.servers) {
    const list = byHost.get(s.host);
    if (list === undefined) byHost.set(s.host, [s]);
    else list.push(s);
  }
  const serversOf = (h: Host) => byHost.get(h.name) ?? [];
  const horizon = horizonSlots(args.from, args.hours, args.profiles);
  return worstSlots(
    horizon,
    (slot) => aggregatePressureAt(args.hosts, serversOf, args.profiles, slot, args.dims),
    args.count,
  );
}
