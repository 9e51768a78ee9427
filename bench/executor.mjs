// Executor throughput against the simulator: N moves (default 300) over HTTP through the real
// clients, at a high clock speed, with the in-memory journal or the store's SQLite journal.
// Prints moves per minute of simulated time and of wall time, and API calls per move.
// Run after `npm run build`:
//   node bench/executor.mjs [moves] [--speed 50] [--journal memory|sqlite] [--synchronous full|normal]
//                          [--in-process] [--estimates planner|flat]
// --synchronous: the SQLite store's setting (store.synchronous, docs/configuration.md).
// The simulator runs in its own process (bench/executor-sim.mjs), as Nova does: its CPU and the
// executor's are counted apart. --in-process: in this process, sharing the executor's event loop
// (how the bench ran before 2026-12-03).

import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actuator } from '../dist/cloud/actuator.js';
import { openSession } from '../dist/cloud/session.js';
import {
  Executor,
  MemoryJournal,
  MigrationSlots,
  OpenStackExecutorCloud,
  resolveExecutorSettings,
} from '../dist/executor/index.js';
import { estimateMigrationSeconds } from '../dist/planner/cost-model.js';
import { DEFAULT_POLICY } from '../dist/policy/defaults.js';
import { simAdminConfig } from '../dist/sim/connect-info.js';
import { startBenchSim } from './executor-sim.mjs';

const args = process.argv.slice(2);
const flag = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const valued = new Set(['--speed', '--journal', '--synchronous', '--estimates']);
const moves = Number(args.find((a, i) => !a.startsWith('--') && !valued.has(args[i - 1])) ?? 300);
const speed = Number(flag('speed', '50'));
const journalKind = flag('journal', 'memory');
const synchronous = flag('synchronous', 'full');
const inProcess = args.includes('--in-process');
// The moves' estimates: the planner's (its default cost model, as `aicerine plan` writes them;
// the simulator runs the same model, so they foretell its durations) or 10 s for every move
// (how the bench ran before 2026-12-03).
const estimates = flag('estimates', 'planner');
if (estimates !== 'planner' && estimates !== 'flat') {
  throw new Error(`--estimates: expected planner or flat, got ${estimates}`);
}
const hostsPerSide = 20;

