// The yardstick for the pack quality table: a plain greedy, written here on purpose (not product
// code). Each step looks at every host it could free (up, enabled, holding servers that may all
// move) and frees the one with the fewest servers that can be wholly placed elsewhere, each
// server (largest first) on the fullest non-empty host it fits; it stops when no host can be
// freed within the budget. Same legality as the product: zone, aggregate, Placement capacity
// (VCPU, MEMORY_MB, DISK_GB), hard server groups, empty hosts never filled, a server moves at
// most once. Returns the hosts freed after every move (index = moves made).
// `mandatory`: the product's evacuations and hard-group repairs, applied first and counted.
import { groupViolationDelta } from '../dist/planner/constraints/hard-groups.js';
import { ClusterState } from '../dist/planner/state.js';

export function plainPackGreedy(snapshot, policy, maxMoves, mandatory = []) {
  const state = new ClusterState(snapshot, policy);
  const moved = new Uint8Array(state.servers.length);
  const occupied = state.hosts.map((_, h) => state.on[h].size > 0);
  const freedNow = () => state.hosts.filter((_, h) => occupied[h] && state.on[h].size === 0).length;
  const curve = [0];
  for (const m of mandatory.slice(0, maxMoves)) {
    const s = state.serverById.get(m.server);
    state.apply(s, state.hostByName.get(m.to));
    moved[s] = 1;
    curve.push(freedNow());
  }
  const drained = new Set();
  for (;;) {
    const left = maxMoves - (curve.length - 1);
    let best = null;
    for (const agg of state.aggregates) {
      for (const h of agg.hosts) {
        const servers = [...state.on[h]];
        if (!state.hosts[h].usable || servers.length === 0 || servers.length > left) continue;
        if (best && servers.length >= best.placements.length) continue;
        if (!servers.every((s) => state.servers[s].immovable === null && !moved[s])) continue;
        const placements = placeAll(state, agg.hosts, h, servers, drained, policy.pack.maxFill);
        if (placements) best = { h, placements };
      }
    }
    if (!best) break;
    drained.add(best.h);
    for (const [s, to] of best.placements) {
      state.apply(s, to);
      moved[s] = 1;
      curve.push(freedNow());
    }
  }
  return curve;
}

/** Places every server of `from` (largest first, best fit), or returns null, leaving the state as it was. */
function placeAll(state, hosts, from, servers, drained, maxFill) {
  const order = [...servers].sort((a, b) => bulk(state, b) - bulk(state, a) || a - b);
  const placements = [];
  for (const s of order) {
    const to = bestFit(state, s, hosts, from, drained, maxFill);
    if (to < 0) break;
    state.apply(s, to);
    placements.push([s, to]);
  }
  state.undo(placements.length);
  return placements.length === order.length ? placements : null;
}

function bestFit(state, s, hosts, from, drained, maxFill) {
  const sv = state.servers[s];
  const group = sv.group >= 0 ? state.groups[sv.group] : null;
  let best = -1;
  let bestFill = -1;
  for (const to of hosts) {
    if (to === from || drained.has(to) || !state.hosts[to].usable || state.on[to].size === 0) continue;
    if (state.hosts[to].az !== state.hosts[from].az) continue;
    let fits = true;
    let fill = 0;
    for (let r = 0; r < 3; r++) {
      if (sv.alloc[r] > state.free(to, r) + 1e-9) fits = false;
    }
    for (let r = 0; r < 2; r++) {
      const cap = state.hosts[to].cap[r];
      if (!Number.isFinite(cap) || cap <= 0) continue;
      const share = (state.used[to * 3 + r] + sv.alloc[r]) / cap;
      if (share > maxFill + 1e-9) fits = false;
      fill = Math.max(fill, share);
    }
    if (!fits || fill <= bestFill) continue;
    if (group && (group.policy === 'affinity' || group.policy === 'anti-affinity')) {
      if (groupViolationDelta(state, group, from, to) > 0) continue;
    }
    best = to;
    bestFill = fill;
  }
  return best;
}

function bulk(state, s) {
  const sv = state.servers[s];
  return sv.alloc[1] + sv.alloc[0] * 4096;
}
