// How numbers and times read on the dashboard.

export const pct = (x: number) => `${Math.round(x * 100)}%`;

export const num = (x: number, digits = 3) => (Number.isInteger(x) ? String(x) : x.toFixed(digits));

export function time(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

export function seconds(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
