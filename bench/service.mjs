// A control-loop cycle through the service at 5,000 hosts / 100,000 servers: AicerineService
// (src/service/service.ts) in observe mode against `aicerine sim` in its own process (as a cloud
// would be), a first cycle (full read) and steady-state cycles (incremental read), each with the
// whole loop: record, learn costs, data-health gate, plan and check every aggregate, store.
// Prints calls and seconds per cycle (recording apart), the CPU seconds of the service and of the
// simulator apart, with the date and the machine's load. `--changes N` boots N servers (spread
// over the hosts, so over every aggregate) in the simulator before each steady cycle.
// Run after `npm run build`:
// `--profile DIR` writes a CPU profile of the service's process per cycle into DIR
// (DIR/first.cpuprofile for the first cycle, DIR/steady-K.cpuprofile, for Chrome's DevTools or
// `node bench/profile-top.mjs`).
//   node bench/service.mjs [hosts servers] [--steady N] [--changes N] [--no-prometheus] [--profile DIR]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Actuator } from '../dist/cloud/actuator.js';
import { silentLogger } from '../dist/cloud/log.js';
import { openSession } from '../dist/cloud/session.js';
import { parseServiceConfig } from '../dist/config/load.js';
import { AicerineService } from '../dist/service/service.js';
import { simAdminConfig } from '../dist/sim/connect-info.js';
import { openStore } from '../dist/store/store.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'aicerine.js');
const argv = process.argv.slice(2);
const steadyAt = argv.indexOf('--steady');
const steadyCycles = steadyAt >= 0 ? Number(argv[steadyAt + 1]) : 3;
const changesAt = argv.indexOf('--changes');
const changes = changesAt >= 0 ? Number(argv[changesAt + 1]) : 0;
const profileAt = argv.indexOf('--profile');
const profileDir = profileAt >= 0 ? argv[profileAt + 1] : undefined;
const valued = new Set(['--steady', '--changes', '--profile']);
const positional = argv.filter((a, i) => !a.startsWith('--') && !valued.has(argv[i - 1]));
const hosts = Number(positional[0] ?? 5000);
const servers = Number(positional[1] ?? 100000);
const withPrometheus = !argv.includes('--no-prometheus');
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

