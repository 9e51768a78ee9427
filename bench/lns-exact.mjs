// An experiment, not product code: how far can exact re-placement go below the product's plan
// at a given number of moves? Large-neighbourhood search from the product's plan: a few hosts at a
// time (half among the hottest, half among the coolest), every movable server on them re-placed
// among them by an exact MILP (HiGHS; squares by tangent cuts, each dimension weighted by the
// imbalance's slope, a move priced at `mu` of imbalance), kept when the true imbalance plus
// mu·moves falls or, with a target, when moves fall with the imbalance at or below it.
// Looser than the product on purpose: the order of steps is ignored (only the final placement
// must fit Placement's capacity), and grouped servers stay where they are.
//
//   node bench/lns-exact.mjs [moves=180] [seconds=120] [mu=0.0002] [hosts=4] [target] [case=synth 100]
//
// target: an imbalance to stay at or below while moves fall, or `greedy` for the plain greedy's
// 200-move imbalance (bench/greedy.mjs, the quality table's yardstick). case: a part of the name
// of one of the quality table's cases (bench/quality.mjs); with several aggregates, each
// sub-problem is drawn in one of them and the imbalance is their mean, as the table prints it.
import { fileURLToPath } from 'node:url';
import highsLoader from 'highs';
import { planSnapshot } from '../dist/planner/index.js';
import { ClusterState } from '../dist/planner/state.js';
import { plainGreedy } from './greedy.mjs';
import { mandatoryMoves, qualityCases, qualityPolicy } from './quality.mjs';

const [K, SECONDS, MU, SUB] = [180, 120, 0.0002, 4].map((d, i) =>
  process.argv[i + 2] === undefined ? d : Number(process.argv[i + 2]),
);
const CASE = process.argv[7] ?? 'synth 100';
const picked = (await qualityCases(fileURLToPath(new URL('..', import.meta.url)))).find((c) =>
  c.name.includes(CASE),
);
if (!picked) throw new Error(`no quality case matches "${CASE}"`);
const snapshot = picked.make();
if (!snapshot) throw new Error(`${picked.name}: its trace is not here`);
const policy = qualityPolicy(K);
const plan = planSnapshot(snapshot, policy);
let TARGET = process.argv[6] === undefined ? null : Number(process.argv[6]);
if (process.argv[6] === 'greedy') {
  const mandatory = mandatoryMoves(planSnapshot(snapshot, qualityPolicy(200)));
  const curve = plainGreedy(snapshot, qualityPolicy(200), 200, mandatory);
  TARGET = curve[Math.min(200, curve.length - 1)];
  console.log(
    `${picked.name}: the greedy reaches ${TARGET.toFixed(5)} with ${Math.min(200, curve.length - 1)} moves`,
  );
}
const st = new ClusterState(snapshot, policy);
for (const a of plan.aggregates)
  for (const m of a.moves) st.apply(st.serverById.get(m.server), st.hostByName.get(m.to));
const aggs = st.aggregates.filter((a) => a.counted.length > 1);
const D = st.D;
const moves = () => st.servers.reduce((c, s, i) => c + (st.at[i] !== s.origin ? 1 : 0), 0);
// As the quality table: each aggregate's imbalance rounded to 6 digits, then their mean.
const imbalance = () =>
  aggs.reduce((sum, a) => sum + Math.round(st.imbalance(a.index) * 1e6) / 1e6, 0) / aggs.length;
const now = () => ({ imb: imbalance(), moves: moves() });
console.log(`product plan: ${plan.stats.moves} moves, imbalance ${now().imb.toFixed(5)}`);

