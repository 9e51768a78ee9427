// Maintenance windows: weekly ranges of wall-clock time in an IANA zone, and the pure
// questions the control loop asks of them (open now? since when? until when? next when?).
// The clock is always passed in. Grammar and DST rules: docs/configuration.md#maintenance-windows.
import { addDays, instantOf, knownZone, localTime } from './zone.js';

export interface WeeklyWindow {
  /** As written, whitespace normalised: shown to operators. */
  text: string;
  /** Days it starts on, 0 = Monday ... 6 = Sunday, ascending. */
  days: number[];
  /** Local start, minutes after midnight (0..1439). */
  start: number;
  /** Days from the start day to the end day (0..7). */
  endDayOffset: number;
  /** Local end on the end day, minutes after midnight (0..1440; 1440 is 24:00). */
  end: number;
  /** IANA zone name, as written. */
  zone: string;
}

export const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const FULL_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const DAY_MS = 86_400_000;
export const WINDOW_GRAMMAR = 'DAYS HH:MM - [DAY] HH:MM ZONE, e.g. "Sat 22:00 - Sun 06:00 Europe/Paris"';

export type WindowParse = { ok: true; window: WeeklyWindow } | { ok: false; error: string };

function dayIndex(token: string): number | undefined {
  const t = token.toLowerCase();
  const i = FULL_NAMES.findIndex((n) => n === t || n.slice(0, 3) === t);
  return i < 0 ? undefined : i;
}

const unknownDay = (t: string) =>
  `unknown day ${JSON.stringify(t)} (expected Mon, Tue, Wed, Thu, Fri, Sat or Sun)`;

