// Phase 3 (pack): free whole hosts. A host is drained only when every one of its servers can
// leave (planned as a unit: all its moves or none), each server to the fullest host that still
// fits (best fit) below pack.maxFill. Two drain orders are tried per aggregate (emptiest hosts
// first; fewest servers first, which frees more hosts per migration when the budget binds) and
// the one that frees more hosts, then with fewer moves, is kept. Empty hosts are never filled:
// they are the spares. Hosts that can never be drained in this plan (they hold a server that
// cannot move, or one this plan already moved there) are filled first: a server placed on a host
// that could still be freed makes that host one this plan can no longer free.
//
// A host that holds a server that cannot move (pinned) can never be freed by a plan. When the
// pinned servers take little of it (pack.partialDrainMaxPinned), the budget left after the whole
// drains partly drains it: every other server leaves, again as a unit, so the host is freed the
// day its pinned servers go (shelved, resized, deleted) and meanwhile offers its room whole to a
// large flavor. Whole drains come first: they free a host now, partial drains only prepare one.

import { DESTINATION_CONSTRAINTS, firstRejection } from '../constraints/index.js';
import type { PlanContext, PlannedMove } from '../context.js';
import type { ClusterState, RcIndex } from '../state.js';
import { tightness } from './destination-search.js';

/** Hosts tried per server that fits nowhere, and their servers tried on each, to make room. */
const ROOM_HOSTS = 8;
const ROOM_SERVERS = 4;
/** Make-room searches per drain pass, as host visits: each search visits the aggregate's hosts about 33 times. */
const ROOM_WORK = 4e6;

/** Drain orders tried per aggregate; the one that frees more hosts (then with fewer moves) is kept. */
const ORDERS: ReadonlyArray<(state: ClusterState, a: number, b: number) => number> = [
  // Emptiest first: frees the most hosts when the budget is not what stops it.
  (state, a, b) => fill(state, a) - fill(state, b),
  // Fewest servers first: the most hosts freed per migration when the budget binds.
  (state, a, b) => state.on[a]!.size - state.on[b]!.size || fill(state, a) - fill(state, b),
];

export function pack(ctx: PlanContext): void {
  const { state } = ctx;
  for (const agg of state.aggregates) {
    const start = ctx.moves[agg.index]!.length;
    let best = -1;
    let bestFreed = -1;
    let bestMoves = 0;
    ORDERS.forEach((order, i) => {
      const freed = drainHosts(ctx, agg.index, order);
      const moves = ctx.moves[agg.index]!.length - start;
      if (freed > bestFreed || (freed === bestFreed && moves < bestMoves)) {
        best = i;
        bestFreed = freed;
        bestMoves = moves;
      }
      ctx.unrecord(agg.index, moves);
    });
    if (best >= 0) drainHosts(ctx, agg.index, ORDERS[best]!);
  }
}

/**
 * After pack: drains pinned hosts of their movable servers, fewest movable servers first, and
 * returns per aggregate the hosts left holding only servers that cannot move.
 */
export function drainPinnedHosts(ctx: PlanContext): number[][] {
  const { state, policy } = ctx;
  return state.aggregates.map((agg) => {
    if (policy.pack.partialDrainMaxPinned <= 0) return [];
    const hosts = agg.hosts;
    // Hosts emptied by the whole drains stay empty; hosts partly drained take nothing back.
    const closed = new Set(hosts.filter((h) => state.on[h]!.size === 0));
    const kept = keptHosts(ctx, hosts);
    const room = roomWork(hosts);
    const candidates = hosts
      .filter((h) => state.hosts[h]!.usable && lightlyPinned(ctx, h))
      .map((h) => {
        const on = [...state.on[h]!];
        const pinned = on.filter((s) => state.servers[s]!.immovable !== null).length;
        return { h, pinned, movable: on.filter((s) => ctx.movable(s)).length, share: pinnedShare(state, h) };
      })
      .filter((c) => c.pinned > 0 && c.movable > 0)
      .sort((a, b) => a.movable - b.movable || a.share - b.share || a.h - b.h);
    const done: number[] = [];
    for (const { h } of candidates) {
      // A server moved here by this plan (before, or by an earlier partial drain since the list
      // was made) cannot leave again: the host can no longer be reduced to its pinned servers.
      const on = [...state.on[h]!];
      if (!on.every((s) => pinnedOrMovable(ctx, s))) continue;
      const movable = on.filter((s) => ctx.movable(s));
      if (ctx.budgetLeft < movable.length) continue;
      const pinned = on.filter((s) => !ctx.movable(s));
      const why = pinned
        .slice(0, 2)
        .map((s) => `${state.servers[s]!.name || state.servers[s]!.id}: ${state.servers[s]!.immovable}`);
      const reason = `reducing ${state.hosts[h]!.name} to the ${pinned.length} server(s) that cannot move (${why.join('; ')}${pinned.length > 2 ? '; …' : ''}), ${Math.round(pinnedShare(state, h) * 100)}% of it: freed once they go`;
      closed.add(h);
      movable.sort((a, b) => bulk(state, b) - bulk(state, a) || a - b);
      const placed = placeAll(ctx, agg.index, movable, hosts, closed, kept, reason, room);
      if (placed) done.push(h);
      else closed.delete(h);
    }
    return done;
  });
}

