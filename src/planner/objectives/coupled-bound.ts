// Relaxation 4 of the gap (docs/planner.md, "The gap"): a lower bound that keeps the dimensions
// together. The per-dimension relaxations of lower-bound.ts may spend the N largest CPU servers on
// CPU and the N largest memory servers on memory; a real move carries both at once.
//
// An aggregate's imbalance is Σ_d w_d·‖P·u_d‖/√n (P centres a vector). For any y_d with Σ y_d = 0
// and ‖y_d‖ ≤ 1, ‖P·u_d‖ ≥ ⟨y_d, u_d⟩ (Cauchy–Schwarz), and the right side is linear in the
// placement: each server adds c(s, h) = Σ_d (w_d/√n)·y_{h,d}·load_{s,d}/capacity_{h,d} where it
// stands. So every plan of N moves has an imbalance of at least
//   ⟨y, u_now⟩ − (sum of the N largest δ_s), δ_s = c(s, home) − min over its destinations c(s, h),
// whatever y is. Capacity and groups are left out, so the bound is weak where they bind, but true.
// The best y comes from Frank–Wolfe on the convex hull of N-move placements: y is the imbalance's
// gradient at the current point, the N best δ give the hull's best vertex and the bound, and the
// point steps towards that vertex. Started from the plan's own end state it climbs fastest. The
// hull lets a server move in part, so the bound stays below what whole moves can reach.

export interface CoupledInput {
  /** Counted hosts, dimensions, weight/√n per dimension. */
  readonly n: number;
  readonly D: number;
  readonly alpha: Float64Array;
  /** Per counted host and dimension (index h·D + d): utilization now and capacity (0: not counted). */
  readonly u0: Float64Array;
  readonly phys: Float64Array;
  /** Zone index per counted host. */
  readonly zone: Int32Array;
  /** Movable servers with a destination: home slot (−1 when not counted), zone, load (index s·D + d). */
  readonly home: Int32Array;
  readonly moverZone: Int32Array;
  readonly load: Float64Array;
}

/** Iterations cap; fewer on large aggregates so the bound's cost stays near a fixed amount of work. */
const MAX_ITERATIONS = 150;
const WORK_PER_BOUND = 1.5e7;
const LINE_SEARCH_STEPS = 24;

/**
 * The bound for `moves` moves, started from `start` (utilizations of some placement in the hull,
 * e.g. the plan's end state) or from now.
 */
export function coupledBound(input: CoupledInput, moves: number, start: Float64Array | null): number {
  const { n, D, u0 } = input;
  const movers = input.home.length;
  if (n < 2 || D === 0) return 0;
  const iterations = Math.max(
    10,
    Math.min(MAX_ITERATIONS, Math.floor(WORK_PER_BOUND / ((movers + n) * D * 8))),
  );
  const u = Float64Array.from(start ?? u0);
  const y = new Float64Array(n * D);
  const vertex = new Float64Array(n * D);
  const mix = new Float64Array(n * D);
  const sweep = sweepOrder(input);
  const scratch = { gain: new Float64Array(movers), to: new Int32Array(movers) };
  let best = 0;
  for (let t = 0; t < iterations; t++) {
    if (!gradient(input, u, y)) break;
    bestVertex(input, y, moves, sweep, scratch, vertex);
    best = Math.max(best, centredProduct(input, y, vertex));
    // Exact enough line search: the imbalance is convex along the segment.
    let lo = 0;
    let hi = 1;
    for (let s = 0; s < LINE_SEARCH_STEPS; s++) {
      const m1 = lo + (hi - lo) / 3;
      const m2 = hi - (hi - lo) / 3;
      if (valueAt(input, u, vertex, m1, mix) <= valueAt(input, u, vertex, m2, mix)) hi = m2;
      else lo = m1;
    }
    const g = (lo + hi) / 2;
    for (let i = 0; i < n * D; i++) u[i] = (1 - g) * u[i]! + g * vertex[i]!;
  }
  // Float sums carry relative errors near 1e-15; shave far more than that so the bound stays below.
  return Math.max(0, best * (1 - 1e-9));
}

/** y_d = P·u_d / ‖P·u_d‖ (0 for a flat dimension). False when every dimension is flat. */
function gradient(input: CoupledInput, u: Float64Array, y: Float64Array): boolean {
  const { n, D } = input;
  let any = false;
  for (let d = 0; d < D; d++) {
    let sum = 0;
    for (let h = 0; h < n; h++) sum += u[h * D + d]!;
    const mean = sum / n;
    let norm = 0;
    for (let h = 0; h < n; h++) {
      const v = u[h * D + d]! - mean;
      y[h * D + d] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm);
    if (norm <= 1e-12) {
      for (let h = 0; h < n; h++) y[h * D + d] = 0;
      continue;
    }
    any = true;
    // Where the deviations are tiny next to the utilizations, v/‖v‖ is not quite centred any more:
    // centre it again and keep its norm at most 1, which is all the bound needs.
    let sumY = 0;
    for (let h = 0; h < n; h++) {
      y[h * D + d]! /= norm;
      sumY += y[h * D + d]!;
    }
    let normY = 0;
    for (let h = 0; h < n; h++) {
      y[h * D + d]! -= sumY / n;
      normY += y[h * D + d]! ** 2;
    }
    normY = Math.sqrt(normY);
    if (normY > 1) for (let h = 0; h < n; h++) y[h * D + d]! /= normY;
  }
  return any;
}

