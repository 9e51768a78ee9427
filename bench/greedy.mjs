// The yardstick for the quality table: a plain best-improvement greedy, written here on purpose
// (not product code). Each step scores every movable server on every legal destination with
// the product's objective (imbalance reduction × hosts − soft-group penalty − migration cost),
// takes the best, and stops when no move pays. Same legality as the product: zone, aggregate,
// Placement capacity (VCPU, MEMORY_MB, DISK_GB), hard server groups, a server moves at most once.
// Returns the imbalance (mean over aggregates, as the bench prints it) after every move.
// `mandatory`: the product's evacuations and hard-group repairs, applied first and counted.
// `oneWay`: the product's one-way rule (constraints/one-way.ts) for the greedy's own moves: a
// host that received sends nothing, one that sent receives nothing (the mandatory moves count,
// as in the product). The plain greedy sends load back and forth; this one is the fair
// yardstick for plans an operator approves.
import { groupViolationDelta } from '../dist/planner/constraints/hard-groups.js';
import { ClusterState } from '../dist/planner/state.js';

export function plainGreedy(snapshot, policy, maxMoves, mandatory = [], options = {}) {
  return greedyRun(snapshot, policy, maxMoves, mandatory, options).curve;
}

/**
 * As plainGreedy, with what each prefix of the plan costs: `gib[k]` the memory copied (RAM GiB)
 * and `seconds[k]` the predicted migration seconds (the cost model's) of its first k moves.
 */
export function greedyRun(snapshot, policy, maxMoves, mandatory = [], { oneWay = false } = {}) {
  const state = new ClusterState(snapshot, policy);
  const D = state.D;
  const floor = Math.max(policy.minGain, 1e-9);
  const sums = new Float64Array(2 * D);
  const curve = [meanImbalance(state)];
  const moved = new Uint8Array(state.servers.length);
  const gib = [0];
  const seconds = [0];
  const moves = [];
  const paid = (s) => {
    gib.push(gib[gib.length - 1] + state.servers[s].ramMB / 1024);
    seconds.push(seconds[seconds.length - 1] + state.servers[s].estSeconds);
  };
  // Evacuations and hard server-group repairs are not the greedy's to choose: both start with them.
  for (const m of mandatory.slice(0, maxMoves)) {
    const s = state.serverById.get(m.server);
    state.apply(s, state.hostByName.get(m.to));
    moved[s] = 1;
    curve.push(meanImbalance(state));
    paid(s);
  }
  for (let step = curve.length - 1; step < maxMoves; step++) {
    let best = null;
    for (const agg of state.aggregates) {
      const n = agg.counted.length;
      if (n < 2) continue;
      const current = state.imbalance(agg.index);
      if (current <= policy.spread.targetImbalance) continue;
      for (const from of agg.hosts) {
        if (oneWay && state.received[from] > 0) continue;
        for (const s of state.on[from]) {
          const sv = state.servers[s];
          if (sv.immovable !== null || moved[s]) continue;
          const group = sv.group >= 0 ? state.groups[sv.group] : null;
          const cost = policy.migrationCostPerSecond * sv.estSeconds;
          state.sumsWithoutServer(s, sums);
          for (const to of agg.counted) {
            if (to === from || state.hosts[to].az !== state.hosts[from].az) continue;
            if (oneWay && state.sent[to] > 0) continue;
            let fits = true;
            for (let r = 0; r < 3; r++) if (sv.alloc[r] > state.free(to, r) + 1e-9) fits = false;
            if (!fits) continue;
            let soft = 0;
            if (group) {
              const delta = groupViolationDelta(state, group, from, to);
              if (group.policy === 'affinity' || group.policy === 'anti-affinity') {
                if (delta > 0) continue;
              } else soft = policy.softGroupPenalty * delta;
            }
            const net = (current - state.imbalanceWithArrival(sums, s, to)) * n - soft - cost;
            if (net >= floor && (best === null || net > best.net)) best = { s, to, net };
          }
        }
      }
    }
    if (best === null) break;
    moves.push({
      server: state.servers[best.s].id,
      from: state.hosts[state.at[best.s]].name,
      to: state.hosts[best.to].name,
    });
    state.apply(best.s, best.to);
    moved[best.s] = 1;
    curve.push(meanImbalance(state));
    paid(best.s);
  }
  return { curve, gib, seconds, moves };
}

export function meanImbalance(state) {
  let sum = 0;
  let n = 0;
  for (const a of state.aggregates) {
    sum += Math.round(state.imbalance(a.index) * 1e6) / 1e6;
    n++;
  }
  return n > 0 ? sum / n : 0;
}