function parseDays(token: string): number[] | string {
  const days = new Set<number>();
  for (const item of token.split(',')) {
    const [a, b, ...rest] = item.split('-');
    if (a === undefined || a === '' || rest.length > 0 || b === '')
      return `bad day list ${JSON.stringify(token)}`;
    const from = dayIndex(a);
    if (from === undefined) return unknownDay(a);
    if (b === undefined) {
      days.add(from);
      continue;
    }
    const to = dayIndex(b);
    if (to === undefined) return unknownDay(b);
    // A range runs forward through the week: Fri-Mon is Fri, Sat, Sun, Mon.
    for (let d = from; ; d = (d + 1) % 7) {
      days.add(d);
      if (d === to) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

function parseTime(token: string, isEnd: boolean): number | string {
  const m = /^(\d{1,2}):(\d{2})$/.exec(token);
  const h = m ? Number(m[1]) : Number.NaN;
  const min = m ? Number(m[2]) : Number.NaN;
  if (isEnd && h === 24 && min === 0) return 1440;
  if (!m || h > 23 || min > 59) {
    return `not a time ${JSON.stringify(token)} (expected HH:MM from 00:00 to 23:59${isEnd ? ', or 24:00' : ''})`;
  }
  return h * 60 + min;
}

/**
 * Parses `DAYS HH:MM - [DAY] HH:MM ZONE`. DAYS is a day (Mon or Monday, any case), a range
 * (Mon-Fri, Fri-Mon wraps) or a comma list of those. Without an end day a window ends the
 * same day, or the next day when the end is not after the start (22:00 - 02:00). An end day
 * is allowed after a single start day only.
 */
export function parseWindow(input: string): WindowParse {
  const text = input.trim().replace(/\s+/g, ' ');
  if (/ \d{1,2}:\d{2}$/.test(text))
    return { ok: false, error: `missing the time zone at the end (${WINDOW_GRAMMAR})` };
  const m = /^(\S+) (\S+) ?- ?(?:([A-Za-z]+) )?(\S+) (\S+)$/.exec(text);
  if (!m) return { ok: false, error: `expected ${WINDOW_GRAMMAR}` };
  const [, daysTok = '', startTok = '', endDayTok, endTok = '', zoneTok = ''] = m;
  const days = parseDays(daysTok);
  if (typeof days === 'string') return { ok: false, error: days };
  const start = parseTime(startTok, false);
  if (typeof start === 'string') return { ok: false, error: start };
  const end = parseTime(endTok, true);
  if (typeof end === 'string') return { ok: false, error: end };
  const zone = knownZone(zoneTok);
  if (!zone) {
    return {
      ok: false,
      error: `unknown time zone ${JSON.stringify(zoneTok)} (expected an IANA name such as Europe/Paris, or UTC)`,
    };
  }
  let endDayOffset: number;
  if (endDayTok !== undefined) {
    const endDay = dayIndex(endDayTok);
    if (endDay === undefined) return { ok: false, error: unknownDay(endDayTok) };
    if (days.length !== 1) {
      return {
        ok: false,
        error: 'an end day is only allowed after a single start day (write one window per day)',
      };
    }
    endDayOffset = (endDay - days[0]! + 7) % 7;
    if (endDayOffset === 0 && end <= start) {
      return {
        ok: false,
        error: 'ends before it starts on the same day (leave the end day out to cross midnight)',
      };
    }
  } else {
    if (end === start)
      return { ok: false, error: 'starts and ends at the same time (write 00:00 - 24:00 for a whole day)' };
    endDayOffset = end > start ? 0 : 1;
  }
  return { ok: true, window: { text, days, start, endDayOffset, end, zone } };
}

/** The window in the legacy site-file object form (`{days: [sat], start, end, timezone}`). */
export function windowFromParts(days: number[], start: number, end: number, zone: string): WeeklyWindow {
  const hhmm = (m: number) =>
    `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return {
    text: `${days.map((d) => DAY_NAMES[d]).join(',')} ${hhmm(start)} - ${hhmm(end)} ${zone}`,
    days: [...days].sort((a, b) => a - b),
    start,
    endDayOffset: end > start ? 0 : 1,
    end,
    zone,
  };
}

export interface Occurrence {
  opensAt: number;
  closesAt: number;
  window: WeeklyWindow;
}

/** Every occurrence that starts on a local date within `days` days around the instant `around`. */
function occurrencesAround(w: WeeklyWindow, around: number, days: number): Occurrence[] {
  const today = localTime(w.zone, around);
  const out: Occurrence[] = [];
  for (let i = -days; i <= days; i++) {
    const d = addDays(today, i);
    if (!w.days.includes(d.weekday)) continue;
    const e = addDays(d, w.endDayOffset);
    const opensAt = instantOf(w.zone, d.year, d.month, d.day, w.start);
    const closesAt = instantOf(w.zone, e.year, e.month, e.day, w.end);
    // A window inside a spring-forward gap has no real time that night.
    if (closesAt > opensAt) out.push({ opensAt, closesAt, window: w });
  }
  return out;
}

/** Occurrences of the windows that overlap [from, to), by opening time. */
export function occurrences(windows: readonly WeeklyWindow[], from: number, to: number): Occurrence[] {
  const span = Math.ceil((to - from) / DAY_MS);
  return windows
    .flatMap((w) => occurrencesAround(w, from, span + 9))
    .filter((o) => o.closesAt > from && o.opensAt < to)
    .sort((a, b) => a.opensAt - b.opensAt || a.closesAt - b.closesAt);
}

interface Run {
  opensAt: number;
  closesAt: number;
  windows: WeeklyWindow[];
}

// The union of the windows: overlapping or touching occurrences form one open stretch.
function runsAround(windows: readonly WeeklyWindow[], now: number, days = 9): Run[] {
  const occ = windows.flatMap((w) => occurrencesAround(w, now, days)).sort((a, b) => a.opensAt - b.opensAt);
  const runs: Run[] = [];
  for (const o of occ) {
    const last = runs[runs.length - 1];
    if (last && o.opensAt <= last.closesAt) {
      last.closesAt = Math.max(last.closesAt, o.closesAt);
      if (!last.windows.includes(o.window)) last.windows.push(o.window);
    } else runs.push({ opensAt: o.opensAt, closesAt: o.closesAt, windows: [o.window] });
  }
  return runs;
}

// A stretch open for more than a week may still close: windows in zones with different DST
// dates can cover the week together only while their offsets line up. Such a stretch is looked
// at over a year either side (every DST cycle); open across all of it, it is open all the time.
const ALWAYS = 8 * DAY_MS;
const YEAR_DAYS = 370;

export type WindowState =
  | {
      open: true;
      /** When this open stretch began; null when the windows cover the whole week. */
      since: Date | null;
      /** When it closes; null when the windows cover the whole week. */
      closesAt: Date | null;
      /** The next opening after `closesAt`; null when always open. */
      nextOpensAt: Date | null;
      /** The windows of the open stretch (several when they overlap or touch). */
      windows: WeeklyWindow[];
    }
  | {
      open: false;
      /** The next opening; null when there are no windows (or none with real time). */
      nextOpensAt: Date | null;
      /** When that next stretch closes. */
      nextClosesAt: Date | null;
    };

/** Whether the windows are open at `now`, and the edges around it. */
export function windowState(windows: readonly WeeklyWindow[], now: Date): WindowState {
  const t = now.getTime();
  const runs = runsAround(windows, t);
  const i = runs.findIndex((r) => r.opensAt <= t && t < r.closesAt);
  if (i >= 0) {
    const r = runs[i]!;
    if (r.closesAt - r.opensAt > ALWAYS) {
      const wide = runsAround(windows, t, YEAR_DAYS);
      const j = wide.findIndex((x) => x.opensAt <= t && t < x.closesAt);
      const w = wide[j]!;
      const edge = (YEAR_DAYS - 8) * DAY_MS;
      const since = w.opensAt <= t - edge ? null : new Date(w.opensAt);
      const closesAt = w.closesAt >= t + edge ? null : new Date(w.closesAt);
      const next = closesAt === null ? undefined : wide[j + 1];
      return {
        open: true,
        since,
        closesAt,
        nextOpensAt: next ? new Date(next.opensAt) : null,
        windows: w.windows,
      };
    }
    const next = runs[i + 1];
    return {
      open: true,
      since: new Date(r.opensAt),
      closesAt: new Date(r.closesAt),
      nextOpensAt: next ? new Date(next.opensAt) : null,
      windows: r.windows,
    };
  }
  const next = runs.find((r) => r.opensAt > t);
  return {
    open: false,
    nextOpensAt: next ? new Date(next.opensAt) : null,
    nextClosesAt: next ? new Date(next.closesAt) : null,
  };
}

/** Milliseconds until the open stretch around `now` closes: 0 when closed, Infinity when always open. */
export function timeLeftInWindow(windows: readonly WeeklyWindow[], now: Date): number {
  const s = windowState(windows, now);
  if (!s.open) return 0;
  return s.closesAt === null ? Number.POSITIVE_INFINITY : s.closesAt.getTime() - now.getTime();
}