/**
 * Σ_d alpha_d·⟨y_d, P·v_d⟩: at most the imbalance of any placement whose linear cost is at least
 * v's (Cauchy–Schwarz with ‖y_d‖ ≤ 1). Centring v here, not trusting Σ y_d = 0 to the last bit,
 * keeps float errors at the size of float errors.
 */
function centredProduct(input: CoupledInput, y: Float64Array, v: Float64Array): number {
  const { n, D, alpha } = input;
  let total = 0;
  for (let d = 0; d < D; d++) {
    let sum = 0;
    for (let h = 0; h < n; h++) sum += v[h * D + d]!;
    const mean = sum / n;
    let dot = 0;
    for (let h = 0; h < n; h++) dot += y[h * D + d]! * (v[h * D + d]! - mean);
    total += alpha[d]! * dot;
  }
  return total;
}

/** Σ_d alpha_d·‖P·((1−g)·u + g·v)_d‖: the imbalance at a point of the segment. */
function valueAt(
  input: CoupledInput,
  u: Float64Array,
  v: Float64Array,
  g: number,
  out: Float64Array,
): number {
  const { n, D, alpha } = input;
  let total = 0;
  for (let d = 0; d < D; d++) {
    let s1 = 0;
    let s2 = 0;
    for (let h = 0; h < n; h++) {
      const x = (1 - g) * u[h * D + d]! + g * v[h * D + d]!;
      out[h * D + d] = x;
      s1 += x;
      s2 += x * x;
    }
    total += alpha[d]! * Math.sqrt(Math.max(0, s2 - (s1 * s1) / n));
  }
  return total;
}

/**
 * The hull's best vertex for y: the N servers with the largest δ moved to their cheapest host.
 * A server's cost on a host is linear in the host's point z_h = y_h / capacity_h with
 * non-negative coefficients (its loads), so only hosts no other host beats in every dimension
 * (per zone) can be cheapest. In two dimensions those form a convex chain along which the
 * cheapest host moves one way as a server's memory-to-CPU ratio grows: servers taken in that
 * order (`sweep`) find theirs with one pointer per zone instead of a scan each. Exported for
 * the tests, which hold it against a scan of every host.
 */
export function bestVertex(
  input: CoupledInput,
  y: Float64Array,
  moves: number,
  sweep: Int32Array,
  scratch: { gain: Float64Array; to: Int32Array },
  vertex: Float64Array,
): void {
  const { n, D, phys, zone, home, moverZone, load, alpha } = input;
  // Loads are never negative, so a server's cost Σ_d alpha_d·load_d·z_{h,d} has non-negative coefficients.
  const z = new Float64Array(n * D);
  for (let i = 0; i < n * D; i++) z[i] = phys[i]! > 0 ? (alpha[i % D]! * y[i]!) / phys[i]! : 0;
  const front = paretoFronts(z, n, D, zone);
  const cost = (s: number, h: number): number => {
    let c = 0;
    for (let d = 0; d < D; d++) c += load[s * D + d]! * z[h * D + d]!;
    return c;
  };
  const { gain, to } = scratch;
  gain.fill(0);
  let chain: number[] = [];
  let at = 0;
  let chainZone = -1;
  for (const s of sweep) {
    if (moverZone[s] !== chainZone) {
      chainZone = moverZone[s]!;
      chain = front.get(chainZone) ?? [];
      at = 0;
    }
    if (chain.length === 0) continue;
    let arg: number;
    if (D === 2) {
      // Strictly cheaper only: a server without load costs nothing anywhere, and must not carry
      // the pointer past the hosts the next servers need. Along the convex chain the cost falls,
      // then rises, so the first host not beaten by the next is the cheapest.
      while (at + 1 < chain.length && cost(s, chain[at + 1]!) < cost(s, chain[at]!)) at++;
      arg = chain[at]!;
    } else {
      arg = chain[0]!;
      for (const h of chain) if (cost(s, h) < cost(s, arg)) arg = h;
    }
    const h0 = home[s]!;
    const delta = (h0 >= 0 ? cost(s, h0) : 0) - cost(s, arg);
    // The cheapest host may be the server's own: then no destination gains, δ = 0.
    if (arg !== h0 && delta > 0) {
      gain[s] = delta;
      to[s] = arg;
    }
  }
  vertex.set(input.u0);
  for (const s of largest(gain, moves)) {
    const h0 = home[s]!;
    const t = to[s]!;
    for (let d = 0; d < D; d++) {
      const l = load[s * D + d]!;
      if (h0 >= 0 && phys[h0 * D + d]! > 0) vertex[h0 * D + d]! -= l / phys[h0 * D + d]!;
      if (phys[t * D + d]! > 0) vertex[t * D + d]! += l / phys[t * D + d]!;
    }
  }
}

