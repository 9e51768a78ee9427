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
// 3. Moves per host. The k-th move out of a host sheds at most the k-th largest share of its
//    movable servers, the k-th move into a host adds at most the k-th largest movable load in
//    the aggregate over its capacity, and N moves have N sources and N destinations. For a
//    level c, a host above c with m moves out ends at least (excess − its m largest shares)
//    above c; the best split of N moves over the hosts is greedy (each host's gains per extra
//    move fall, so the N largest gains win), and likewise into the hosts below c. The least
//    sum over c is found by branch and bound on c (the sum is Lipschitz in c), so it stays a
//    bound even where it is not convex. Much tighter than 2 when few large servers can move.
// 4. Dimensions together (coupled-bound.ts): a move carries all of a server's dimensions at once.
//    The relaxations above bound each dimension alone; this one bounds the weighted sum, and is
//    the strongest where many servers can move.
// Capacity and groups are ignored (zones too, except in 4): weak, but honest.
import type { ClusterState } from '../state.js';
import { type CoupledInput, coupledBound } from './coupled-bound.js';

const BISECTIONS = 40;

interface DimensionInput {
  /** Utilization per counted host, and what it could shed (movable load / capacity). */
  u: Float64Array;
  shed: Float64Array;
  /** Shares of movable servers, largest first: on their host, and on the smallest destination. */
  outShares: Float64Array;
  inShares: Float64Array;
  /** Per counted host: its movable servers' shares, largest first, and its capacity. */
  hostOut: Float64Array[];
  phys: Float64Array;
  /** Movable server loads in the aggregate (any host), largest first. */
  loads: Float64Array;
}

/**
 * Captures every aggregate's utilizations now (call before any move) and returns the bound for
 * an aggregate and a number of moves. `end`, when given, is the same cluster after some plan: the
 * coupled relaxation starts from that plan's end state, which only speeds it up.
 */
export function imbalanceLowerBounds(
  state: ClusterState,
): (agg: number, moves: number, end?: ClusterState) => number {
  const inputs = state.aggregates.map((a) => state.dims.map((_, d) => dimensionInput(state, a.index, d)));
  const coupled = state.aggregates.map((a) => coupledInput(state, a.index));
  const weights = state.dims.map((d) => d.weight);
  return (agg, moves, end) => {
    const together = coupled[agg]
      ? coupledBound(coupled[agg], moves, end ? endUtilizations(end, agg) : null)
      : 0;
    let total = 0;
    inputs[agg]!.forEach((input, d) => {
      const n = input.u.length;
      if (n < 2) return;
      const ss = Math.max(
        untouchedBound(input.u, moves),
        movableBound(input, moves),
        perHostBound(input, moves),
      );
      total += weights[d]! * Math.sqrt(Math.max(0, ss) / n);
    });
    // Float sums carry relative errors near 1e-15; shave far more than that so the bound stays below.
    return Math.max(total * (1 - 1e-9), together);
  };
}

/** Utilizations of the aggregate's counted hosts (host-major), as coupledInput orders them. */
function endUtilizations(state: ClusterState, agg: number): Float64Array {
  const counted = state.aggregates[agg]!.counted;
  const D = state.dims.length;
  const u = new Float64Array(counted.length * D);
  counted.forEach((h, i) => {
    for (let d = 0; d < D; d++) u[i * D + d] = state.util(h, d);
  });
  return u;
}

