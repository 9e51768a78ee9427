// Planner benchmark: `npm run bench`. Prints, per case, the median planning time, moves,
// imbalance before/after and a lower bound (migrations for spread, hosts for pack); for a
// cluster of up to 30 hosts an exact HiGHS solve shows the gap. Figures, not pass/fail.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { checkPlan } from '../dist/checker/index.js';
import { planSnapshot } from '../dist/planner/index.js';
import { DEFAULT_POLICY } from '../dist/policy/defaults.js';
import { importVmr2l } from '../dist/snapshot/import-vmr2l.js';
import { synthesizeSnapshot } from '../dist/snapshot/synth.js';
import { packLowerBound, spreadLowerBound } from './bounds.mjs';
import { exactPackHosts, exactSpreadMoves } from './exact.mjs';
import { packQualityTable, qualityTable } from './quality.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const VMR2L = join(root, '..', 'shared', 'traces', 'vmr2l-bytedance', 'json_stream_c1_2022-03-28+32c.json');

const cases = [
  {
    name: '12 hosts / 160 servers (exact check)',
    synth: { hosts: 12, servers: 160, groups: 0, seed: 5 },
    modes: ['spread', 'pack'],
    maxMoves: 1000,
    runs: 5,
    exact: true,
  },
  {
    name: '50 hosts / 5,000 servers / 100 groups',
    synth: { hosts: 50, servers: 5000, groups: 100, seed: 1 },
    modes: ['spread', 'pack'],
    maxMoves: 100000,
    runs: 5,
  },
  {
    name: '500 hosts / 20,000 servers / 400 groups',
    synth: { hosts: 500, servers: 20000, groups: 400, seed: 1 },
    modes: ['spread', 'pack'],
    maxMoves: 200,
    runs: 3,
  },
  {
    name: '5,000 hosts / 30,000 servers',
    synth: { hosts: 5000, servers: 30000, groups: 400, seed: 1 },
    modes: ['spread', 'pack'],
    maxMoves: 200,
    runs: 3,
  },
  {
    name: 'VMR2L json_stream_c1 (b05 + b04 clusters, real placements)',
    vmr2l: VMR2L,
    modes: ['pack', 'spread'],
    maxMoves: 200,
    runs: 3,
  },
];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const only = process.argv[2];
console.log(`node ${process.version}, ${new Date().toISOString()}`);
console.log(
  'case | mode | hosts | servers | median ms (cpu ms) | moves | waves | imbalance before -> after | lower bound | exact | peak RSS MiB | checker',
);
for (const c of cases) {
  if (only && !c.name.includes(only)) continue;
  let snapshot;
  if (c.vmr2l) {
    if (!existsSync(c.vmr2l)) {
      console.log(`${c.name} | skipped: ${c.vmr2l} not found (../shared is not on this machine)`);
      continue;
    }
    snapshot = importVmr2l(JSON.parse(readFileSync(c.vmr2l, 'utf8')), { file: c.vmr2l });
  } else {
    snapshot = synthesizeSnapshot(c.synth);
  }
  for (const mode of c.modes) {
    const policy = structuredClone(DEFAULT_POLICY);
    policy.mode = mode;
    policy.budget.maxMoves = c.maxMoves;
    const times = [];
    const cpu = [];
    let plan;
    for (let i = 0; i < c.runs; i++) {
      const t = performance.now();
      const c0 = process.cpuUsage();
      plan = planSnapshot(snapshot, policy);
      times.push(performance.now() - t);
      cpu.push(process.cpuUsage(c0).user / 1000);
    }
    const moves = plan.aggregates.flatMap((a) => a.moves);
    const waves = plan.aggregates.reduce((n, a) => n + new Set(a.moves.map((m) => m.wave)).size, 0);
    const before = weighted(plan, 'before');
    const after = weighted(plan, 'after');
    const freed = plan.aggregates.reduce((n, a) => n + a.hostsFreed.length, 0);
    let bound;
    let exact = '-';
    if (mode === 'pack') {
      const occupied = snapshot.hosts.filter((h) => snapshot.servers.some((s) => s.host === h.name)).length;
      bound = `>= ${packLowerBound(snapshot)} hosts needed (uses ${occupied - freed} after, ${freed} freed)`;
      if (c.exact) exact = `${await exactPackHosts(snapshot)} hosts (optimal)`;
    } else {
      bound = `>= ${spreadLowerBound(snapshot, plan, policy)} migrations`;
      if (c.exact)
        exact = `${await exactSpreadMoves(snapshot, plan, policy)} migrations (optimal for the same max deviation)`;
    }
    const check = checkPlan(snapshot, plan, { dimensions: policy.dimensions });
    const rss = Math.round(process.memoryUsage().rss / 1048576);
    console.log(
      `${c.name} | ${mode} | ${snapshot.hosts.length} | ${snapshot.servers.length} | ${median(times).toFixed(0)} (${median(cpu).toFixed(0)}) | ${moves.length} | ${waves} | ${before.toFixed(4)} -> ${after.toFixed(4)} | ${bound} | ${exact} | ${rss} | ${check.ok ? 'ok' : `${check.violations.length} violations`}`,
    );
  }
}

if (!only || only === 'quality') {
  await qualityTable(root);
  await packQualityTable(root);
} else if (only === 'pack quality') await packQualityTable(root);
else {
  await qualityTable(root, only);
  await packQualityTable(root, only);
}

/** Imbalance averaged over aggregates, weighted by their host counts. */
function weighted(plan, key) {
  let sum = 0;
  let n = 0;
  for (const a of plan.aggregates) {
    const w = Object.keys(a[key].dimensions).length > 0 ? 1 : 0;
    sum += a[key].imbalance * w;
    n += w;
  }
  return n > 0 ? sum / n : 0;
}
