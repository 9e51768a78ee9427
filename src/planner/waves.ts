// Place, then order: the chosen moves (in selection order) go into waves. A move takes the
// earliest wave where
//   - its source has an outgoing slot (max_concurrent_live_migrations) and the wave a global one,
//   - it does not run before an earlier-selected move of the same server group, and
//   - its destination has room in that wave and in every later one, counting the claims that
//     in-flight servers hold on both hosts until their wave ends.
// Selection checked each move against the state with all earlier moves completed, which is the
// state of a new last wave, so a wave always exists in that order. Placed hot spots first it
// may not (NoWaveFits).
//
// Backfill: with `backfill` finite, a move takes no wave more than that many before the latest
// wave an earlier move in the order took. The order is one of priority (step-order.ts: balance
// per GiB), and a move of low priority let into the first waves because a slot is free there
// would be paid for before the moves that buy the most; a little backfill keeps the wave count.
//
// Hot spots first: the moves `first` picks (relief of hot hosts, and mandatory moves) are placed
// before the others, so they take the earliest waves at each hot host's full outgoing
// concurrency; the others start only in the wave after the last one that relieves a hot host.
// Optional moves go one way (a receiving host never sends), so a relief move needs room that a
// later-placed move frees only where an exchange lets a host do both: the scheduler then throws
// NoWaveFits and the planner drops the optional move (finalize.ts).

import { getOrCreate } from '../util/maps.js';
import type { PlannedMove } from './context.js';
import type { ClusterState } from './state.js';

export interface ScheduledMove extends PlannedMove {
  wave: number;
  /** Selection order, to keep the relative order of a server group's moves. */
  seq: number;
  /** Selection indices of earlier-wave moves out of the destination whose room this one needs. */
  needs: number[];
}

/**
 * A move no wave has room for, given the moves placed before it. Selection order never meets
 * it (see above); hot spots first can: a relief move (or its exchange partner) placed in the
 * first pass may need room that a cool host's move, placed in the second, frees.
 */
export class NoWaveFits extends Error {
  constructor(readonly move: PlannedMove) {
    super(`wave scheduling: no wave has room for server ${move.server} on host ${move.to}`);
    this.name = 'NoWaveFits';
  }
}

export interface WaveLimits {
  perHostOutgoing: number;
  global: number;
}

export interface HotFirst {
  /** Placed in the first pass: mandatory moves and moves out of hot hosts. */
  first: (move: PlannedMove) => boolean;
  /** Moves out of hot hosts: the second pass starts after the last wave holding one. */
  relief: (move: PlannedMove) => boolean;
}

