// Snapshot-maker benchmark: `npm run build && node bench/synth.mjs`. Prints the median time to
// synthesize clusters of several sizes and to import the shared traces. Figures, not pass/fail.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { importBitbrains } from '../dist/snapshot/import-bitbrains.js';
import { importVmr2l } from '../dist/snapshot/import-vmr2l.js';
import { synthesizeSnapshot } from '../dist/snapshot/synth.js';
import { findBitbrainsHourly, loadBitbrainsHourly } from '../dist/traces/bitbrains.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const VMR2L = join(root, '..', 'shared', 'traces', 'vmr2l-bytedance', 'json_stream_c1_2022-03-28+32c.json');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(label, runs, fn) {
  const ms = [];
  let out;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    out = fn();
    ms.push(performance.now() - t0);
  }
  console.log(`${label.padEnd(48)} ${median(ms).toFixed(0).padStart(6)} ms (median of ${runs})`);
  return out;
}

for (const o of [
  { hosts: 24, servers: 600, groups: 12, seed: 7, aggregates: 2, disabled: 1 },
  { hosts: 50, servers: 5000, groups: 100, seed: 1 },
  { hosts: 5000, servers: 30000, groups: 400, seed: 1, aggregates: 10, disabled: 5 },
  { hosts: 5000, servers: 100000, groups: 2000, seed: 1, aggregates: 20, disabled: 10 },
]) {
  time(`synth ${o.hosts} hosts / ${o.servers} servers`, 5, () => synthesizeSnapshot(o));
}

const hourly = findBitbrainsHourly();
if (hourly !== undefined) {
  const t0 = performance.now();
  const series = await loadBitbrainsHourly(hourly);
  console.log(
    `${`load ${hourly.split('/').pop()} (${series.length} VMs)`.padEnd(48)} ${(performance.now() - t0).toFixed(0).padStart(6)} ms`,
  );
  time('import bitbrains onto synthetic hosts', 5, () => importBitbrains(series, { seed: 1, at: 10 }));
}
if (existsSync(VMR2L)) {
  const doc = JSON.parse(readFileSync(VMR2L, 'utf8'));
  time('import vmr2l json_stream_c1 (2 clusters)', 5, () => importVmr2l(doc, { file: VMR2L }));
}
