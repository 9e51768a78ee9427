// Reasons tell the truth in the order the operator reads them: what a spread or soft-group reason
// quotes of its hosts (their utilization, hot or with room, the imbalance before and after) is
// what the cluster shows when the moves before it in step order have run, even though phases
// chose the moves in another order, the improvement stage changed them and waves reordered them.
import { describe, expect, it } from 'vitest';
import { hostUtil } from '../../src/planner/describe.js';
import { planSnapshot } from '../../src/planner/index.js';
import { ClusterState } from '../../src/planner/state.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { policyWith } from '../fixtures/state.js';

describe('reasons in step order', () => {
  it('quote the utilization, the hot/room words and the imbalance of the state each step starts from', () => {
    const snapshot = synthesizeSnapshot({ hosts: 40, servers: 900, groups: 20, seed: 3, aggregates: 2 });
    const policy = policyWith({ budget: { maxMoves: 120 } });
    const plan = planSnapshot(snapshot, policy);
    const state = new ClusterState(snapshot, policy);
    let checked = 0;
    let plain = 0;
    for (const agg of plan.aggregates) {
      const a = state.aggregates.findIndex((x) => x.name === agg.name);
      for (const m of agg.moves) {
        const s = state.serverById.get(m.server)!;
        const from = state.hostByName.get(m.from)!;
        const to = state.hostByName.get(m.to)!;
        const fromUtil = hostUtil(state, from);
        const toUtil = hostUtil(state, to);
        const before = state.imbalance(a);
        const soft = `moving from ${m.from} (${fromUtil}) to ${m.to} (${toUtil})`;
        if (m.phase === 'spread') {
          // The source's words, true of this state: "runs hot" only at the hot threshold,
          // else how far above the mean, else a plain rebalancing.
          const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          const hot = new RegExp(`${esc(m.from)} runs hot \\(${esc(fromUtil)}\\)`);
          const above = new RegExp(
            `${esc(m.from)} is (\\d+) points above the aggregate's (\\w+) mean \\(${esc(fromUtil)}\\)`,
          );
          const reb = `rebalancing from ${m.from} (${fromUtil}) to ${m.to} (${toUtil})`;
          const D = state.D;
          const n = state.aggregates[a]!.counted.length;
          if (hot.test(m.reason)) {
            let some = false;
            for (let d = 0; d < D; d++) if (state.util(from, d) >= policy.hotThreshold) some = true;
            expect(some, `step ${m.step}: ${m.reason}`).toBe(true);
          } else if (above.test(m.reason)) {
            const [, points, dim] = above.exec(m.reason)!;
            const d = state.dims.findIndex((x) => x.name === dim);
            const mean = state.s1[a * D + d]! / n;
            expect(Math.round((state.util(from, d) - mean) * 100), `step ${m.step}: ${m.reason}`).toBe(
              Number(points),
            );
          } else {
            expect(m.reason.includes(reb), `step ${m.step}: ${m.reason}`).toBe(true);
            plain++;
          }
          if (m.reason.includes(`${m.to} has room (${toUtil})`)) {
            let some = false;
            for (let d = 0; d < D; d++) {
              const mean = state.s1[a * D + d]! / n;
              if (state.servers[s]!.load[d]! > 0 && state.util(to, d) < mean) some = true;
            }
            expect(some, `step ${m.step}: ${m.reason}`).toBe(true);
          }
          checked++;
        }
        if (m.softGroup) {
          expect(m.reason, `step ${m.step}`).toContain(soft);
          checked++;
        }
        state.apply(s, to);
        const quoted = /imbalance (\d+\.\d+) -> (\d+\.\d+)/.exec(m.reason);
        if (quoted && (m.phase === 'spread' || m.softGroup)) {
          const digits = quoted[1]!.split('.')[1]!.length;
          expect(quoted[1], `step ${m.step}`).toBe(before.toFixed(digits));
          expect(quoted[2], `step ${m.step}`).toBe(state.imbalance(a).toFixed(digits));
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    console.log(`reasons checked: ${checked} (${plain} worded as plain rebalancing)`);
  });
});
