// The 7-day replay of issue 8: the whole service in active mode against the Bitbrains-driven
// simulator, cycles on the virtual clock, nightly windows, budgets and cooldowns. Prints the
// oscillation figures (servers moved more than once, moves back within the cooldown: must be 0),
// migrations, imbalance per aggregate and wall seconds. `--json FILE` writes the whole report.
//
//   node bench/replay.mjs [--days 7] [--synth 48,1400,40,2026,4,1] [--speed 600] [--interval 10m] [--json out.json]
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { runReplay } from '../dist/service/replay.js';
import { replayConfig } from '../dist/service/replay-config.js';
import { parseSynthSpec } from '../dist/sim/setup.js';

const { values } = parseArgs({
  options: {
    days: { type: 'string', default: '7' },
    synth: { type: 'string', default: '48,1400,40,2026,4,1' },
    speed: { type: 'string', default: '600' },
    interval: { type: 'string', default: '10m' },
    trace: { type: 'string' },
    json: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});

const days = Number(values.days);
const run = await runReplay({
  cloud: parseSynthSpec(values.synth),
  days,
  speed: Number(values.speed),
  ...(values.trace ? { tracePath: values.trace } : {}),
  config: replayConfig({ cycleInterval: values.interval }),
  onCycle: (c) => {
    if (values.quiet) return;
    if (c.started > 0 || c.error || c.index % 36 === 0) {
      const imb = Object.entries(c.imbalance)
        .map(([a, v]) => `${a}=${v.toFixed(4)}`)
        .join(' ');
      process.stderr.write(
        `cycle ${c.index} ${c.at} started=${c.started} calls=${c.callCount}${c.error ? ` error=${c.error}` : ''} ${imb}\n`,
      );
    }
  },
});
const r = run.report;
await run.close();
const fmt = (v) => (v === null ? '-' : v.toFixed(4));
console.log(
  `replay: ${r.virtualDays} virtual days, ${r.cloud.hosts} hosts, ${r.cloud.servers} servers, aggregates ${r.cloud.aggregates.join(', ')}`,
);
console.log(`load: ${r.cloud.load}`);
console.log(`cycles: ${r.cycles} (${r.failedCycles} failed), wall ${r.wallSeconds} s`);
console.log(
  `moves: started ${r.moves.started}, completed ${r.moves.completed}, failed ${r.moves.failed} (aborted ${r.moves.aborted}), skipped by pre-flight ${r.moves.skipped}, emergency ${r.moves.emergency}`,
);
console.log(`servers moved more than once: ${r.serversMovedMoreThanOnce}`);
console.log(
  `moves back to a host left within the cooldown: ${r.movesBackWithinCooldown.length} (back to a host left earlier, after the cooldown: ${r.movesBackEver})`,
);
console.log(
  `accounting: ${r.accounting.novaMigrations} Nova migrations (${r.accounting.novaCompleted} completed), unrecorded ${r.accounting.unrecorded.length}, recorded twice ${r.accounting.recordedTwice.length}, mismatches ${r.accounting.stateMismatches.length}`,
);
for (const [agg, s] of Object.entries(r.imbalance)) {
  // One value per virtual day (the first cycle of each day) shows the trend without the noise.
  const daily = [];
  for (const p of s.series)
    if (daily.length === 0 || p.at.slice(0, 10) !== daily.at(-1).at.slice(0, 10)) daily.push(p);
  console.log(
    `imbalance ${agg}: start ${fmt(s.start)}, end ${fmt(s.end)}; daily ${daily.map((p) => p.value.toFixed(4)).join(' ')}`,
  );
}
if (values.json) await writeFile(values.json, `${JSON.stringify(r, null, 2)}\n`);
if (r.movesBackWithinCooldown.length > 0 || r.accounting.unrecorded.length > 0) process.exitCode = 1;