console.log(`date ${new Date().toISOString()}, load average ${load()}, node ${process.version}`);
const spec = `${hosts},${servers},${Math.round(servers / 100)},1,10,5`;
const child = spawn(process.execPath, [cli, 'sim', '--synth', spec, '--port', '0', '--load', 'generated'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const authUrl = await new Promise((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
    const m = /export OS_AUTH_URL=(\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  child.on('exit', (code) => reject(new Error(`aicerine sim exited with ${code}`)));
});
process.on('exit', () => child.kill());
process.on('SIGINT', () => process.exit(130));
const origin = new URL(authUrl).origin;

const dir = mkdtempSync(join(tmpdir(), 'aic-bench-service-'));
const { config } = await parseServiceConfig(
  {
    credentials: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
    store: { url: 'sqlite:aicerine.db' },
    defaults: { mode: 'observe' },
  },
  { baseDir: dir },
);
const common = {
  config: simAdminConfig(authUrl, 'secret', 'bench service'),
  timeoutMs: 300_000,
  breaker: { consecutiveFailures: 1000, halfOpenAfterMs: 1000 },
  retry: { maxRetries: 5, initialDelayMs: 200, maxDelayMs: 5000 },
};
const session = await openSession({
  ...common,
  credential: { kind: 'reader', label: 'reader (bench)' },
  ...(withPrometheus ? { prometheusUrl: `${origin}/prometheus` } : {}),
});
const actuator = await Actuator.open({ ...common, credential: { label: 'actuator (bench)' } });
const store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
const service = new AicerineService({
  config,
  store,
  reader: session,
  actuator,
  clock: { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
  logger: silentLogger,
});

// The simulator's CPU seconds so far (Linux /proc; utime + stime in clock ticks of 1/100 s).
const simCpu = () => {
  try {
    const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
};
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Boots `n` small servers on hosts spread over the cloud (so over every aggregate). */
async function makeChanges(n, round) {
  const names = service.latestSnapshot()?.hosts.map((h) => h.name) ?? [];
  for (let i = 0; i < n && names.length > 0; i++) {
    const host = names[Math.floor(((i + 0.5) * names.length) / n + round * 7) % names.length];
    const post = () =>
      fetch(`${origin}/sim/servers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: `bench-change-${round}-${i}`,
          host,
          flavor: { name: 'm1.tiny', vcpus: 1, ramMB: 512, diskGB: 1 },
        }),
      });
    // A kept-alive socket the simulator closed while the cycle ran fails the first POST before
    // it is sent ("other side closed"): sent again on a fresh socket, it is not a second boot.
    const res = await post().catch((e) => {
      if (e?.cause?.code === 'UND_ERR_SOCKET') return post();
      throw e;
    });
    if (res.status !== 201)
      throw new Error(`sim: POST /sim/servers on ${host}: ${res.status} ${await res.text()}`);
  }
}

const rows = [];
let inspector;
if (profileDir !== undefined) {
  mkdirSync(profileDir, { recursive: true });
  inspector = new Session();
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 500 });
}

async function cycle(kind, changed = 0, profileAs = undefined) {
  if (inspector && profileAs) await inspector.post('Profiler.start');
  const cpu0 = ownCpu();
  const sim0 = simCpu();
  const t = performance.now();
  const r = await service.runCycle();
  const seconds = (performance.now() - t) / 1000;
  const cpu = ownCpu() - cpu0;
  const sim = simCpu() - sim0;
  if (inspector && profileAs) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(join(profileDir, `${profileAs}.cpuprofile`), JSON.stringify(profile));
  }
  // Stored this cycle: a plan kept because nothing changed is not stored again.
  const planned = r.aggregates.filter((a) => a.planId !== null && a.unchanged !== true).length;
  const unchanged = r.aggregates.filter((a) => a.unchanged === true).length;
  const row = {
    kind,
    calls: r.callCount,
    full: r.full,
    recordSeconds: r.recordSeconds,
    seconds,
    cpu,
    sim,
    aggregates: r.aggregates.length,
    planned,
    load: load(),
  };
  rows.push(row);
  console.log(
    `${kind}: ${row.calls} calls, ${row.seconds.toFixed(1)} s (record ${row.recordSeconds.toFixed(1)} s, loop ${(row.seconds - row.recordSeconds).toFixed(1)} s; cpu: service ${cpu.toFixed(1)} s, simulator ${sim.toFixed(1)} s), ${row.aggregates} aggregates, ${unchanged} unchanged (${planned} plans stored)${changed > 0 ? `, after ${changed} changes` : ''}, load ${row.load}`,
  );
}

await cycle('first cycle (full read)', 0, 'first');
for (let i = 0; i < steadyCycles; i++) {
  if (changes > 0) await makeChanges(changes, i);
  await cycle(`steady cycle ${i + 1}`, changes, `steady-${i + 1}`);
}
await service.stop();
await store.close();
rmSync(dir, { recursive: true, force: true });

const steady = rows.slice(1);
const mid = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const median =
  steady.length === 0
    ? undefined
    : {
        calls: mid(steady.map((r) => r.calls)),
        seconds: mid(steady.map((r) => r.seconds)),
        recordSeconds: mid(steady.map((r) => r.recordSeconds)),
        cpu: mid(steady.map((r) => r.cpu)),
        sim: mid(steady.map((r) => r.sim)),
      };
console.log(`\n${hosts} hosts / ${servers} servers, ${withPrometheus ? 'with' : 'without'} Prometheus`);
console.log('| cycle | calls | seconds | record | plan, check, store | cpu service | cpu simulator |');
console.log('|---|---|---|---|---|---|---|');
const line = (label, r) =>
  console.log(
    `| ${label} | ${r.calls} | ${r.seconds.toFixed(1)} | ${r.recordSeconds.toFixed(1)} | ${(r.seconds - r.recordSeconds).toFixed(1)} | ${r.cpu.toFixed(1)} | ${r.sim.toFixed(1)} |`,
  );
line('first (full read)', rows[0]);
if (median)
  line(
    `steady, ${changes > 0 ? `${changes} changes each` : 'no changes'} (median of ${steady.length})`,
    median,
  );
child.kill();
