// Executor throughput against the simulator: N moves (default 300) over HTTP through the real
// clients, at a high clock speed, with the in-memory journal or the store's SQLite journal.
// Prints moves per minute of simulated time and of wall time, and API calls per move.
// Run after `npm run build`:
//   node bench/executor.mjs [moves] [--speed 50] [--journal memory|sqlite] [--synchronous full|normal]
// --synchronous: the SQLite store's setting (store.synchronous, docs/configuration.md).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import { SimClock } from '../dist/sim/clock.js';
import { simAdminConfig } from '../dist/sim/connect-info.js';
import { startSimServer } from '../dist/sim/http/server.js';
import { staticLoadModel } from '../dist/sim/load.js';
import { SimCloud } from '../dist/sim/model.js';

const args = process.argv.slice(2);
const flag = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const moves = Number(args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 300);
const speed = Number(flag('speed', '50'));
const journalKind = flag('journal', 'memory');
const synchronous = flag('synchronous', 'full');
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
    estimatedSeconds: 10,
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

const cloud = new SimCloud(snap, { clock: new SimClock({ speed }), load: staticLoadModel() });
// Calls by endpoint, as the simulator sees them: ids and query values folded, so each line is
// one kind of read or action (where the calls per move go).
const byEndpoint = new Map();
const endpointOf = (line) => {
  const [method, target] = line.split(' ');
  if (!target?.startsWith('/')) return null;
  const [path, query] = target.split('?');
  const shape = path
    .replace(/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$)/g, '/{id}')
    .replace(/\/[0-9a-f]{32}(?=\/|$)/g, '/{id}')
    .replace(/\/\d+(?=\/|$)/g, '/{n}');
  const keys = query ? [...new URLSearchParams(query).keys()].sort().join('&') : '';
  return `${method} ${shape}${keys ? `?${keys}` : ''}`;
};
const sim = await startSimServer({
  cloud,
  password: 'secret',
  log: (line) => {
    const e = endpointOf(line);
    if (e) byEndpoint.set(e, (byEndpoint.get(e) ?? 0) + 1);
  },
});
const config = simAdminConfig(sim.authUrl, 'secret', 'bench executor');
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
  now: () => cloud.clock.nowMs(),
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
const total = session.stats.total + actuator.stats.total;
const calls = `reader ${session.stats.summary()}; actuator ${actuator.stats.summary()}; ${(total / moves).toFixed(1)} per move`;
// Lower bound of the makespan: one migration at a time per source, back to back.
const perSource = new Map();
for (const m of cloud.migrations) perSource.set(m.source, (perSource.get(m.source) ?? 0) + m.durationSeconds);
const bound = Math.max(...perSource.values());
console.log(
  `executor: ${moves} moves (${hostsPerSide} sources -> ${hostsPerSide} destinations, 1 per source, 2 per destination, 20 in flight), ` +
    `journal ${journalKind}${journalKind === 'sqlite' ? ` (synchronous ${synchronous})` : ''}, clock x${speed}`,
);
console.log(
  `  completed ${summary.counts.completed}, failed ${summary.counts.failed}, skipped ${summary.counts.skipped}`,
);
console.log(
  `  simulated: ${simS.toFixed(0)} s, ${((moves / simS) * 60).toFixed(1)} moves/min ` +
    `(back-to-back bound of the busiest source ${bound.toFixed(0)} s: ${((moves / bound) * 60).toFixed(1)} moves/min; efficiency ${((100 * bound) / simS).toFixed(0)}%)`,
);
console.log(
  `  wall: ${wallS.toFixed(1)} s, ${((moves / wallS) * 60).toFixed(0)} moves/min; API calls: ${calls}`,
);
// The simulator runs in this process: its CPU and the executor's are counted together. At clock
// xS the bound takes bound/S wall seconds; a run that needs more CPU than that cannot reach it.
console.log(
  `  CPU (executor + simulator, one process): ${cpuS.toFixed(1)} s, ${((cpuS * 1000) / moves).toFixed(1)} ms per move; ` +
    `the bound at x${speed} is ${(bound / speed).toFixed(1)} s of wall`,
);
// Where each source's time went: Nova's own time per migration (the API call to the record's
// end: scheduling, queue, copy) and the executor's gap between one end and the next call.
let gapSum = 0;
let gaps = 0;
let novaSum = 0;
const bySource = new Map();
for (const m of cloud.migrations) {
  const list = bySource.get(m.source) ?? [];
  list.push(m);
  bySource.set(m.source, list);
}
for (const list of bySource.values()) {
  list.sort((a, b) => a.createdMs - b.createdMs);
  for (let i = 0; i < list.length; i++) {
    novaSum += ((list[i].updatedMs ?? list[i].createdMs) - list[i].createdMs) / 1000;
    if (i === 0) continue;
    gapSum += (list[i].createdMs - (list[i - 1].updatedMs ?? list[i - 1].createdMs)) / 1000;
    gaps++;
  }
}
console.log(
  `  per migration: Nova ${(novaSum / cloud.migrations.length).toFixed(2)} s from the call to the record's end ` +
    `(planned ${(cloud.migrations.reduce((t, m) => t + m.durationSeconds, 0) / cloud.migrations.length).toFixed(2)} s); ` +
    `executor gap from one end to the next call on the same source ${(gapSum / Math.max(1, gaps)).toFixed(2)} s`,
);
console.log('  calls by endpoint (per move):');
for (const [e, n] of [...byEndpoint.entries()].sort((a, b) => b[1] - a[1])) {
  console.log(`    ${String(n).padStart(6)}  ${(n / moves).toFixed(2).padStart(5)}  ${e}`);
}
await sim.close();
await store?.close();
if (dir) rmSync(dir, { recursive: true, force: true });
