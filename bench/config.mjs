// Configuration benchmark: `npm run bench:config`. What the control loop pays per aggregate and
// cycle to ask its windows and budgets, and what loading aicerine.yaml costs. Medians; figures,
// not pass/fail.
import { performance } from 'node:perf_hooks';
import { budgetLeft } from '../dist/config/budget.js';
import { loadServiceConfig } from '../dist/config/load.js';
import { parseWindow, windowState } from '../dist/config/windows.js';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(runs, f) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    f(i);
    out.push(performance.now() - t);
  }
  return median(out);
}

const TEXTS = [
  'Sat 22:00 - Sun 06:00 Europe/Paris',
  'Mon-Fri 01:00 - 05:00 America/New_York',
  'Sun 01:00 - 04:00 Australia/Sydney',
  'Tue,Thu 23:30 - 02:00 Asia/Kolkata',
];
const start = Date.parse('2026-01-01T00:00:00Z');
const lines = ['| case | median |', '|---|---|'];
for (const n of [1, 4, 16]) {
  const windows = Array.from({ length: n }, (_, i) => {
    const p = parseWindow(TEXTS[i % TEXTS.length]);
    if (!p.ok) throw new Error(p.error);
    return p.window;
  });
  // A different instant each run (every 7 h 13 min through the year), so no cache helps.
  const ms = time(200, (i) => windowState(windows, new Date(start + i * 26_000_000)));
  lines.push(`| windowState, ${n} window${n > 1 ? 's' : ''} | ${(ms * 1000).toFixed(0)} µs |`);
}
const started = Array.from({ length: 10_000 }, (_, i) => new Date(start + i * 8_000));
const now = new Date(start + 10_000 * 8_000);
const ms = time(200, () =>
  budgetLeft({ perCycle: 5, perWindow: 50, perDay: 100 }, started, {
    now,
    cycleStartedAt: new Date(now.getTime() - 300_000),
    windowOpenedAt: new Date(now.getTime() - 3_600_000),
  }),
);
lines.push(`| budgetLeft, 10,000 moves started | ${(ms * 1000).toFixed(0)} µs |`);
const loads = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  await loadServiceConfig('examples/aicerine.yaml');
  loads.push(performance.now() - t);
}
lines.push(`| loadServiceConfig(examples/aicerine.yaml), 2 aggregates | ${median(loads).toFixed(1)} ms |`);
process.stdout.write(`${lines.join('\n')}\n`);