/** Input of relaxation 4; null when the aggregate has fewer than two counted hosts or a negative load. */
function coupledInput(state: ClusterState, agg: number): CoupledInput | null {
  const { counted, hosts } = state.aggregates[agg]!;
  const n = counted.length;
  const D = state.dims.length;
  if (n < 2) return null;
  const slot = new Map(counted.map((h, i) => [h, i]));
  const zones = new Map<string, number>();
  const zoneOf = (h: number): number => {
    const az = state.hosts[h]!.az;
    let z = zones.get(az);
    if (z === undefined) {
      z = zones.size;
      zones.set(az, z);
    }
    return z;
  };
  const alpha = Float64Array.from(state.dims, (dim) => dim.weight / Math.sqrt(n));
  const u0 = endUtilizations(state, agg);
  const phys = new Float64Array(n * D);
  const zone = new Int32Array(n);
  const perZone = new Map<number, number>();
  counted.forEach((h, i) => {
    for (let d = 0; d < D; d++) phys[i * D + d] = state.hosts[h]!.phys[d]!;
    zone[i] = zoneOf(h);
    perZone.set(zone[i]!, (perZone.get(zone[i]!) ?? 0) + 1);
  });
  const home: number[] = [];
  const moverZone: number[] = [];
  const load: number[] = [];
  for (const h of hosts) {
    const z = zoneOf(h);
    const at = slot.get(h) ?? -1;
    // Destinations are the zone's other counted hosts; none, and the server cannot move.
    if ((perZone.get(z) ?? 0) - (at >= 0 ? 1 : 0) < 1) continue;
    for (const s of state.on[h]!) {
      const server = state.servers[s]!;
      if (server.immovable !== null) continue;
      for (let d = 0; d < D; d++) {
        const l = server.load[d]!;
        if (!(l >= 0)) return null;
        load.push(l);
      }
      home.push(at);
      moverZone.push(z);
    }
  }
  return {
    n,
    D,
    alpha,
    u0,
    phys,
    zone,
    home: Int32Array.from(home),
    moverZone: Int32Array.from(moverZone),
    load: Float64Array.from(load),
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
  const indexOf = new Map(counted.map((h, i) => [h, i]));
  const u = new Float64Array(counted.length);
  const shed = new Float64Array(counted.length);
  const out: number[] = [];
  const inn: number[] = [];
  const loads: number[] = [];
  const hostOut: Float64Array[] = counted.map(() => new Float64Array(0));
  const phys = new Float64Array(counted.length);
  counted.forEach((h, i) => {
    u[i] = state.util(h, d);
    phys[i] = state.hosts[h]!.phys[d]!;
  });
  for (const h of state.aggregates[agg]!.hosts) {
    const p = state.hosts[h]!.phys[d]!;
    let movable = 0;
    const own: number[] = [];
    for (const s of state.on[h]!) {
      if (state.servers[s]!.immovable !== null) continue;
      const l = state.servers[s]!.load[d]!;
      movable += l;
      out.push(isCounted.has(h) && p > 0 ? l / p : 0);
      inn.push(l * maxInv);
      loads.push(l);
      if (p > 0) own.push(l / p);
    }
    const i = indexOf.get(h) ?? -1;
    if (i >= 0 && p > 0) shed[i] = Math.min(u[i]!, movable / p);
    if (i >= 0) hostOut[i] = Float64Array.from(own).sort().reverse();
  }
  return {
    u,
    shed,
    outShares: Float64Array.from(out).sort().reverse(),
    inShares: Float64Array.from(inn).sort().reverse(),
    hostOut,
    phys,
    loads: Float64Array.from(loads).sort().reverse(),
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

/** Branch-and-bound evaluations per bound: enough to close the gap on c to a few percent. */
const PER_HOST_EVALUATIONS = 160;

function perHostBound(input: DimensionInput, moves: number): number {
  const { u } = input;
  const n = u.length;
  if (n < 2) return 0;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const x of u) {
    lo = Math.min(lo, x);
    hi = Math.max(hi, x);
  }
  const range = hi - lo;
  if (range <= 0) return 0;
  // Outside [lo, hi] every term only grows as c moves away, so the least sum lies within. Each
  // term's slope in c is at most 2·range, so the sum's is at most L = 2·n·range: over an
  // interval of width w around c the sum is at least f(c) − L·w/2.
  const L = 2 * n * range;
  const f = (c: number): number => splitMovesAt(input, c, moves);
  type Interval = { a: number; b: number; value: number };
  const make = (a: number, b: number): Interval => ({ a, b, value: f((a + b) / 2) });
  let open: Interval[] = [make(lo, hi)];
  let best = open[0]!.value;
  let evaluations = 1;
  const floorOf = (iv: Interval) => iv.value - (L * (iv.b - iv.a)) / 2;
  while (evaluations + 2 <= PER_HOST_EVALUATIONS) {
    // Split the interval with the lowest floor: the one that could still hide the minimum.
    let k = 0;
    for (let i = 1; i < open.length; i++) if (floorOf(open[i]!) < floorOf(open[k]!)) k = i;
    const iv = open[k]!;
    if (floorOf(iv) >= best * 0.98) break;
    const m = (iv.a + iv.b) / 2;
    const left = make(iv.a, m);
    const right = make(m, iv.b);
    evaluations += 2;
    best = Math.min(best, left.value, right.value);
    open.splice(k, 1, left, right);
    open = open.filter((x) => floorOf(x) < best);
    if (open.length === 0) return Math.max(0, best * (1 - 1e-9));
  }
  let floor = best;
  for (const iv of open) floor = Math.min(floor, floorOf(iv));
  return Math.max(0, floor);
}

/**
 * The least sum of squared deviations from c when the moves out of hosts above c and into
 * hosts below c are split over the hosts at best (greedy on falling per-move gains).
 */
function splitMovesAt(input: DimensionInput, c: number, moves: number): number {
  const { u, hostOut, phys, loads } = input;
  let ss = 0;
  // Per host: deviation left and the next move's gain; the N largest gains win on each side.
  const dev = new Float64Array(u.length);
  const used = new Int32Array(u.length);
  const gainOut = (i: number): number => {
    const share = hostOut[i]![used[i]!];
    if (share === undefined) return 0;
    const d = dev[i]!;
    const next = Math.max(0, d - share);
    return d * d - next * next;
  };
  const gainIn = (i: number): number => {
    const l = loads[used[i]!];
    if (l === undefined || !(phys[i]! > 0)) return 0;
    const d = dev[i]!;
    const next = Math.max(0, d - l / phys[i]!);
    return d * d - next * next;
  };
  const first = new Float64Array(u.length);
  for (const side of [1, -1] as const) {
    const heap = new GainHeap();
    const gain = side === 1 ? gainOut : gainIn;
    let candidates = 0;
    for (let i = 0; i < u.length; i++) {
      first[i] = 0;
      const d = side * (u[i]! - c);
      if (d <= 0) continue;
      dev[i] = d;
      used[i] = 0;
      ss += d * d;
      first[i] = gain(i);
      if (first[i]! > 0) candidates++;
    }
    // A host whose first move is not among the N best first moves gets no move at all (N
    // hosts have a better one each), so only those enter the heap.
    let threshold = 0;
    if (candidates > moves && moves > 0) threshold = Float64Array.from(first).sort()[u.length - moves]!;
    for (let i = 0; i < u.length; i++) if (first[i]! > 0 && first[i]! >= threshold) heap.push(i, first[i]!);
    for (let k = 0; k < moves && heap.size > 0; k++) {
      const { host, gain: g } = heap.pop();
      ss -= g;
      const step = side === 1 ? hostOut[host]![used[host]!]! : loads[used[host]!]! / phys[host]!;
      dev[host] = Math.max(0, dev[host]! - step);
      used[host]!++;
      const next = gain(host);
      if (next > 0) heap.push(host, next);
    }
  }
  return Math.max(0, ss);
}

/** A max-heap of (host, gain). */
class GainHeap {
  private readonly hosts: number[] = [];
  private readonly gains: number[] = [];
  get size(): number {
    return this.hosts.length;
  }
  push(host: number, gain: number): void {
    const { hosts, gains } = this;
    let i = hosts.length;
    hosts.push(host);
    gains.push(gain);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (gains[p]! >= gains[i]!) break;
      [hosts[p], hosts[i]] = [hosts[i]!, hosts[p]!];
      [gains[p], gains[i]] = [gains[i]!, gains[p]!];
      i = p;
    }
  }
  pop(): { host: number; gain: number } {
    const { hosts, gains } = this;
    const top = { host: hosts[0]!, gain: gains[0]! };
    const lastH = hosts.pop()!;
    const lastG = gains.pop()!;
    if (hosts.length > 0) {
      hosts[0] = lastH;
      gains[0] = lastG;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < hosts.length && gains[l]! > gains[m]!) m = l;
        if (r < hosts.length && gains[r]! > gains[m]!) m = r;
        if (m === i) break;
        [hosts[m], hosts[i]] = [hosts[i]!, hosts[m]!];
        [gains[m], gains[i]] = [gains[i]!, gains[m]!];
        i = m;
      }
    }
    return top;
  }
}
