// Learned-cost and prevention benchmark: `node bench/costs.mjs` after `npm run build`. Prints
// the median time to fit an aggregate (Theil-Sen is quadratic in the samples, capped by
// maxSamples), to fit a plan into a window, and to decide ratios for a large aggregate.
// Figures, not pass/fail.
import { performance } from 'node:perf_hooks';
import { fitAggregate } from '../dist/costs/fit.js';
import { fitsInWindow } from '../dist/costs/window.js';
import { decideRatios } from '../dist/prevention/decide.js';
import { defaultRatioSettings } from '../dist/prevention/settings.js';
import { createRng } from '../dist/util/rng.js';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(runs, fn) {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return median(ms).toFixed(1);
}

const rng = createRng(1);
const RAMS = [1024, 2048, 4096, 8192, 16384, 32768, 65536];
function samples(n, dirty) {
  return Array.from({ length: n }, (_, i) => {
    const ramMB = RAMS[i % RAMS.length];
    const d = dirty ? [0, 50, 100, 200][i % 4] : undefined;
    return {
      aggregate: 'a',
      serverId: `s${i}`,
      ramMB,
      ...(d !== undefined ? { dirtyRateMBps: d } : {}),
      seconds: 5 + (ramMB / 1024) * (1 + (d ?? 0) * 0.002) + rng.normal() + (rng.next() < 0.2 ? 100 : 0),
      outcome: 'completed',
      source: 'nova-history',
      endedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    };
  });
}

console.log('case                                          median ms');
for (const n of [100, 500, 2000]) {
  const s = samples(n, false);
  console.log(
    `fit ${String(n).padEnd(5)} samples (Theil-Sen)                 ${time(5, () => fitAggregate('a', s))}`,
  );
  const d = samples(n, true);
  console.log(
    `fit ${String(n).padEnd(5)} samples with dirty rates (Huber)   ${time(5, () => fitAggregate('a', d))}`,
  );
}
const hosts = Array.from({ length: 200 }, (_, i) => `h${i}`);
for (const n of [100, 1000]) {
  const moves = Array.from({ length: n }, (_, i) => ({
    step: i + 1,
    wave: 1 + Math.floor(i / 50),
    from: hosts[i % 200],
    to: hosts[(i * 7 + 3) % 200],
    estimatedSeconds: 10 + (i % 13) * 5,
  }));
  console.log(
    `fitsInWindow ${String(n).padEnd(5)} moves, 200 hosts           ${time(5, () => fitsInWindow(moves, 3600, { global: 20, perSourceHost: 1 }))}`,
  );
}
const states = Array.from({ length: 5000 }, (_, i) => ({
  host: `h${i}`,
  rpUuid: `rp${i}`,
  ratio: 4,
  total: 64,
  reserved: 0,
  used: 100 + (i % 100),
  load: { utilization: rng.next() },
}));
console.log(
  `decideRatios 5000 hosts                         ${time(5, () =>
    decideRatios({
      hosts: states,
      settings: defaultRatioSettings(4, 2),
      lastChanges: new Map(),
      pinned: new Set(),
      now: new Date(),
    }),
  )}`,
);
