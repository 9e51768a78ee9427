// A lower bound on the imbalance any plan of N moves can reach in an aggregate, from the
// snapshot alone: "within X% of the best possible with N moves" (docs/planner.md, "The gap").
// Two relaxations, each never above the truth; the larger one is the bound.
//
// 1. Untouched hosts. A move changes the utilization of at most two hosts, so at least n − 2N
//    of the n counted hosts end as they started. A dimension's sum of squared deviations is at
//    least that of the unchanged hosts around their own mean, smallest for consecutive hosts in
//    utilization order (a sliding window).
// 2. Load that can move. A plan moves each server at most once, so a host can shed at most its
//    movable servers' load; all the load shed by N moves is at most the N largest servers'
//    shares (load / the host's capacity), all the load received at most the N largest shares
//    on the smallest destination. Relaxed to continuous amounts, the best a plan can do for a
//    given level c is water-filling: hosts above c come down towards c within what they can
//    shed, hosts below go up within what can be received; the sum of squares is convex in c,
//    minimized by ternary search.
// Capacity, server sizes beyond the N largest, zones and groups are ignored: weak, but honest.
import type { ClusterState } from '../state.js';

const BISECTIONS = 40;

interface DimensionInput {
  /** Utilization per counted host, and what it could shed (movable load / capacity). */
  u: Float64Array;
  shed: Float64Array;
  /** Shares of movable servers, largest first: on their host, and on the smallest destination. */
  outShares: Float64Array;
  inShares: Float64Array;
}

/**
 * Captures every aggregate's utilizations now (call before any move) and returns the bound for
 * an aggregate and a number of moves.
 */
export function imbalanceLowerBounds(state: ClusterState): (agg: number, moves: number) => number {
  const inputs = state.aggregates.map((a) => state.dims.map((_, d) => dimensionInput(state, a.index, d)));
  const weights = state.dims.map((d) => d.weight);
  return (agg, moves) => {
    let total = 0;
    inputs[agg]!.forEach((input, d) => {
      const n = input.u.length;
      if (n < 2) return;
      const ss = Math.max(untouchedBound(input.u, moves), movableBound(input, moves));
      total += weights[d]! * Math.sqrt(Math.max(0, ss) / n);
    });
    // Float sums carry relative errors near 1e-15; shave far more than that so the bound stays below.
    return total * (1 - 1e-9);
  };
}

function dimensionInput(state: ClusterState, agg: number, d: number): DimensionInput {
  const counted = state.aggregates[agg]!.counted;
  let maxInv = 0;
  for (const h of counted) {
    const p = state.hosts[h]!.phys[d]!;
    if (p > 0) maxInv = Math.max(maxInv, 1 / p);
  }
  const isCounted = new Set(counted);
  const u = new Float64Array(counted.length);
  const shed = new Float64Array(counted.length);
  const out: number[] = [];
  const inn: number[] = [];
  counted.forEach((h, i) => {
    u[i] = state.util(h, d);
  });
  for (const h of state.aggregates[agg]!.hosts) {
    const p = state.hosts[h]!.phys[d]!;
    let movable = 0;
    for (const s of state.on[h]!) {
      if (state.servers[s]!.immovable !== null) continue;
      const l = state.servers[s]!.load[d]!;
      movable += l;
      out.push(isCounted.has(h) && p > 0 ? l / p : 0);
      inn.push(l * maxInv);
    }
    const i = counted.indexOf(h);
    if (i >= 0 && p > 0) shed[i] = Math.min(u[i]!, movable / p);
  }
  return {
    u,
    shed,
    outShares: Float64Array.from(out).sort().reverse(),
    inShares: Float64Array.from(inn).sort().reverse(),
  };
}

function untouchedBound(utils: Float64Array, moves: number): number {
  const u = Float64Array.from(utils).sort();
  const n = u.length;
  const keep = n - Math.min(n, 2 * moves);
  if (keep < 2) return 0;
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < keep; i++) {
    s1 += u[i]!;
    s2 += u[i]! * u[i]!;
  }
  let best = s2 - (s1 * s1) / keep;
  for (let i = keep; i < n; i++) {
    s1 += u[i]! - u[i - keep]!;
    s2 += u[i]! * u[i]! - u[i - keep]! * u[i - keep]!;
    best = Math.min(best, s2 - (s1 * s1) / keep);
  }
  return best;
}

function movableBound(input: DimensionInput, moves: number): number {
  const { u } = input;
  const take = (shares: Float64Array): number => {
    let s = 0;
    for (let i = 0; i < Math.min(moves, shares.length); i++) s += shares[i]!;
    return s;
  };
  const out = take(input.outShares);
  const inn = take(input.inShares);
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const x of u) {
    lo = Math.min(lo, x);
    hi = Math.max(hi, x);
  }
  const range = hi - lo;
  const at = (c: number): number => sumOfSquaresAt(input, c, out, inn);
  for (let i = 0; i < 40; i++) {
    const m1 = lo + (hi - lo) / 3;
    const m2 = hi - (hi - lo) / 3;
    if (at(m1) <= at(m2)) hi = m2;
    else lo = m1;
  }
  // The searches stop at a small interval, not at the exact minimum: take off what the sum can
  // change over it (its slope is at most 2·n·range), so the result stays a lower bound.
  const slack = 2 * u.length * range * (hi - lo + 2 * range * 2 ** -BISECTIONS);
  return Math.max(0, at((lo + hi) / 2) - slack);
}

/** The least sum of squared deviations from c: hosts above come down, hosts below go up. */
function sumOfSquaresAt(input: DimensionInput, c: number, out: number, inn: number): number {
  const { u, shed } = input;
  // Hot side: level tau >= c with what the hosts can shed, within `out` in total.
  const shedAt = (tau: number): number => {
    let s = 0;
    for (let i = 0; i < u.length; i++) if (u[i]! > tau) s += Math.min(shed[i]!, u[i]! - tau);
    return s;
  };
  let tau = c;
  if (shedAt(c) > out) {
    let a = c;
    let b = Math.max(c, ...u);
    for (let i = 0; i < BISECTIONS; i++) {
      const m = (a + b) / 2;
      if (shedAt(m) > out) a = m;
      else b = m;
    }
    tau = b;
  }
  // Cold side: level sigma <= c, received within `inn` in total (no per-host limit).
  const recvAt = (sigma: number): number => {
    let s = 0;
    for (let i = 0; i < u.length; i++) if (u[i]! < sigma) s += sigma - u[i]!;
    return s;
  };
  let sigma = c;
  if (recvAt(c) > inn) {
    let a = Math.min(c, ...u);
    let b = c;
    for (let i = 0; i < BISECTIONS; i++) {
      const m = (a + b) / 2;
      if (recvAt(m) > inn) b = m;
      else a = m;
    }
    sigma = a;
  }
  let ss = 0;
  for (let i = 0; i < u.length; i++) {
    let v = u[i]!;
    if (v > c) v = Math.max(v - shed[i]!, Math.min(v, tau));
    else if (v < sigma) v = sigma;
    ss += (v - c) * (v - c);
  }
  return ss;
}
