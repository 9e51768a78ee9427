// Robust regression for migration durations. Pure numerics, no domain types.
//
// Why robust: a duration read from Nova's os-migrations is "request to last update", so a
// migration that waited in the source's queue, a retried pre-check or a straggler that an
// operator force-completed shows up as a point far above the line. Least squares would bend
// towards them; the median of pairwise slopes (Theil-Sen) ignores up to ~29% of such points,
// and a Huber M-estimator weighs them down for the two-variable (RAM and dirty rate) model.

/** The q-quantile (0..1) of values, linear between order statistics; NaN when empty. */
export function quantile(values: ArrayLike<number>, q: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  // Selection, not a sort: the Theil-Sen median runs over millions of pairwise slopes.
  const a = Float64Array.from(values);
  const pos = Math.min(1, Math.max(0, q)) * (n - 1);
  const lo = Math.floor(pos);
  const low = select(a, lo);
  if (lo + 1 >= n || pos === lo) return low;
  // After selection everything right of `lo` is >= a[lo]: the next order statistic is their minimum.
  let high = Number.POSITIVE_INFINITY;
  for (let i = lo + 1; i < n; i++) if ((a[i] as number) < high) high = a[i] as number;
  return low + (high - low) * (pos - lo);
}

/** Hoare's quickselect: puts the k-th smallest at a[k], smaller ones left of it, larger right. */
function select(a: Float64Array, k: number): number {
  let left = 0;
  let right = a.length - 1;
  while (right > left) {
    // Median of three as the pivot keeps sorted or constant runs from going quadratic.
    const mid = (left + right) >>> 1;
    const x = a[left] as number;
    const y = a[mid] as number;
    const z = a[right] as number;
    const pivot = Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
    let i = left;
    let j = right;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else break;
  }
  return a[k] as number;
}

export function median(values: ArrayLike<number>): number {
  return quantile(values, 0.5);
}

export interface Line {
  intercept: number;
  slope: number;
}

/**
 * Theil-Sen line: slope = median of the slopes between every pair of points with different x,
 * intercept = median of y - slope * x. Undefined (undefined returned) when x has fewer than two
 * distinct values. O(n^2) pairs: callers cap n.
 */
export function theilSen(xs: readonly number[], ys: readonly number[]): Line | undefined {
  const n = Math.min(xs.length, ys.length);
  let pairs = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (xs[i] !== xs[j]) pairs++;
  if (pairs === 0) return undefined;
  const slopes = new Float64Array(pairs);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const xi = xs[i] as number;
    const yi = ys[i] as number;
    for (let j = i + 1; j < n; j++) {
      const xj = xs[j] as number;
      if (xj !== xi) slopes[k++] = ((ys[j] as number) - yi) / (xj - xi);
    }
  }
  const slope = median(slopes);
  const offsets = new Float64Array(n);
  for (let i = 0; i < n; i++) offsets[i] = (ys[i] as number) - slope * (xs[i] as number);
  return { intercept: median(offsets), slope };
}

/** Huber's tuning constant: 95% efficiency when residuals are normal. */
export const HUBER_K = 1.345;

export interface HuberResult {
  /** Coefficients for [1, ...features]. */
  coefficients: number[];
  iterations: number;
  /** Robust residual scale (MAD / 0.6745) at the end. */
  scale: number;
}

/**
 * Huber M-estimator by iteratively reweighted least squares: residuals within k robust standard
 * deviations count fully, larger ones with weight k*s/|r|, so an outlier pulls linearly, not
 * quadratically. Starts from `start` (e.g. a Theil-Sen line) so that a few huge outliers cannot
 * capture the first iteration. `rows` are the features without the constant term.
 */
export function huberFit(
  rows: readonly (readonly number[])[],
  ys: readonly number[],
  start: readonly number[],
  opts: { k?: number; maxIterations?: number; tolerance?: number } = {},
): HuberResult | undefined {
  const k = opts.k ?? HUBER_K;
  const p = start.length;
  let beta = [...start];
  let scale = 0;
  const maxIterations = opts.maxIterations ?? 50;
  for (let it = 1; it <= maxIterations; it++) {
    const residuals = ys.map((y, i) => y - predict(beta, rows[i] as readonly number[]));
    scale = median(residuals.map(Math.abs)) / 0.6745;
    if (!(scale > 1e-9)) return { coefficients: beta, iterations: it, scale: 0 };
    // Weighted normal equations X'WX b = X'Wy, with X = [1, features].
    const a = Array.from({ length: p }, () => new Array<number>(p).fill(0));
    const b = new Array<number>(p).fill(0);
    rows.forEach((row, i) => {
      const r = residuals[i] as number;
      const u = Math.abs(r) / scale;
      const w = u <= k ? 1 : k / u;
      const x = [1, ...row];
      for (let c = 0; c < p; c++) {
        b[c] = (b[c] as number) + w * (x[c] as number) * (ys[i] as number);
        const ac = a[c] as number[];
        for (let d = 0; d < p; d++) ac[d] = (ac[d] as number) + w * (x[c] as number) * (x[d] as number);
      }
    });
    const next = solve(a, b);
    if (!next) return undefined;
    const change = Math.max(...next.map((v, i) => Math.abs(v - (beta[i] as number))));
    beta = next;
    if (change <= (opts.tolerance ?? 1e-9) * Math.max(1, ...beta.map(Math.abs))) {
      return { coefficients: beta, iterations: it, scale };
    }
  }
  return { coefficients: beta, iterations: maxIterations, scale };
}

function predict(beta: readonly number[], row: readonly number[]): number {
  let s = beta[0] as number;
  for (let i = 0; i < row.length; i++) s += (beta[i + 1] as number) * (row[i] as number);
  return s;
}

/** Gaussian elimination with partial pivoting; undefined when singular. */
export function solve(a: readonly (readonly number[])[], b: readonly number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) {
      if (Math.abs((m[r] as number[])[col] as number) > Math.abs((m[pivot] as number[])[col] as number))
        pivot = r;
    }
    const pr = m[pivot] as number[];
    const scaleOf = Math.max(...pr.slice(0, n).map(Math.abs), 1e-300);
    if (Math.abs(pr[col] as number) <= 1e-12 * scaleOf) return undefined;
    [m[col], m[pivot]] = [pr, m[col] as number[]];
    const top = m[col] as number[];
    for (let r = col + 1; r < n; r++) {
      const row = m[r] as number[];
      const f = (row[col] as number) / (top[col] as number);
      for (let c = col; c <= n; c++) row[c] = (row[c] as number) - f * (top[c] as number);
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    const row = m[r] as number[];
    let s = row[n] as number;
    for (let c = r + 1; c < n; c++) s -= (row[c] as number) * (x[c] as number);
    x[r] = s / (row[r] as number);
  }
  return x;
}