/** Pinned lightly enough to be partly drained (pack.partialDrainMaxPinned; 0: never). */
function lightlyPinned(ctx: PlanContext, host: number): boolean {
  const limit = ctx.policy.pack.partialDrainMaxPinned;
  return limit > 0 && pinnedShare(ctx.state, host) <= limit + 1e-9;
}

function pinnedOrMovable(ctx: PlanContext, server: number): boolean {
  return ctx.state.servers[server]!.immovable !== null || ctx.movable(server);
}

/** Largest share of VCPU or memory capacity the host's unmovable servers take. */
function pinnedShare(state: ClusterState, host: number): number {
  let share = 0;
  for (let r = 0; r < 2; r++) {
    const cap = state.hosts[host]!.cap[r]!;
    if (!Number.isFinite(cap) || cap <= 0) continue;
    let used = 0;
    for (const s of state.on[host]!)
      if (state.servers[s]!.immovable !== null) used += state.servers[s]!.alloc[r]!;
    share = Math.max(share, used / cap);
  }
  return share;
}

/** Drains whole hosts of one aggregate in the given order; returns how many it freed. */
function drainHosts(
  ctx: PlanContext,
  agg: number,
  order: (state: ClusterState, a: number, b: number) => number,
): number {
  const { state } = ctx;
  const hosts = state.aggregates[agg]!.hosts;
  const drained = new Set<number>();
  const kept = keptHosts(ctx, hosts);
  const room = roomWork(hosts);
  const candidates = hosts
    .filter((h) => state.hosts[h]!.usable && state.on[h]!.size > 0)
    .filter((h) => [...state.on[h]!].every((s) => ctx.movable(s)))
    .sort((a, b) => order(state, a, b) || a - b);
  for (const host of candidates) {
    if (ctx.budgetLeft <= 0) break;
    const servers = [...state.on[host]!];
    if (servers.length > ctx.budgetLeft || !servers.every((s) => ctx.movable(s))) continue;
    servers.sort((a, b) => bulk(state, b) - bulk(state, a) || a - b);
    const reason = `freeing ${state.hosts[host]!.name} (${servers.length} servers, ${Math.round(fill(state, host) * 100)}% allocated before)`;
    drained.add(host);
    if (!placeAll(ctx, agg, servers, hosts, drained, kept, reason, room)) {
      drained.delete(host);
      // Tried and not freed: as good a destination as a host that never could be.
      kept[host] = 2;
    }
  }
  return drained.size;
}

/**
 * How little draining a host could still buy, as destination preference: 0 it could be freed,
 * 1 it could be partly drained (pinned, but lightly), 2 nothing (a server this plan moved there,
 * or pinned by more than pack.partialDrainMaxPinned).
 */
function keptHosts(ctx: PlanContext, hosts: number[]): Uint8Array {
  const { state } = ctx;
  const kept = new Uint8Array(state.hosts.length);
  for (const h of hosts) {
    for (const s of state.on[h]!) {
      if (state.servers[s]!.immovable === null && !ctx.movable(s)) kept[h] = 2;
      else if (!ctx.movable(s) && kept[h] === 0) kept[h] = 1;
    }
    if (kept[h] === 1 && !lightlyPinned(ctx, h)) kept[h] = 2;
  }
  return kept;
}

/**
 * Records a move for every server (in order) to its best fit, or none of them: returns whether
 * all found a place. `kept` follows the hosts that receive a server (it cannot move again).
 */
function placeAll(
  ctx: PlanContext,
  agg: number,
  servers: number[],
  hosts: number[],
  closed: Set<number>,
  kept: Uint8Array,
  reason: string,
  room: { searches: number } | null,
): boolean {
  // Pairs (host, its former preference), to restore when the unit is taken back.
  const newlyKept: number[] = [];
  const receive = (to: number) => {
    if (kept[to] === 2) return;
    newlyKept.push(to, kept[to]!);
    kept[to] = 2;
  };
  let recorded = 0;
  let placed = 0;
  let roomMove: PlannedMove | null = null;
  for (const [i, s] of servers.entries()) {
    let to = bestFit(ctx, s, hosts, closed, kept);
    if (to < 0 && room !== null && room.searches > 0 && ctx.budgetLeft > servers.length - i) {
      room.searches--;
      const made = makeRoom(ctx, s, hosts, closed, kept, reason);
      if (made !== null) {
        recorded++;
        receive(made.to);
        to = made.host;
        roomMove = made.move;
      }
    }
    if (to < 0) break;
    const moved = ctx.record(s, to, 'pack', reason);
    if (roomMove !== null) roomMove.makesRoomFor = moved;
    roomMove = null;
    receive(to);
    recorded++;
    placed++;
  }
  if (placed === servers.length) return true;
  ctx.unrecord(agg, recorded);
  for (let i = newlyKept.length - 2; i >= 0; i -= 2) kept[newlyKept[i]!] = newlyKept[i + 1]!;
  return false;
}

