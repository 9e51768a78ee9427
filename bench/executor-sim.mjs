// The simulated cloud of bench/executor.mjs. By default the bench forks this file and the
// simulator runs in its own process, as a real Nova and Placement run in their own: its HTTP
// handling then does not share the executor's event loop, and each process's CPU is counted
// apart. `--in-process` starts it in the bench's own process instead (startBenchSim below).
//
// Child protocol (IPC, one message each way):
//   parent {kind: 'start', snap, speed} -> child {kind: 'ready', authUrl, wallMs, simMs}
//   parent {kind: 'mark'}               -> child {kind: 'marked'}         (CPU counted from here)
//   parent {kind: 'report'}             -> child {kind: 'report', cpu: {user, system} µs since
//                                          the mark, endpoints: [[endpoint, calls], ...]}
//   parent {kind: 'stop'}               -> the child closes its server and exits.

import { SimClock } from '../dist/sim/clock.js';
import { startSimServer } from '../dist/sim/http/server.js';
import { staticLoadModel } from '../dist/sim/load.js';
import { SimCloud } from '../dist/sim/model.js';

/**
 * One kind of read or action per request line: ids and query values folded (where the calls per
 * move go). The simulator's own control endpoints (/sim/...) are not the executor's calls.
 */
export function endpointOf(line) {
  const [method, target] = line.split(' ');
  if (!target?.startsWith('/') || target.startsWith('/sim/')) return null;
  const [path, query] = target.split('?');
  const shape = path
    .replace(/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$)/g, '/{id}')
    .replace(/\/[0-9a-f]{32}(?=\/|$)/g, '/{id}')
    .replace(/\/\d+(?=\/|$)/g, '/{n}');
  const keys = query ? [...new URLSearchParams(query).keys()].sort().join('&') : '';
  return `${method} ${shape}${keys ? `?${keys}` : ''}`;
}

/**
 * The simulator serving `snap` at clock x`speed`, counting requests by endpoint. `wallMs` and
 * `simMs` are one reading of both clocks: another process on this machine follows the simulated
 * clock as simMs + (Date.now() - wallMs) x speed.
 */
export async function startBenchSim(snap, speed) {
  // The wall reading the clock's last answer was computed from, to hand out an exact pair.
  let lastWall = 0;
  const cloud = new SimCloud(snap, {
    clock: new SimClock({ speed, wallMs: () => (lastWall = Date.now()) }),
    load: staticLoadModel(),
  });
  const byEndpoint = new Map();
  const sim = await startSimServer({
    cloud,
    password: 'secret',
    log: (line) => {
      const e = endpointOf(line);
      if (e) byEndpoint.set(e, (byEndpoint.get(e) ?? 0) + 1);
    },
  });
  const simMs = cloud.clock.nowMs();
  return { sim, cloud, byEndpoint, wallMs: lastWall, simMs };
}

if (process.argv[2] === '--child' && process.send) {
  let started = null;
  let cpu0 = process.cpuUsage();
  process.on('message', async (msg) => {
    if (msg.kind === 'start') {
      started = await startBenchSim(msg.snap, msg.speed);
      process.send({
        kind: 'ready',
        authUrl: started.sim.authUrl,
        wallMs: started.wallMs,
        simMs: started.simMs,
      });
    } else if (msg.kind === 'mark') {
      cpu0 = process.cpuUsage();
      process.send({ kind: 'marked' });
    } else if (msg.kind === 'report') {
      process.send({ kind: 'report', cpu: process.cpuUsage(cpu0), endpoints: [...started.byEndpoint] });
    } else if (msg.kind === 'stop') {
      await started?.sim.close();
      process.disconnect();
      process.exit(0);
    }
  });
  // The parent gone (a crash, ^C): nobody will ask for anything more.
  process.on('disconnect', () => process.exit(0));
}
