// Steady-state recording cost: the incremental recorder against the simulator in its own
// process (as a cloud would be), at 5,000 hosts / 100,000 servers by default. Prints, as
// medians over runs, the calls and seconds of the first (full) cycle, of a cycle with no
// changes, and of a cycle after about 50 changes (live migrations, deletions, new servers, a
// disabled service, an inventory change). Run after `npm run build`:
//   node bench/record.mjs [hosts servers] [--runs N] [--no-prometheus]

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IncrementalRecorder } from '../dist/cloud/incremental-record.js';
import { openSession } from '../dist/cloud/session.js';
import { simAdminConfig } from '../dist/sim/connect-info.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'aicerine.js');
const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 3;
const positional = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--runs');
const hosts = Number(positional[0] ?? 5000);
const servers = Number(positional[1] ?? 100000);
const withPrometheus = !argv.includes('--no-prometheus');
const mb = () => Math.round(process.memoryUsage().rss / 1048576);

const spec = `${hosts},${servers},${Math.round(servers / 100)},1,10,5`;
const t = performance.now();
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
const origin = new URL(authUrl).origin;
// The simulator must not outlive the bench, whatever ends it.
process.on('exit', () => child.kill());
process.on('SIGINT', () => process.exit(130));
console.log(
  `cloud (separate process): ${hosts} hosts, ${servers} servers; ready in ${Math.round(performance.now() - t)} ms`,
);

const session = await openSession({
  config: simAdminConfig(authUrl, 'secret', 'bench'),
  // A per-server Prometheus query at 100,000 servers is tens of MB of JSON: on a busy machine
  // it takes longer than the default 30 s.
  timeoutMs: 300_000,
  // Stale keep-alive sockets on a loaded machine fail a few parallel requests at once: retry
  // them rather than open the breaker (retries are counted in the calls and shown apart).
  breaker: { consecutiveFailures: 1000, halfOpenAfterMs: 1000 },
  retry: { maxRetries: 5, initialDelayMs: 200, maxDelayMs: 5000 },
  ...(withPrometheus ? { prometheusUrl: `${origin}/prometheus` } : {}),
});
const recorder = new IncrementalRecorder(session);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const rows = [];
function report(kind, cycles) {
  const c = (k) => median(cycles.map(k));
  const row = {
    kind,
    runs: cycles.length,
    calls: c((x) => x.callCount),
    seconds: c((x) => x.seconds),
    read: c((x) => x.timings.readSeconds),
    build: c((x) => x.timings.buildSeconds),
    metrics: c((x) => x.timings.metricsSeconds),
  };
  rows.push(row);
  const by = cycles.at(-1).callsByService;
  const svc = Object.entries(by)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `${kind}: median of ${row.runs}: ${row.calls} calls, ${row.seconds.toFixed(2)} s ` +
      `(read ${row.read.toFixed(2)} s, build ${row.build.toFixed(2)} s, Prometheus ${row.metrics.toFixed(2)} s); ` +
      `last run: ${svc}; ${JSON.stringify(cycles.at(-1).changes)}; retries so far ${session.stats.retries}; rss ${mb()} MiB`,
  );
}

// First cycle, then full re-reads on request: the cost of a full read.
const fulls = [];
let last;
for (let i = 0; i < runs; i++) {
  if (i > 0) recorder.requestFullRead('bench');
  last = await recorder.cycle();
  if (!last.full) throw new Error('expected a full cycle');
  fulls.push(last);
}
report('full cycle', fulls);

const idles = [];
for (let i = 0; i < runs; i++) {
  await sleep(1000);
  const c = await recorder.cycle();
  if (c.full) throw new Error(`unexpected full cycle: ${c.fullReason}`);
  idles.push(c);
}
report('steady, no changes', idles);

// About 50 changes between cycles, through the APIs an operator or Nova would use.
const nova = session.nova;
const headers = await nova.headers();
let seq = 0;
async function makeChanges(snapshot) {
  const hostOf = new Map(snapshot.hosts.map((h) => [h.name, h]));
  const free = (h, rc) => {
    const inv = h.inventory[rc];
    return (inv.total - inv.reserved) * inv.allocationRatio - (h.usage[rc] ?? 0);
  };
  const grouped = new Set(snapshot.serverGroups.flatMap((g) => g.members));
  const candidates = snapshot.servers.filter(
    (s) =>
      s.status === 'ACTIVE' &&
      s.taskState === null &&
      !grouped.has(s.id) &&
      hostOf.get(s.host)?.service.status === 'enabled',
  );
  const pick = () =>
    candidates.splice(Math.floor((((seq++ * 7919) % 9973) / 9973) * candidates.length), 1)[0];
  const enabled = snapshot.hosts.filter((h) => h.service.status === 'enabled');
  let made = 0;
  // 40 live migrations to a named host with room in the same zone.
  for (let i = 0; i < 40; i++) {
    const s = pick();
    const src = hostOf.get(s.host);
    const from = (seq * 131) % enabled.length;
    const dest = [...enabled.slice(from), ...enabled.slice(0, from)].find(
      (h) =>
        h.name !== s.host &&
        h.availabilityZone === src.availabilityZone &&
        free(h, 'VCPU') >= s.flavor.vcpus &&
        free(h, 'MEMORY_MB') >= s.flavor.ramMB + 4096,
    );
    if (!dest) continue;
    dest.usage.MEMORY_MB = (dest.usage.MEMORY_MB ?? 0) + s.flavor.ramMB;
    dest.usage.VCPU = (dest.usage.VCPU ?? 0) + s.flavor.vcpus;
    await nova.liveMigrate(s.id, dest.name);
    made++;
  }
  // 5 deletions.
  for (let i = 0; i < 5; i++) {
    const s = pick();
    await nova.client.request({ method: 'DELETE', path: `/servers/${s.id}`, headers });
    made++;
  }
  // 3 new servers (the simulator's shortcut: Nova's boot API is not simulated).
  for (let i = 0; i < 3; i++) {
    const h = enabled[(seq * 31 + i) % enabled.length];
    const res = await fetch(`${origin}/sim/servers`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: `bench-${seq}-${i}`,
        host: h.name,
        flavor: { name: 'bench.small', vcpus: 1, ramMB: 1024, diskGB: 10 },
      }),
    });
    if (res.status === 201) made++;
  }
  // A service disabled for maintenance, and an allocation ratio changed.
  const svc = (await nova.listServices()).find((x) => x.host === enabled[seq % enabled.length].name);
  await nova.setServiceStatus(svc.id, 'disabled', `bench ${seq}`);
  const rp = last.providers.get(enabled[(seq + 1) % enabled.length].name);
  await session.placement.setAllocationRatio(rp.uuid, 'VCPU', 4 + (seq % 3));
  return made + 2;
}

const busy = [];
for (let i = 0; i < runs; i++) {
  const made = await makeChanges(last.snapshot);
  await sleep(1500);
  last = await recorder.cycle();
  if (last.full) throw new Error(`unexpected full cycle: ${last.fullReason}`);
  console.log(`  run ${i + 1}: ${made} changes made`);
  busy.push(last);
}
report('steady, ~50 changes', busy);

console.log('\n| cycle | calls | seconds | of which Nova/Placement reads | build | Prometheus |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.kind} | ${r.calls} | ${r.seconds.toFixed(2)} | ${r.read.toFixed(2)} | ${r.build.toFixed(2)} | ${r.metrics.toFixed(2)} |`,
  );
}
child.kill();
