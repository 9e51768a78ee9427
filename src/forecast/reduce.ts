// Reduces a server's load history to a profile: one high-quantile figure per slot of a typical
// week (issue 28). Pure: samples in, figures out, so the recorder, the simulator and the replay
// bench all reduce the same way.
import { type ProfileResolution, profileSlotCount, type ServerProfile } from '../model/snapshot.js';

export interface Sample {
  /** Epoch seconds. */
  t: number;
  value: number;
}

export interface ReduceOptions {
  resolution: ProfileResolution;
  /** 0 < quantile <= 1; 0.9 keeps each slot's p90. */
  quantile: number;
  /** IANA time zone the slots are counted in (operators' working day, not UTC). */
  timeZone: string;
  /** Slots with fewer samples than this are null: too little history to forecast from. */
  minSamples: number;
}

export interface ReducedSeries {
  values: (number | null)[];
  samples: number[];
}

const WEEKDAY_INDEX: Record<string, number> = {
  Mon: 0,
  Tue: 1,
  Wed: 2,
  Thu: 3,
  Fri: 4,
  Sat: 5,
  Sun: 6,
};

// Every time zone offset in use is a multiple of 15 minutes, so all instants of one quarter hour
// fall in the same local hour: the slot is computed once per quarter and reused (a 28-day hourly
// history of 500 servers asks Intl for 2,688 quarters instead of 336,000 samples).
const QUARTER_SECONDS = 900;

export interface SlotClock {
  /** Slot of an instant (epoch seconds) under the clock's resolution and time zone. */
  slotOf(t: number): number;
  readonly slots: number;
}

export const slotClock = (resolution: ProfileResolution, timeZone: string): SlotClock => {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: 'numeric',
      hourCycle: 'h23',
    });
  } catch {
    throw new RangeError(`timeZone: "${timeZone}" is not an IANA time zone name`);
  }
  const cache = new Map<number, number>();
  const slotOf = (t: number): number => {
    const quarter = Math.floor(t / QUARTER_SECONDS);
    const cached = cache.get(quarter);
    if (cached !== undefined) return cached;
    let day = -1;
    let hour = -1;
    for (const part of format.formatToParts(new Date(quarter * QUARTER_SECONDS * 1000))) {
      if (part.type === 'weekday') day = WEEKDAY_INDEX[part.value] ?? -1;
      else if (part.type === 'hour') hour = Number(part.value);
    }
    if (day < 0 || hour < 0 || hour > 23) throw new RangeError(`cannot place ${t} in ${timeZone}`);
    const slot = resolution === 'hour-of-week' ? day * 24 + hour : (day >= 5 ? 24 : 0) + hour;
    cache.set(quarter, slot);
    return slot;
  };
  return { slotOf, slots: profileSlotCount(resolution) };
};

/**
 * Quantile by linear interpolation between closest ranks (Hyndman & Fan type 7, the default of
 * numpy and R): position q*(n-1) in the sorted values. Sorts `values` in place.
 */
export const quantileOf = (values: number[], q: number): number => {
  values.sort((a, b) => a - b);
  const pos = q * (values.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = values[lo] as number;
  const b = values[hi] as number;
  return a + (b - a) * (pos - lo);
};

const checkOptions = (opts: ReduceOptions): void => {
  if (!(opts.quantile > 0 && opts.quantile <= 1))
    throw new RangeError(`quantile: expected 0 < q <= 1, got ${opts.quantile}`);
  if (!Number.isInteger(opts.minSamples) || opts.minSamples < 1)
    throw new RangeError(`minSamples: expected a positive integer, got ${opts.minSamples}`);
};

const reduceWith = (samples: readonly Sample[], opts: ReduceOptions, clock: SlotClock): ReducedSeries => {
  const buckets: number[][] = Array.from({ length: clock.slots }, () => []);
  for (const s of samples) {
    // A gap in Prometheus answers comes as a missing point; NaN/Inf from a broken exporter are
    // gaps too, not loads.
    if (!Number.isFinite(s.value) || !Number.isFinite(s.t)) continue;
    (buckets[clock.slotOf(s.t)] as number[]).push(Math.max(0, s.value));
  }
  const counts = buckets.map((b) => b.length);
  const values = buckets.map((b) => (b.length >= opts.minSamples ? quantileOf(b, opts.quantile) : null));
  return { values, samples: counts };
};

export const reduceSeries = (samples: readonly Sample[], opts: ReduceOptions): ReducedSeries => {
  checkOptions(opts);
  return reduceWith(samples, opts, slotClock(opts.resolution, opts.timeZone));
};

export interface ServerSeries {
  /** Busy physical cores. */
  cpu?: readonly Sample[];
  /** MiB in use. */
  memoryMB?: readonly Sample[];
}

/**
 * One server's profile. `samples` per slot is the smaller count of the metrics given, so a slot
 * that reaches minSamples there has a figure for every metric present.
 * Pass a `clock` from slotClock to share its cache across many servers.
 */
export const buildServerProfile = (
  series: ServerSeries,
  opts: ReduceOptions,
  clock: SlotClock = slotClock(opts.resolution, opts.timeZone),
): ServerProfile => {
  checkOptions(opts);
  const cpu = series.cpu ? reduceWith(series.cpu, opts, clock) : undefined;
  const memory = series.memoryMB ? reduceWith(series.memoryMB, opts, clock) : undefined;
  const counts: number[] = Array.from({ length: clock.slots }, (_, i) => {
    const c = cpu?.samples[i];
    const m = memory?.samples[i];
    if (c === undefined) return m ?? 0;
    return m === undefined ? c : Math.min(c, m);
  });
  const profile: ServerProfile = { samples: counts };
  if (cpu) profile.cpu = cpu.values;
  if (memory) profile.memoryMB = memory.values;
  return profile;
};

/** True when the profile has at least one known slot: worth carrying in a snapshot. */
export const hasHistory = (profile: ServerProfile): boolean =>
  (profile.cpu ?? []).some((v) => v !== null) || (profile.memoryMB ?? []).some((v) => v !== null);
