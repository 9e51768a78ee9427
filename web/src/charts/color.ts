// Utilization to colour: pale when idle, amber when busy, red from the hot line on, so the one hot
// host in a row of calm ones is seen before anything is read.

/** Prevention's hot line (docs/prevention.md): a host this loaded in any dimension is hot. */
export const HOT = 0.85;

type Rgb = [number, number, number];
const STOPS: [number, Rgb][] = [
  [0, [234, 242, 251]],
  [0.5, [158, 202, 225]],
  [0.7, [253, 208, 120]],
  [HOT, [227, 74, 51]],
  [1, [179, 0, 0]],
];

export function heatColor(u: number): string {
  const x = Math.max(0, Math.min(1, u));
  for (let i = 1; i < STOPS.length; i++) {
    const [x1, c1] = STOPS[i]!;
    const [x0, c0] = STOPS[i - 1]!;
    if (x <= x1) {
      const t = (x - x0) / (x1 - x0);
      const c = c0.map((v, k) => Math.round(v + (c1[k]! - v) * t));
      return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
    }
  }
  return 'rgb(179, 0, 0)';
}

/** Dark text on light cells, white on dark ones. */
export const inkOn = (u: number) => (u >= 0.78 ? '#fff' : '#1d2733');