export function scheduleWaves(
  state: ClusterState,
  moves: PlannedMove[],
  limits: WaveLimits,
  hotFirst?: HotFirst,
  backfill = Number.POSITIVE_INFINITY,
): ScheduledMove[] {
  // Per wave: how many leave each host, and the hosts that receive (a host never sends and
  // receives in one wave: an operator reads a wave as load leaving some hosts for others).
  const waves: { out: Map<number, number>; into: Set<number>; total: number }[] = [];
  // Per host: net Placement change per wave: claims arriving in wave w, and releases at w's end.
  const arrive = new Map<number, Float64Array[]>();
  const leave = new Map<number, Float64Array[]>();
  const outMoves = new Map<number, { wave: number; seq: number }[]>();
  const lastWaveOfGroup = new Map<number, number>();
  const result: ScheduledMove[] = [];

  const initial = usageBeforeMoves(state, moves);
  const series = (m: Map<number, Float64Array[]>, h: number): Float64Array[] => getOrCreate(m, h, () => []);
  const at = (s: Float64Array[], w: number): Float64Array => {
    while (s.length <= w) s.push(new Float64Array(3));
    return s[w]!;
  };

  const firstPass = hotFirst ? moves.map((m) => hotFirst.first(m)) : moves.map(() => true);
  let floor = 0;
  // The latest wave any earlier move in the order took: a move starts at most `backfill` waves before it.
  let last = 0;
  const place = (move: PlannedMove, seq: number): void => {
    const s = state.servers[move.server]!;
    const limitOut = state.hosts[move.from]!.maxOutgoing || limits.perHostOutgoing;
    const group = s.group;
    let w = Math.max(
      firstPass[seq] ? 0 : floor,
      group >= 0 ? (lastWaveOfGroup.get(group) ?? 0) : 0,
      last - backfill,
    );
    // A move that would not fit from its earliest wave on needs the room earlier waves free,
    // whichever rule (a slot, a host sending and receiving) then placed it later.
    let capacityWait = !fitsFrom(w);
    for (; ; w++) {
      // Past every wave placed, only the final state is left: a move that does not fit there
      // needs room a move not placed yet frees (never a plan with a hole in it).
      if (w > waves.length + 1 && !fitsFrom(w)) throw new NoWaveFits(move);
      const wave = waves[w];
      if (wave && (wave.total >= limits.global || (wave.out.get(move.from) ?? 0) >= limitOut)) continue;
      if (wave && (wave.into.has(move.from) || wave.out.has(move.to))) continue;
      if (!fitsFrom(w)) {
        capacityWait = true;
        continue;
      }
      break;
    }
    while (waves.length <= w) waves.push({ out: new Map(), into: new Set(), total: 0 });
    const wave = waves[w]!;
    wave.total++;
    wave.into.add(move.to);
    wave.out.set(move.from, (wave.out.get(move.from) ?? 0) + 1);
    const a = at(series(arrive, move.to), w);
    const l = at(series(leave, move.from), w);
    for (let r = 0; r < 3; r++) {
      a[r]! += s.alloc[r]!;
      l[r]! += s.alloc[r]!;
    }
    getOrCreate(outMoves, move.from, () => []).push({ wave: w, seq });
    if (group >= 0) lastWaveOfGroup.set(group, w);
    const needs = capacityWait
      ? (outMoves.get(move.to) ?? []).filter((o) => o.wave < w).map((o) => o.seq)
      : [];
    result.push({ ...move, wave: w + 1, seq, needs });
    last = Math.max(last, w);
    if (hotFirst?.relief(move)) floor = Math.max(floor, w + 1);

    // Room on the destination from wave w on: base usage at each wave start plus that wave's arrivals.
    function fitsFrom(w0: number): boolean {
      const arr = arrive.get(move.to) ?? [];
      const lv = leave.get(move.to) ?? [];
      const last = Math.max(arr.length, lv.length, w0 + 1);
      for (let r = 0; r < 3; r++) {
        const cap = state.hosts[move.to]!.cap[r]!;
        if (!Number.isFinite(cap)) continue;
        let base = initial(move.to, r);
        for (let x = 0; x < last; x++) {
          const inX = arr[x]?.[r] ?? 0;
          if (x >= w0 && base + inX + s.alloc[r]! > cap + 1e-9) return false;
          base += inX - (lv[x]?.[r] ?? 0);
        }
      }
      return true;
    }
  };
  moves.forEach((move, seq) => {
    if (firstPass[seq]) place(move, seq);
  });
  moves.forEach((move, seq) => {
    if (!firstPass[seq]) place(move, seq);
  });
  return result;
}

/** The state holds usage after all moves; the schedule needs it before any. */
function usageBeforeMoves(state: ClusterState, moves: PlannedMove[]): (host: number, r: number) => number {
  const net = new Map<number, Float64Array>();
  for (const m of moves) {
    const alloc = state.servers[m.server]!.alloc;
    for (const [h, sign] of [
      [m.to, 1],
      [m.from, -1],
    ] as const) {
      const v = getOrCreate(net, h, () => new Float64Array(3));
      for (let x = 0; x < 3; x++) v[x]! += sign * alloc[x]!;
    }
  }
  return (h, r) => state.used[h * 3 + r]! - (net.get(h)?.[r] ?? 0);
}