const sources = Array.from({ length: hostsPerSide }, (_, i) => `src-${i + 1}`);
const dests = Array.from({ length: hostsPerSide }, (_, i) => `dst-${i + 1}`);
const mkHost = (name) => ({
  name,
  availabilityZone: 'nova',
  aggregates: ['agg'],
  service: { state: 'up', status: 'enabled', forcedDown: false },
  inventory: {
    VCPU: { total: 128, reserved: 0, allocationRatio: 4 },
    MEMORY_MB: { total: 1048576, reserved: 512, allocationRatio: 1 },
    DISK_GB: { total: 20000, reserved: 0, allocationRatio: 1 },
  },
  usage: {},
});
const servers = [];
const planned = [];
for (let i = 0; i < moves; i++) {
  const id = `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
  const ramMB = [2048, 4096, 8192, 16384][Math.floor(i / hostsPerSide) % 4];
  servers.push({
    id,
    name: `vm-${i + 1}`,
    projectId: 'b0000000000000000000000000000001',
    host: sources[i % hostsPerSide],
    status: 'ACTIVE',
    taskState: null,
    flavor: { name: `f${ramMB}`, vcpus: 2, ramMB, diskGB: 20 },
    sharedStorage: true,
    load: { cpu: 1, memoryMB: ramMB / 2 },
  });
  planned.push({
    step: i + 1,
    wave: 1,
    serverId: id,
    from: sources[i % hostsPerSide],
    to: dests[(i * 7) % hostsPerSide],
    estimatedSeconds:
      estimates === 'flat' ? 10 : estimateMigrationSeconds({ ramMB }, DEFAULT_POLICY.costModel),
  });
}
const snap = {
  format: 'aicerine-snapshot/1',
  takenAt: new Date().toISOString(),
  source: 'bench-executor',
  hosts: [...sources, ...dests].map(mkHost),
  servers,
  serverGroups: [],
};

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const loadBefore = load();

// The simulator: a child process by default, this one with --in-process.
let simulator;
if (inProcess) {
  const started = await startBenchSim(snap, speed);
  simulator = {
    authUrl: started.sim.authUrl,
    clockPair: { wallMs: started.wallMs, simMs: started.simMs },
    mark: async () => {},
    report: async () => ({ cpuS: null, endpoints: [...started.byEndpoint] }),
    close: () => started.sim.close(),
  };
} else {
  const child = fork(new URL('./executor-sim.mjs', import.meta.url), ['--child'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  process.on('exit', () => child.kill());
  const ask = (msg, answer) =>
    new Promise((resolve, reject) => {
      const onMessage = (m) => {
        if (m.kind !== answer) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code) => reject(new Error(`the simulator's process exited with ${code}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send(msg);
    });
  const ready = await ask({ kind: 'start', snap, speed }, 'ready');
  simulator = {
    authUrl: ready.authUrl,
    clockPair: { wallMs: ready.wallMs, simMs: ready.simMs },
    mark: () => ask({ kind: 'mark' }, 'marked'),
    report: async () => {
      const r = await ask({ kind: 'report' }, 'report');
      return { cpuS: (r.cpu.user + r.cpu.system) / 1e6, endpoints: r.endpoints };
    },
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ kind: 'stop' });
      await exited;
    },
  };
}
// The simulated clock, read from this process: both share the machine's wall clock.
const { wallMs: simWall0, simMs: simAt0 } = simulator.clockPair;
const simNow = () => simAt0 + (Date.now() - simWall0) * speed;
const simOrigin = new URL(simulator.authUrl).origin;
const config = simAdminConfig(simulator.authUrl, 'secret', 'bench executor');
// Reads with the reader, writes with the actuator: as the service runs.
const session = await openSession({ config, credential: { kind: 'reader', label: 'reader (bench)' } });
const actuator = await Actuator.open({ config, credential: { label: 'actuator (bench)' } });
let journal = new MemoryJournal();
let dir;
let store;
if (journalKind === 'sqlite') {
  const { openStore } = await import('../dist/store/index.js');
  dir = mkdtempSync(join(tmpdir(), 'aicerine-bench-'));
  store = await openStore({ kind: 'sqlite', path: join(dir, 'journal.db'), synchronous });
  journal = store;
}
const settings = resolveExecutorSettings({
  pollSeconds: 2,
  limits: { perSourceHost: 1, perDestinationHost: 2, perAggregate: 20, global: 20 },
});
const clock = {
  now: simNow,
  sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / speed))),
};
const executor = new Executor({
  journal,
  cloud: new OpenStackExecutorCloud(session, actuator),
  clock,
  settings,
  slots: new MigrationSlots(settings.limits),
  timeoutFor: () => 3600,
});
await simulator.mark();
const wall0 = performance.now();
const cpu0 = process.cpuUsage();
const sim0 = clock.now();
const summary = await executor.start(
  { aggregate: 'agg', planId: null, startedBy: 'bench', moves: planned },
  { deadline: null, shouldStop: () => false },
);
const wallS = (performance.now() - wall0) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuS = (cpu.user + cpu.system) / 1e6;
const simS = (clock.now() - sim0) / 1000;
const simReport = await simulator.report();
const loadAfter = load();
const total = session.stats.total + actuator.stats.total;
const calls = `reader ${session.stats.summary()}; actuator ${actuator.stats.summary()}; ${(total / moves).toFixed(1)} per move`;
// The simulator's own records of each migration: when the call created it and when it ended, on
// the simulated clock (GET /sim/migrations; not one of the executor's calls).
const migrations = ((await (await fetch(`${simOrigin}/sim/migrations`)).json()).migrations ?? []).map(
  (m) => ({
    source: m.source,
    server: m.server,
    createdMs: Date.parse(m.createdAt),
    updatedMs: m.updatedAt === null ? null : Date.parse(m.updatedAt),
    plannedSeconds: m.plannedSeconds,
  }),
);
// Lower bound of the makespan: one migration at a time per source, back to back. Nova holds a
// source's slot (max_concurrent_live_migrations) from the call until the migration's record is
// final: its scheduling, the copy, and the post-migration steps after the guest has moved (the
// simulator's completionLagSeconds, measured on the lab). So back to back, each source takes the
// sum of Nova's own times from a call to its record's end; a time that overlaps the source's
// previous migration counts only from that one's end (a call Nova queued waits for no executor).
// The planned seconds (the copy the cost model foretells, without the post-migration steps) give
// the bound this bench printed until 2026-12-03, kept beside it.
const bySourceInOrder = new Map();
for (const m of migrations) {
  const list = bySourceInOrder.get(m.source) ?? [];
  list.push(m);
  bySourceInOrder.set(m.source, list);
}
const novaBusy = new Map();
const plannedBusy = new Map();
for (const [source, list] of bySourceInOrder) {
  list.sort((a, b) => a.createdMs - b.createdMs);
  let freeAt = Number.NEGATIVE_INFINITY;
  let nova = 0;
  for (const m of list) {
    const end = m.updatedMs ?? m.createdMs;
    nova += Math.max(0, end - Math.max(m.createdMs, freeAt)) / 1000;
    freeAt = Math.max(freeAt, end);
  }
  novaBusy.set(source, nova);
  plannedBusy.set(
    source,
    list.reduce((t, m) => t + m.plannedSeconds, 0),
  );
}
const bound = Math.max(...novaBusy.values());
const plannedBound = Math.max(...plannedBusy.values());
console.log(
  `executor: ${moves} moves (${hostsPerSide} sources -> ${hostsPerSide} destinations, 1 per source, 2 per destination, 20 in flight), ` +
    `journal ${journalKind}${journalKind === 'sqlite' ? ` (synchronous ${synchronous})` : ''}, clock x${speed}, ` +
    `simulator ${inProcess ? 'in this process' : 'in its own process'}, estimates ${estimates === 'flat' ? '10 s each' : "the planner's"}`,
);
console.log(`  ${new Date().toISOString()}, load average ${loadBefore} before, ${loadAfter} after`);
const c = summary.counters;
console.log(
  `  completed ${summary.counts.completed}, failed ${summary.counts.failed}, skipped ${summary.counts.skipped}` +
    (c.prereads === undefined
      ? ''
      : `; pre-flights made before the slot was free ${c.prereads}, used ${c.prereadsUsed}, stale ${c.prereadsStale}`),
);
const w = executor.watchCounters();
console.log(
  `  listings of migrations ${w.polls}` +
    (w.aimedHits === undefined
      ? ''
      : `; aimed at an expected end ${w.aimedHits + w.aimedMisses}: showed it ended ${w.aimedHits}, not yet ${w.aimedMisses}`),
);
console.log(
  `  simulated: ${simS.toFixed(0)} s, ${((moves / simS) * 60).toFixed(1)} moves/min ` +
    `(back-to-back bound of the busiest source ${bound.toFixed(0)} s, Nova's times from each call to its record's end: ` +
    `${((moves / bound) * 60).toFixed(1)} moves/min; efficiency ${((100 * bound) / simS).toFixed(0)}%; ` +
    `against the planned copy times alone, ${plannedBound.toFixed(0)} s: ${((100 * plannedBound) / simS).toFixed(0)}%)`,
);
console.log(
  `  wall: ${wallS.toFixed(1)} s, ${((moves / wallS) * 60).toFixed(0)} moves/min; API calls: ${calls}`,
);
// At clock xS the bound takes bound/S wall seconds: a process that needs more CPU than that
// cannot keep up, and on a loaded machine each wall millisecond spent waiting for a core is S
// simulated ones.
console.log(
  inProcess
    ? `  CPU (executor + simulator, one process): ${cpuS.toFixed(1)} s, ${((cpuS * 1000) / moves).toFixed(1)} ms per move; ` +
        `the bound at x${speed} is ${(bound / speed).toFixed(1)} s of wall`
    : `  CPU: executor ${cpuS.toFixed(2)} s (${((cpuS * 1000) / moves).toFixed(1)} ms per move), simulator ${simReport.cpuS.toFixed(2)} s ` +
        `(its own process); the bound at x${speed} is ${(bound / speed).toFixed(1)} s of wall`,
);
// Where each source's time went: Nova's own time per migration (the API call to the record's
// end: scheduling, queue, copy) and the executor's gap between one end and the next call.
let gapSum = 0;
let gaps = 0;
let novaSum = 0;
const gapList = [];
for (const list of bySourceInOrder.values()) {
  for (let i = 0; i < list.length; i++) {
    novaSum += ((list[i].updatedMs ?? list[i].createdMs) - list[i].createdMs) / 1000;
    if (i === 0) continue;
    const gap = (list[i].createdMs - (list[i - 1].updatedMs ?? list[i - 1].createdMs)) / 1000;
    gapSum += gap;
    gapList.push(gap);
    gaps++;
  }
}
gapList.sort((a, b) => a - b);
const pct = (p) =>
  gapList.length ? gapList[Math.min(gapList.length - 1, Math.floor(p * gapList.length))] : 0;