/**
 * For a server that fits on no host: a host where it would, once one of that host's smaller
 * servers moves to a third host. Hosts short of the least room are tried first (those that can
 * never be drained before the others), each with its smallest servers that would make the room.
 * Records that move and returns both hosts, or null with nothing recorded.
 */
function makeRoom(
  ctx: PlanContext,
  server: number,
  hosts: number[],
  closed: Set<number>,
  kept: Uint8Array,
  why: string,
): { host: number; to: number; move: PlannedMove } | null {
  const { state, policy } = ctx;
  const s = state.servers[server]!;
  const shortOf = (h: number, r: number): number =>
    Math.max(
      s.alloc[r]! - state.free(h, r as RcIndex),
      r < 2 ? state.used[h * 3 + r]! + s.alloc[r]! - state.hosts[h]!.cap[r]! * policy.pack.maxFill : 0,
    );
  const options: Array<{ h: number; short: number[]; key: number }> = [];
  for (const h of hosts) {
    if (closed.has(h) || state.on[h]!.size === 0 || !state.hosts[h]!.usable) continue;
    if (DESTINATION_CONSTRAINTS.some((c) => c.name !== 'capacity' && c.check(state, server, h) !== null))
      continue;
    const short = [0, 1, 2].map((r) => shortOf(h, r));
    let key = 0;
    for (let r = 0; r < 2; r++) {
      const cap = state.hosts[h]!.cap[r]!;
      if (short[r]! > 0) key += Number.isFinite(cap) && cap > 0 ? short[r]! / cap : 1;
    }
    options.push({ h, short, key: key - 10 * kept[h]! });
  }
  options.sort((a, b) => a.key - b.key || a.h - b.h);
  for (const { h, short } of options.slice(0, ROOM_HOSTS)) {
    const movers = [...state.on[h]!]
      .filter(
        (t) =>
          ctx.movable(t) &&
          [0, 1, 2].every((r) => short[r]! <= 1e-9 || state.servers[t]!.alloc[r]! >= short[r]! - 1e-9),
      )
      .sort((a, b) => bulk(state, a) - bulk(state, b) || a - b)
      .slice(0, ROOM_SERVERS);
    closed.add(h);
    try {
      for (const t of movers) {
        const to = bestFit(ctx, t, hosts, closed, kept);
        if (to < 0) continue;
        const move = ctx.record(
          t,
          to,
          'pack',
          `making room on ${state.hosts[h]!.name} for ${s.name || s.id}, ${why}`,
        );
        if (packable(ctx, server, h)) return { host: h, to, move };
        ctx.unrecord(state.hosts[h]!.aggregate, 1);
      }
    } finally {
      closed.delete(h);
    }
  }
  return null;
}

/** The make-room searches one drain pass may make (ROOM_WORK host visits). */
function roomWork(hosts: readonly number[]): { searches: number } {
  return { searches: Math.max(1, Math.floor(ROOM_WORK / (33 * Math.max(1, hosts.length)))) };
}

/** Whether the server may go to the host: below pack.maxFill of VCPU and memory, and legal. */
function packable(ctx: PlanContext, server: number, to: number): boolean {
  const { state, policy } = ctx;
  const s = state.servers[server]!;
  for (let r = 0; r < 2; r++) {
    if (state.used[to * 3 + r]! + s.alloc[r]! > state.hosts[to]!.cap[r]! * policy.pack.maxFill + 1e-9)
      return false;
  }
  return firstRejection(state, server, to) === null;
}

/** The fullest host the server fits below pack.maxFill, hosts that can never be drained first. */
function bestFit(
  ctx: PlanContext,
  server: number,
  hosts: number[],
  drained: Set<number>,
  kept: Uint8Array,
): number {
  const { state, policy } = ctx;
  let best = -1;
  let bestKey = Number.NEGATIVE_INFINITY;
  for (const to of hosts) {
    if (drained.has(to) || state.on[to]!.size === 0 || !state.hosts[to]!.usable) continue;
    const fill = tightness(ctx, server, to);
    // Past any host that could still be freed ranks every host that never can.
    const key = fill + 2 * kept[to]!;
    if (fill > policy.pack.maxFill + 1e-9 || key <= bestKey || !packable(ctx, server, to)) continue;
    best = to;
    bestKey = key;
  }
  return best;
}

/** Largest share of VCPU or MEMORY_MB capacity in use. */
export function fill(state: ClusterState, host: number): number {
  let share = 0;
  for (let r = 0; r < 2; r++) {
    const cap = state.hosts[host]!.cap[r]!;
    if (Number.isFinite(cap) && cap > 0) share = Math.max(share, state.used[host * 3 + r]! / cap);
  }
  return share;
}

function bulk(state: ClusterState, server: number): number {
  const s = state.servers[server]!;
  return s.alloc[1]! + s.alloc[0]! * 4096;
}
