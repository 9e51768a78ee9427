// The order in which an operator meets the balance moves. Selection picks the moves for the
// balance they buy at the end of the plan; the operator pays for them one wave after another,
// and may stop at any wave (or the control loop re-plan). So the moves already chosen are put
// in the order of the most balance bought per GiB of memory copied: at every point of the plan
// the balance reached has cost as little memory as these moves allow. The set of moves, and so
// the plan's end state, does not change.
//
// Mandatory moves keep their selection order and come first; then the moves that relieve hot
// hosts (hot spots first, waves.ts), then the rest, each group in this order. A declared
// exchange is one unit (its halves are worth something only together). Each move must be legal
// after the ones before it: a unit that needs room a later one frees waits for it; if the order
// cannot be completed so, the selection order stays.

import type { Policy } from '../policy/types.js';
import { Heap } from '../util/heap.js';
import { getOrCreate } from '../util/maps.js';
import { firstRejection } from './constraints/index.js';
import type { PlannedMove } from './context.js';
import { softGroupPenaltyDelta } from './objectives/move-score.js';
import type { ClusterState } from './state.js';

interface Unit {
  moves: PlannedMove[];
  /** GiB of memory the unit copies. */
  gib: number;
  /** Position in selection order, the tie-break that keeps the result deterministic. */
  seq: number;
}

/** A unit in the heap at its last value (+Infinity before the first); stale once pushed again or taken. */
interface Entry {
  unit: Unit;
  value: number;
  version: number;
}

/**
 * Returns `moves` (legal in this order, as finalize.ts's legalInOrder leaves them) reordered as
 * above. `state` holds none of the aggregate's moves on entry and on return.
 */
export function orderByBalancePerGiB(
  state: ClusterState,
  policy: Policy,
  agg: number,
  moves: readonly PlannedMove[],
  mandatory: (m: PlannedMove) => boolean,
  relief: (m: PlannedMove) => boolean,
): PlannedMove[] {
  const n = Math.max(1, state.aggregates[agg]!.counted.length);
  const head: PlannedMove[] = [];
  const passes: Unit[][] = [[], []];
  for (let i = 0; i < moves.length; i++) {
    const m = moves[i]!;
    if (mandatory(m)) {
      head.push(m);
      continue;
    }
    const unit = m.exchangeWith && moves[i + 1] === m.exchangeWith ? [m, moves[++i]!] : [m];
    const gib = unit.reduce((s, u) => s + state.servers[u.server]!.ramMB / 1024, 0);
    passes[unit.some(relief) ? 0 : 1]!.push({
      moves: unit,
      gib: Math.max(gib, 1 / 1024),
      seq: i,
    });
  }
  const out: PlannedMove[] = [];
  const apply = (m: PlannedMove) => {
    state.apply(m.server, m.to);
    out.push(m);
  };
  let ok = true;
  for (const m of head) {
    if (firstRejection(state, m.server, m.to) !== null) ok = false;
    apply(m);
  }
  for (const units of passes) {
    if (!ok) break;
    ok = orderPass(state, policy, agg, n, units, apply);
  }
  state.undo(out.length);
  return ok ? out : [...moves];
}

/**
 * Lazy best-first: a unit's value is taken again when it reaches the top. False on a dead end.
 * Lazy evaluation alone assumes a unit is never worth more later than when last weighed, which
 * fails for the units on the hosts a move just changed: an exchange that costs balance at the
 * start may buy the most per GiB once other moves have emptied one of its hosts, and would
 * otherwise wait at the bottom of the heap until the end of the plan. So after each unit, those
 * sharing a host with it are weighed again before the next is taken.
 */
function orderPass(
  state: ClusterState,
  policy: Policy,
  agg: number,
  n: number,
  units: Unit[],
  apply: (m: PlannedMove) => void,
): boolean {
  // Only a unit's latest entry counts (-1: taken), so weighing a unit again costs one push.
  const version = new Map<Unit, number>(units.map((u) => [u, 0]));
  const onHost = new Map<number, Unit[]>();
  for (const u of units) for (const h of hostsOf(u)) getOrCreate(onHost, h, () => []).push(u);
  const heap = new Heap(
    before,
    units.map((unit) => ({ unit, value: Infinity, version: 0 })),
  );
  const live = (e: Entry) => version.get(e.unit) === e.version;
  const again = (u: Unit) => {
    const v = version.get(u)! + 1;
    version.set(u, v);
    heap.push({ unit: u, value: Infinity, version: v });
  };
  let blocked: Unit[] = [];
  for (;;) {
    const top = heap.pop();
    if (top === undefined) return blocked.length === 0;
    if (!live(top)) continue;
    const value = worthPerGiB(state, policy, agg, n, top.unit);
    if (value === null) {
      blocked.push(top.unit);
      continue;
    }
    top.value = value;
    while (heap.size > 0 && !live(heap.peek()!)) heap.pop();
    const next = heap.peek();
    if (next !== undefined && before(next, top)) {
      heap.push(top);
      continue;
    }
    for (const m of top.unit.moves) apply(m);
    version.set(top.unit, -1);
    const waiting = new Set(blocked);
    const touched = new Set<Unit>();
    for (const h of hostsOf(top.unit)) for (const u of onHost.get(h)!) touched.add(u);
    for (const u of touched) if (version.get(u)! >= 0 && !waiting.has(u)) again(u);
    // Room may have opened for a waiting unit: each is weighed again.
    for (const u of blocked) again(u);
    blocked = [];
  }
}

function hostsOf(unit: Unit): Set<number> {
  return new Set(unit.moves.flatMap((m) => [m.from, m.to]));
}

/** Balance bought (objective units: imbalance × hosts, less soft-group penalty) per GiB; null if illegal now. */
function worthPerGiB(state: ClusterState, policy: Policy, agg: number, n: number, unit: Unit): number | null {
  const start = state.imbalance(agg);
  let soft = 0;
  let applied = 0;
  let legal = true;
  for (const m of unit.moves) {
    if (state.at[m.server] !== m.from || firstRejection(state, m.server, m.to) !== null) {
      legal = false;
      break;
    }
    soft += softGroupPenaltyDelta(state, policy, m.server, m.to);
    state.apply(m.server, m.to);
    applied++;
  }
  const end = state.imbalance(agg);
  state.undo(applied);
  return legal ? ((start - end) * n - soft) / unit.gib : null;
}

/** True when a goes before b: higher value, then selection order. */
function before(a: Entry, b: Entry): boolean {
  return a.value > b.value || (a.value === b.value && a.unit.seq < b.unit.seq);
}
