// Simulator at scale: builds a 5,000-host, 100,000-server cloud, serves it, and records a
// snapshot of it through the same clients `aicerine record` uses. Prints build time, memory,
// record time and API calls. Run after `npm run build`: node bench/sim.mjs [hosts servers]

import { recordSnapshot } from '../dist/cloud/record.js';
import { openSession } from '../dist/cloud/session.js';
import { SimClock } from '../dist/sim/clock.js';
import { startSimServer } from '../dist/sim/http/server.js';
import { generatedLoadModel } from '../dist/sim/load.js';
import { SimCloud } from '../dist/sim/model.js';
import { synthesizeSnapshot } from '../dist/snapshot/synth.js';

const hosts = Number(process.argv[2] ?? 5000);
const servers = Number(process.argv[3] ?? 100000);
const mb = () => Math.round(process.memoryUsage().rss / 1048576);

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
const sim = await startSimServer({ cloud, password: 'pw' });
console.log(
  `cloud: ${hosts} hosts, ${servers} servers; synth ${Math.round(synthMs)} ms, sim build ${Math.round(buildMs)} ms, rss ${mb()} MiB`,
);

t = performance.now();
const session = await openSession({
  config: {
    name: 'bench',
    method: 'password',
    auth: {
      authUrl: sim.authUrl,
      username: 'admin',
      password: 'pw',
      userDomainName: 'Default',
      projectName: 'admin',
      projectDomainName: 'Default',
    },
    interface: 'public',
    insecure: false,
    origin: 'bench',
  },
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
