// Exact solves with HiGHS (MILP) for small clusters, to show how far the greedy planner is
// from optimal. Server groups, zones and aggregates are left out: the bench's exact case has none.
import highsLoader from 'highs';
import { ClusterState } from '../dist/planner/state.js';

let highs;
async function solve(lp) {
  highs ??= await highsLoader();
  const r = highs.solve(lp, { time_limit: 120, mip_rel_gap: 0 });
  if (r.Status !== 'Optimal') return `${r.Status.toLowerCase()}`;
  return Math.round(r.ObjectiveValue);
}

function servers(state) {
  return state.servers.map((s) => ({ ...s, fixed: s.immovable !== null }));
}

/** Fewest hosts that can hold every server (capacity only; immovable servers stay put). */
export async function exactPackHosts(snapshot) {
  const state = new ClusterState(snapshot, {
    ...(await import('../dist/policy/defaults.js')).DEFAULT_POLICY,
  });
  const H = state.hosts.length;
  const S = servers(state);
  const rows = [];
  const bin = [];
  S.forEach((s, i) => {
    if (s.fixed) rows.push(` f${i}: x_${i}_${s.origin} = 1`);
    rows.push(` a${i}: ${state.hosts.map((_, h) => `x_${i}_${h}`).join(' + ')} = 1`);
    for (let h = 0; h < H; h++) bin.push(`x_${i}_${h}`);
  });
  for (let h = 0; h < H; h++) {
    for (const r of [0, 1]) {
      const cap = state.hosts[h].cap[r];
      rows.push(
        ` c${h}_${r}: ${S.map((s, i) => `${s.alloc[r]} x_${i}_${h}`).join(' + ')} - ${cap} y_${h} <= 0`,
      );
    }
    bin.push(`y_${h}`);
  }
  const lp = `Minimize\n obj: ${state.hosts.map((_, h) => `y_${h}`).join(' + ')}\nSubject To\n${rows.join('\n')}\nBinary\n ${bin.join(' ')}\nEnd\n`;
  return solve(lp);
}

/** Fewest migrations that bring every host within the max deviation from the mean the plan reached, per dimension. */
export async function exactSpreadMoves(snapshot, plan, policy) {
  const state = new ClusterState(snapshot, policy);
  const H = state.hosts.length;
  const S = servers(state);
  const D = policy.dimensions.length;
  const agg = plan.aggregates[0];
  const rows = [];
  const bin = [];
  // Host load not explained by its servers (hypervisor overhead) stays on the host.
  const base = state.hosts.map((_, h) =>
    policy.dimensions.map(
      (__, d) => state.load[h * D + d] - S.filter((s) => s.origin === h).reduce((t, s) => t + s.load[d], 0),
    ),
  );
  const after = planSnapshotState(snapshot, plan, policy);
  S.forEach((s, i) => {
    if (s.fixed) rows.push(` f${i}: x_${i}_${s.origin} = 1`);
    rows.push(` a${i}: ${state.hosts.map((_, h) => `x_${i}_${h}`).join(' + ')} = 1`);
    for (let h = 0; h < H; h++) bin.push(`x_${i}_${h}`);
  });
  for (let h = 0; h < H; h++) {
    for (const r of [0, 1])
      rows.push(
        ` c${h}_${r}: ${S.map((s, i) => `${s.alloc[r]} x_${i}_${h}`).join(' + ')} <= ${state.hosts[h].cap[r]}`,
      );
    for (let d = 0; d < D; d++) {
      const phys = state.hosts[h].phys[d];
      const terms = S.map((s, i) => `${(s.load[d] / phys).toFixed(9)} x_${i}_${h}`).join(' + ');
      const b = base[h][d] / phys;
      const { mean, dev } = after[d];
      rows.push(` u${h}_${d}_hi: ${terms} <= ${(mean + dev - b).toFixed(9)}`);
      rows.push(` u${h}_${d}_lo: ${terms} >= ${(mean - dev - b).toFixed(9)}`);
    }
  }
  void agg;
  const stay = S.map((s, i) => `x_${i}_${s.origin}`).join(' - ');
  const lp = `Minimize\n obj: ${S.length} - ${stay}\nSubject To\n${rows.join('\n')}\nBinary\n ${bin.join(' ')}\nEnd\n`;
  // HiGHS's LP reader wants the constant in the objective as a variable-free term; shift it out.
  return solve(lp.replace(`obj: ${S.length} - `, 'obj: - ')).then((v) =>
    typeof v === 'number' ? v + S.length : v,
  );
}

/** Mean and largest deviation of host utilization per dimension after the plan's moves. */
function planSnapshotState(snapshot, plan, policy) {
  const state = new ClusterState(snapshot, policy);
  for (const a of plan.aggregates)
    for (const m of a.moves) state.apply(state.serverById.get(m.server), state.hostByName.get(m.to));
  const hosts = state.aggregates[0].counted;
  return policy.dimensions.map((_, d) => {
    const u = hosts.map((h) => state.util(h, d));
    const mean = u.reduce((x, y) => x + y, 0) / u.length;
    return { mean, dev: Math.max(...u.map((x) => Math.abs(x - mean))) + 1e-9 };
  });
}
