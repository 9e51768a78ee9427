// A brute-force reference for maintenance windows, independent of src/config/zone.ts: walk
// instants minute by minute, track the highest wall-clock reading seen so far (the clock only
// goes back on a fall-back night), and call the window open when that reading lies inside a
// weekly wall-clock range. This is the documented rule (a local time resolves to the first
// instant the wall clock reaches it) stated without any time arithmetic.
import type { WeeklyWindow } from '../../src/config/windows.js';

const MIN = 60_000;
const BLOCK = 15 * MIN; // every zone's transitions since 1970 fall on a quarter hour

const fmt = new Map<string, Intl.DateTimeFormat>();
/** Per zone, the offset (ms) read at the start of each block, by block number: one formatting
 * per quarter hour instead of one per minute, and a number key (a string key built per minute
 * made the property test spend most of its time here). */
const offsets = new Map<string, Map<number, number>>();

function offsetAt(zone: string, blockIndex: number): number {
  let byBlock = offsets.get(zone);
  let f = fmt.get(zone);
  if (!byBlock || !f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    fmt.set(zone, f);
    byBlock = new Map();
    offsets.set(zone, byBlock);
  }
  let off = byBlock.get(blockIndex);
  if (off === undefined) {
    const block = blockIndex * BLOCK;
    const p: Record<string, number> = Object.fromEntries(
      f.formatToParts(new Date(block)).map((x) => [x.type, Number(x.value)]),
    );
    const n = (k: string) => p[k] ?? 0;
    off = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute')) - block;
    byBlock.set(blockIndex, off);
  }
  return off;
}

function wallMinutes(zone: string, instant: number): number {
  return Math.floor((instant + offsetAt(zone, Math.floor(instant / BLOCK))) / MIN);
}

function insideWall(w: WeeklyWindow, wall: number): boolean {
  const day = Math.floor(wall / 1440);
  for (let d = day - 8; d <= day; d++) {
    const weekday = (((d + 3) % 7) + 7) % 7; // 1970-01-01 was a Thursday (3 when Monday is 0)
    if (!w.days.includes(weekday)) continue;
    if (d * 1440 + w.start <= wall && wall < (d + w.endDayOffset) * 1440 + w.end) return true;
  }
  return false;
}

export interface ReferenceState {
  open: boolean;
  since: number | null;
  closesAt: number | null;
  nextOpensAt: number | null;
}

/** The state at `now` (a whole minute), scanning `days` days either side. */
export function referenceState(windows: readonly WeeklyWindow[], now: number, days = 10): ReferenceState {
  const from = now - days * 1440 * MIN;
  const to = now + days * 1440 * MIN;
  const high = new Map<string, number>();
  const open: boolean[] = [];
  for (let t = from - 1440 * MIN; t < to; t += MIN) {
    let inside = false;
    for (const w of windows) {
      const wall = Math.max(high.get(w.zone) ?? Number.NEGATIVE_INFINITY, wallMinutes(w.zone, t));
      high.set(w.zone, wall);
      if (insideWall(w, wall)) inside = true;
    }
    if (t >= from) open.push(inside);
  }
  const at = (t: number) => open[(t - from) / MIN] ?? false;
  const idx = (now - from) / MIN;
  const firstFrom = (i: number, want: boolean): number | null => {
    for (let j = i; j < open.length; j++) if (open[j] === want) return from + j * MIN;
    return null;
  };
  if (at(now)) {
    let j = idx;
    while (j > 0 && open[j - 1]) j--;
    const closesAt = firstFrom(idx, false);
    return {
      open: true,
      since: j === 0 ? null : from + j * MIN,
      closesAt,
      nextOpensAt: closesAt === null ? null : firstFrom((closesAt - from) / MIN, true),
    };
  }
  return { open: false, since: null, closesAt: null, nextOpensAt: firstFrom(idx, true) };
}