const highs = await highsLoader();
let seed = 12345;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const TANGENTS = Array.from({ length: 31 }, (_, i) => -0.6 + 0.04 * i);
const started = Date.now();
let tries = 0;
let kept = 0;
while ((Date.now() - started) / 1000 < SECONDS) {
  tries++;
  const agg = aggs[Math.floor(rnd() * aggs.length)];
  const n = agg.counted.length;
  const deviation = agg.counted
    .map((h) => {
      let v = 0;
      for (let d = 0; d < D; d++) v += st.dims[d].weight * (st.util(h, d) - st.s1[agg.index * D + d] / n);
      return [h, v];
    })
    .sort((a, b) => b[1] - a[1]);
  const chosen = new Set();
  while (chosen.size < SUB / 2) chosen.add(deviation[Math.floor(rnd() * Math.min(15, n))][0]);
  while (chosen.size < SUB) chosen.add(deviation[n - 1 - Math.floor(rnd() * Math.min(15, n))][0]);
  const H = [...chosen];
  const servers = H.flatMap((h) => [...st.on[h]]).filter(
    (s) => st.servers[s].immovable === null && st.servers[s].group < 0,
  );
  if (servers.length === 0) continue;
  const mean = [];
  const slope = [];
  for (let d = 0; d < D; d++) {
    const s1 = st.s1[agg.index * D + d];
    const s2 = st.s2[agg.index * D + d];
    const m = s1 / n;
    mean.push(m);
    slope.push(st.dims[d].weight / (2 * n * Math.sqrt(Math.max(1e-12, s2 / n - m * m))));
  }
  const rows = [];
  const bins = [];
  const obj = [];
  servers.forEach((s, i) => {
    rows.push(` a${i}: ${H.map((_, j) => `x${i}_${j}`).join(' + ')} = 1`);
    H.forEach((h, j) => {
      bins.push(`x${i}_${j}`);
      if (h !== st.servers[s].origin) obj.push(`${MU} x${i}_${j}`);
    });
  });
  const signed = (c) => `${c < 0 ? '-' : '+'} ${Math.abs(c).toFixed(12)}`;
  H.forEach((h, j) => {
    const host = st.hosts[h];
    for (let r = 0; r < 3; r++) {
      if (!Number.isFinite(host.cap[r])) continue;
      let fixed = st.used[h * 3 + r];
      for (const s of servers) if (st.at[s] === h) fixed -= st.servers[s].alloc[r];
      rows.push(
        ` c${j}_${r}: ${servers.map((s, i) => `${st.servers[s].alloc[r]} x${i}_${j}`).join(' + ')} <= ${host.cap[r] - fixed}`,
      );
    }
    for (let d = 0; d < D; d++) {
      const p = host.phys[d];
      let fixed = st.load[h * D + d];
      for (const s of servers) if (st.at[s] === h) fixed -= st.servers[s].load[d];
      const base = fixed / p - mean[d];
      // t ≥ 2q·e − q² for e = u − mean: t is at least the square of e, tight at the tangents.
      TANGENTS.forEach((q, k) => {
        const terms = servers
          .map((s, i) => `${signed((-2 * q * st.servers[s].load[d]) / p)} x${i}_${j}`)
          .join(' ');
        rows.push(` t${j}_${d}_${k}: t${j}_${d} ${terms} >= ${(2 * q * base - q * q).toFixed(12)}`);
      });
      obj.push(`${slope[d].toFixed(12)} t${j}_${d}`);
    }
  });
  const bounds = H.flatMap((_, j) => [...Array(D).keys()].map((d) => ` t${j}_${d} >= -1`));
  const lp = `Minimize\n obj: ${obj.join(' + ')}\nSubject To\n${rows.join('\n')}\nBounds\n${bounds.join('\n')}\nBinary\n ${bins.join(' ')}\nEnd\n`;
  const r = highs.solve(lp, { time_limit: 3, mip_rel_gap: 1e-6, output_flag: false });
  if (!r.Columns) continue;
  const before = now();
  const undo = [];
  servers.forEach((s, i) => {
    const j = H.findIndex((_, jj) => (r.Columns[`x${i}_${jj}`]?.Primal ?? 0) > 0.5);
    if (j >= 0 && H[j] !== st.at[s]) {
      undo.push([s, st.at[s]]);
      st.apply(s, H[j]);
    }
  });
  const after = now();
  const better =
    TARGET === null
      ? after.imb + MU * after.moves < before.imb + MU * before.moves - 1e-9
      : (after.imb <= TARGET && after.moves < before.moves) ||
        (after.moves <= before.moves && after.imb < before.imb - 1e-9);
  if (better) kept++;
  else for (const [s, h] of undo.reverse()) st.apply(s, h);
  if (tries % 25 === 0)
    console.log(
      `${((Date.now() - started) / 1000).toFixed(0)} s: ${tries} sub-problems, ${kept} kept, ${now().moves} moves, imbalance ${now().imb.toFixed(5)}`,
    );
}
console.log(
  `final: ${now().moves} moves, imbalance ${now().imb.toFixed(5)} (${tries} sub-problems, ${kept} kept)`,
);
