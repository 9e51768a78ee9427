// Durations as operators write them in the configuration: "90s", "5m", "1h30m", "7d".

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

export const DURATION_HINT = 'expected a duration such as "90s", "5m", "1h30m" or "7d"';

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < t.length) {
    const at = PART.lastIndex;
    const m = PART.exec(t);
    if (!m || m.index !== at) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

/** The largest whole units: 5400000 -> "1h30m"; 0 -> "0s". */
export function formatDuration(ms: number): string {
  if (ms === Number.POSITIVE_INFINITY) return 'unlimited';
  const parts: string[] = [];
  let left = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    const n = Math.floor(left / size);
    if (n > 0) parts.push(`${n}${unit}`);
    left -= n * size;
  }
  if (left > 0) parts.push(`${left}ms`);
  return parts.join('') || '0s';
}