/** Movers by zone, then (two dimensions) by memory-to-CPU load ratio: bestVertex's sweep order. */
export function sweepOrder(input: CoupledInput): Int32Array {
  const { D, load, moverZone } = input;
  const ratio = (s: number): number => {
    if (D !== 2) return 0;
    const cpu = load[s * D]!;
    const mem = load[s * D + 1]!;
    return cpu > 0 ? mem / cpu : mem > 0 ? Number.POSITIVE_INFINITY : 0;
  };
  const order = Array.from({ length: moverZone.length }, (_, s) => s);
  const ratios = order.map(ratio);
  order.sort((a, b) => moverZone[a]! - moverZone[b]! || ratios[a]! - ratios[b]! || a - b);
  return Int32Array.from(order);
}

/** Indices of the k largest positive values (ties broken by index), found in linear time. */
function largest(values: Float64Array, k: number): number[] {
  let count = 0;
  for (let i = 0; i < values.length; i++) if (values[i]! > 0) count++;
  const out: number[] = [];
  if (count <= k) {
    for (let i = 0; i < values.length; i++) if (values[i]! > 0) out.push(i);
    return out;
  }
  if (k <= 0) return out;
  const keys = new Float64Array(count);
  let j = 0;
  for (let i = 0; i < values.length; i++) if (values[i]! > 0) keys[j++] = values[i]!;
  const threshold = kthLargest(keys, k);
  for (let i = 0; i < values.length; i++) if (values[i]! > threshold) out.push(i);
  for (let i = 0; i < values.length && out.length < k; i++) if (values[i] === threshold) out.push(i);
  return out;
}

/** Hoare's selection on a scratch array (reordered in place). */
function kthLargest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target]!;
  }
  return a[target]!;
}

/**
 * Per zone: the hosts that can be cheapest for some non-negative cost vector. In two dimensions
 * that is the lower-left convex hull (a handful of hosts even when most of them trade one
 * dimension for the other); otherwise the hosts no other host matches or beats in every dimension.
 */
function paretoFronts(z: Float64Array, n: number, D: number, zone: Int32Array): Map<number, number[]> {
  if (D === 2) return lowerLeftHulls(z, n, zone);
  const order = Array.from({ length: n }, (_, h) => h);
  const sum = (h: number): number => {
    let s = 0;
    for (let d = 0; d < D; d++) s += z[h * D + d]!;
    return s;
  };
  const sums = order.map(sum);
  order.sort((a, b) => sums[a]! - sums[b]! || a - b);
  const fronts = new Map<number, number[]>();
  for (const h of order) {
    const front = fronts.get(zone[h]!) ?? [];
    // A host sorted later cannot dominate an earlier one, so checking against the front suffices.
    const dominated = front.some((g) => {
      for (let d = 0; d < D; d++) if (z[g * D + d]! > z[h * D + d]!) return false;
      return true;
    });
    if (!dominated) front.push(h);
    fronts.set(zone[h]!, front);
  }
  return fronts;
}

function lowerLeftHulls(z: Float64Array, n: number, zone: Int32Array): Map<number, number[]> {
  const order = Array.from({ length: n }, (_, h) => h);
  order.sort((a, b) => z[2 * a]! - z[2 * b]! || z[2 * a + 1]! - z[2 * b + 1]! || a - b);
  const hulls = new Map<number, number[]>();
  const cross = (o: number, a: number, b: number): number =>
    (z[2 * a]! - z[2 * o]!) * (z[2 * b + 1]! - z[2 * o + 1]!) -
    (z[2 * a + 1]! - z[2 * o + 1]!) * (z[2 * b]! - z[2 * o]!);
  for (const h of order) {
    const hull = hulls.get(zone[h]!) ?? [];
    // Left to right, the lower hull ends at its lowest point: what lies right of it and higher
    // is beaten there in both dimensions.
    const last = hull[hull.length - 1];
    if (last !== undefined && z[2 * h + 1]! >= z[2 * last + 1]!) {
      hulls.set(zone[h]!, hull);
      continue;
    }
    while (hull.length >= 2 && cross(hull[hull.length - 2]!, hull[hull.length - 1]!, h) <= 0) hull.pop();
    hull.push(h);
    hulls.set(zone[h]!, hull);
  }
  return hulls;
}
