// Wall-clock time in an IANA time zone, from Node's full ICU (Intl): no time-zone library, so
// the tz database is the one Node ships. Instants are epoch milliseconds.

export interface LocalTime {
  year: number;
  month: number;
  day: number;
  /** Minutes since local midnight, 0..1439. */
  minuteOfDay: number;
  /** 0 = Monday ... 6 = Sunday. */
  weekday: number;
}

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * The zone name as written when ICU knows it, else undefined. Not ICU's canonical spelling:
 * ICU still calls Asia/Kolkata "Asia/Calcutta", which would surprise the operator who wrote it.
 */
export function knownZone(name: string): string | undefined {
  // Offsets such as "+02:00" are accepted by newer ICU but are not zones: they have no DST rules.
  if (!/^[A-Za-z]/.test(name)) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return name;
  } catch {
    return undefined;
  }
}

function fields(zone: string, instant: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return out;
}

/** Local minus UTC at an instant, in milliseconds (Paris in winter: +3,600,000). */
export function offsetAt(zone: string, instant: number): number {
  const f = fields(zone, instant);
  const local = Date.UTC(
    f.year ?? 0,
    (f.month ?? 1) - 1,
    f.day ?? 1,
    f.hour ?? 0,
    f.minute ?? 0,
    f.second ?? 0,
  );
  return local - Math.floor(instant / 1000) * 1000;
}

export function localTime(zone: string, instant: number): LocalTime {
  const f = fields(zone, instant);
  const year = f.year ?? 0;
  const month = f.month ?? 1;
  const day = f.day ?? 1;
  const weekday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
  return { year, month, day, minuteOfDay: (f.hour ?? 0) * 60 + (f.minute ?? 0), weekday };
}

/**
 * The first instant at which the zone's wall clock reads the given local date and time or
 * later. One rule covers both DST edges: a time skipped by a spring-forward gap resolves to
 * the moment the clock jumps (Paris, 02:30 on the last Sunday of March: 03:00 CEST), and a
 * time repeated by a fall-back overlap resolves to its first occurrence (01:30 EDT, not EST).
 * `minuteOfDay` may be 1440 (24:00, the next midnight).
 */
export function instantOf(
  zone: string,
  year: number,
  month: number,
  day: number,
  minuteOfDay: number,
): number {
  // The control loop asks about the same few dates every cycle, and the tz rules do not change
  // while a process runs, so a bounded memo of this pure function is safe.
  const key = `${zone}|${year}-${month}-${day}|${minuteOfDay}`;
  const hit = resolved.get(key);
  if (hit !== undefined) return hit;
  if (resolved.size >= MAX_RESOLVED) resolved.clear();
  const t = resolve(zone, year, month, day, minuteOfDay);
  resolved.set(key, t);
  return t;
}

const MAX_RESOLVED = 20_000;
const resolved = new Map<string, number>();

function resolve(zone: string, year: number, month: number, day: number, minuteOfDay: number): number {
  const local = Date.UTC(year, month - 1, day, 0, minuteOfDay);
  const before = offsetAt(zone, local - DAY_MS);
  const after = offsetAt(zone, local + DAY_MS);
  const valid = [...new Set([before, after])]
    .map((o) => local - o)
    .filter((t) => offsetAt(zone, t) === local - t)
    .sort((a, b) => a - b);
  if (valid.length > 0) return valid[0]!;
  if (before === after) return local - before;
  // A gap: the clock jumps from before local to after it. Find the jump to the second.
  let lo = Math.min(local - before, local - after);
  let hi = Math.max(local - before, local - after);
  const old = offsetAt(zone, lo);
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2000) * 1000;
    if (offsetAt(zone, mid) === old) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The local calendar date `days` after the given one (pure date arithmetic, no zone). */
export function addDays(
  date: { year: number; month: number; day: number },
  days: number,
): { year: number; month: number; day: number; weekday: number } {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    weekday: (d.getUTCDay() + 6) % 7,
  };
}

/** "Sat 2026-12-05 22:00 GMT+1": an instant as the zone's wall clock, for operators. */
export function formatInZone(instant: number, zone: string): string {
  // Offsets rather than abbreviations: ICU has abbreviations for few zones outside the US.
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'shortOffset',
  }).formatToParts(new Date(instant));
  const p = (t: string) => parts.find((x) => x.type === t)?.value ?? '';
  return `${p('weekday')} ${p('year')}-${p('month')}-${p('day')} ${p('hour')}:${p('minute')} ${p('timeZoneName')}`;
}