// The slowest source sets the makespan: its first call after the start, and its last end before
// the executor returned.
const firstCall = Math.min(...migrations.map((m) => m.createdMs));
const lastEnd = Math.max(...migrations.map((m) => m.updatedMs ?? m.createdMs));
console.log(
  `  per migration: Nova ${(novaSum / migrations.length).toFixed(2)} s from the call to the record's end ` +
    `(planned ${(migrations.reduce((t, m) => t + m.plannedSeconds, 0) / migrations.length).toFixed(2)} s); ` +
    `executor gap from one end to the next call on the same source ${(gapSum / Math.max(1, gaps)).toFixed(2)} s ` +
    `(median ${pct(0.5).toFixed(2)}, 90th percentile ${pct(0.9).toFixed(2)}); ` +
    `start to the first call ${((firstCall - sim0) / 1000).toFixed(2)} s, the last end to the executor's return ${((sim0 + simS * 1000 - lastEnd) / 1000).toFixed(2)} s`,
);
console.log('  calls by endpoint (per move):');
for (const [e, n] of simReport.endpoints.sort((a, b) => b[1] - a[1])) {
  console.log(`    ${String(n).padStart(6)}  ${(n / moves).toFixed(2).padStart(5)}  ${e}`);
}
await simulator.close();
await store?.close();
if (dir) rmSync(dir, { recursive: true, force: true });
