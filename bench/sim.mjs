// Simulator at scale: builds a 5,000-host, 100,000-server cloud, serves it, and records a
// snapshot of it through the same clients `aicerine record` uses. Prints build time, memory,
// record time and API calls. Run after `npm run build`: node bench/sim.mjs [hosts servers]

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordSnapshot } from '../dist/cloud/record.js';
import { openSession } from '../dist/cloud/session.js';
import { SimClock } from '../dist/sim/clock.js';
import { simAdminConfig } from '../dist/sim/connect-info.js';
import { startSimServer } from '../dist/sim/http/server.js';
import { generatedLoadModel } from '../dist/sim/load.js';
import { SimCloud } from '../dist/sim/model.js';
import { synthesizeSnapshot } from '../dist/snapshot/synth.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'aicerine.js');
const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const hosts = Number(args[0] ?? 5000);
const servers = Number(args[1] ?? 100000);
// --separate: the simulator runs in its own process, as a cloud would, so the recorder and
// the simulated services do not share one event loop (on 2 cores they then run in parallel).
const separate = process.argv.includes('--separate');
const mb = () => Math.round(process.memoryUsage().rss / 1048576);

let sim;
let child;
if (separate) {
  const spec = `${hosts},${servers},${Math.round(servers / 100)},1,10,5`;
  const t0 = performance.now();
  child = spawn(process.execPath, [cli, 'sim', '--synth', spec, '--port', '0', '--load', 'generated'], {
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
  sim = { authUrl, url: origin, close: async () => child.kill() };
  console.log(
    `cloud (separate process): ${hosts} hosts, ${servers} servers; ready in ${Math.round(performance.now() - t0)} ms`,
  );
} else {
  let t = performance.now();
  const snap = synthesizeSnapshot({
    hosts,
    servers,
    groups: Math.round(servers / 100),
    seed: 1,
    aggregates: 10,
    disabled: 5,
  });
  const synthMs = performance.now() - t;
  t = performance.now();
  const cloud = new SimCloud(snap, { clock: new SimClock({ speed: 1 }), load: generatedLoadModel() });
  const buildMs = performance.now() - t;
  sim = await startSimServer({ cloud, password: 'pw' });
  console.log(
    `cloud: ${hosts} hosts, ${servers} servers; synth ${Math.round(synthMs)} ms, sim build ${Math.round(buildMs)} ms, rss ${mb()} MiB`,
  );
}

const t = performance.now();
const session = await openSession({
  config: simAdminConfig(sim.authUrl, separate ? 'secret' : 'pw', 'bench'),
  prometheusUrl: `${sim.url}/prometheus`,
});
const steps = [];
let last = performance.now();
const { snapshot } = await recordSnapshot(session, {
  onProgress: (step) => {
    const now = performance.now();
    steps.push(`${step} ${Math.round(now - last)} ms`);
    last = now;
  },
});
const recordMs = performance.now() - t;
console.log(
  `record: ${snapshot.hosts.length} hosts, ${snapshot.servers.length} servers in ${(recordMs / 1000).toFixed(1)} s; ${session.stats.summary()}; rss ${mb()} MiB`,
);
// Each step's time is printed against the step that follows it (onProgress marks starts).
console.log(`  time before each step: ${steps.join(', ')}`);
await sim.close();
