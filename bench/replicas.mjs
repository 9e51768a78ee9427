// Replicas at the issue's size: 3 replicas x 20 aggregates at 5,000 hosts against the simulator
// (slow migrations), on a private MariaDB (mariadbd) and etcd (etcd-server) started here on
// loopback. Every aggregate executes a stored plan; meanwhile the owner of aggregates is killed
// with kill -9 several times (each time restarted after the takeover), then every replica is
// restarted in turn (SIGTERM, hand-over). Prints takeover and hand-over times (medians), and
// checks from the simulator's own records that no server was migrated twice.
// The replicas are the replica tests' own child (test/coordination/fixtures/replica-child.ts:
// serve's executor wiring), run from source through Vite's module runner like theirs.
//   npm run build && node bench/replicas.mjs [--aggregates 20] [--hosts 5000] [--moves 24]
//     [--kills 5] [--ttl 5000] [--speed 2]
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Etcd3 } from 'etcd3';
import { createConnection } from 'mysql2/promise';
import { assignAggregates } from '../dist/coordination/rendezvous.js';
import { SimClock } from '../dist/sim/clock.js';
import { startSimServer } from '../dist/sim/http/server.js';
import { staticLoadModel } from '../dist/sim/load.js';
import { SimCloud } from '../dist/sim/model.js';
import { openStore } from '../dist/store/index.js';

const args = process.argv.slice(2);
const flag = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return Number(i >= 0 ? args[i + 1] : def);
};
const AGGREGATES = flag('aggregates', 20);
const HOSTS = flag('hosts', 5000);
const MOVES = flag('moves', 24);
const KILLS = flag('kills', 5);
const TTL_MS = flag('ttl', 5000);
const SPEED = flag('speed', 2);
const REPLICAS = ['r1', 'r2', 'r3'];
const SOURCES = 3;
const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor((s.length - 1) / 2)];
};
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'aic-bench-replicas-'));
const children = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

// MariaDB, as the store tests start it.
const socketPath = join(dir, 'mariadbd.sock');
await run('mariadb-install-db', [
  '--no-defaults',
  `--datadir=${join(dir, 'db')}`,
  '--user=root',
  '--auth-root-authentication-method=normal',
  '--skip-test-db',
]);
children.push(
  spawn(
    'mariadbd',
    [
      '--no-defaults',
      `--datadir=${join(dir, 'db')}`,
      `--socket=${socketPath}`,
      `--pid-file=${join(dir, 'mariadbd.pid')}`,
      '--user=root',
      '--skip-networking',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=128M',
      '--innodb-flush-log-at-trx-commit=2',
    ],
    { stdio: 'ignore' },
  ),
);
for (let i = 0; ; i++) {
  try {
    const c = await createConnection({ socketPath, user: 'root' });
    await c.query('create database aicerine');
    await c.end();
    break;
  } catch (e) {
    if (i > 300) throw e;
    await sleep(100);
  }
}
const storeOptions = { kind: 'mysql', socketPath, user: 'root', database: 'aicerine' };

// etcd, as the coordination tests start it.
const [clientPort, peerPort] = [await freePort(), await freePort()];
const etcdUrl = `http://127.0.0.1:${clientPort}`;
const peerUrl = `http://127.0.0.1:${peerPort}`;
const etcdLog = openSync(join(dir, 'etcd.log'), 'a');
children.push(
  spawn(
    'etcd',
    [
      '--name=bench',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=bench=${peerUrl}`,
      '--log-level=warn',
      '--logger=zap',
    ],
    { stdio: ['ignore', etcdLog, etcdLog] },
  ),
);
{
  const probe = new Etcd3({ hosts: etcdUrl });
  for (let i = 0; ; i++) {
    try {
      await probe.get('probe').string();
      break;
    } catch (e) {
      if (i > 300) throw e;
      await sleep(100);
    }
  }
  probe.close();
}

// The cloud: HOSTS hosts in AGGREGATES aggregates; in each, 3 sources send MOVES servers to 4 hosts.
const names = Array.from({ length: AGGREGATES }, (_, i) => `agg-${String(i + 1).padStart(2, '0')}`);
const perAggregate = Math.floor(HOSTS / AGGREGATES);
const hosts = [];
const servers = [];
const plans = new Map();
let n = 0;
for (const agg of names) {
  const hs = Array.from({ length: perAggregate }, (_, i) => `${agg}-h${String(i + 1).padStart(4, '0')}`);
  for (const h of hs)
    hosts.push({
      name: h,
      availabilityZone: 'nova',
      aggregates: [agg],
      service: { state: 'up', status: 'enabled', forcedDown: false },
      inventory: {
        VCPU: { total: 64, reserved: 0, allocationRatio: 4 },
        MEMORY_MB: { total: 262144, reserved: 512, allocationRatio: 1 },
        DISK_GB: { total: 4000, reserved: 0, allocationRatio: 1 },
      },
      usage: {},
    });
  const moves = [];
  for (let k = 0; k < MOVES; k++) {
    n++;
    const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const ramMB = [8192, 16384][n % 2];
    const from = hs[k % SOURCES];
    servers.push({
      id,
      name: `vm-${n}`,
      projectId: 'b0000000000000000000000000000001',
      host: from,
      status: 'ACTIVE',
      taskState: null,
      flavor: { name: `f${ramMB}`, vcpus: 2, ramMB, diskGB: 20 },
      sharedStorage: true,
      load: { cpu: 1, memoryMB: ramMB / 2 },
    });
    moves.push({ step: k + 1, wave: 1, serverId: id, from, to: hs[SOURCES + (k % 4)], estimatedSeconds: 15 });
  }
  plans.set(agg, moves);
}
const cloud = new SimCloud(
  {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'bench-replicas',
    hosts,
    servers,
    serverGroups: [],
  },
  { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() },
);
const sim = await startSimServer({ cloud, password: 'secret' });
const store = await openStore(storeOptions);

// Replicas: the replica tests' own child (serve's executor wiring), run from source like theirs.
const owns = []; // { aggregate, replica, fence, at }
const lost = [];
const live = new Map();
function startReplica(id) {
  const child = spawn(
    process.execPath,
    [
      new URL('../test/executor/fixtures/run-ts.mjs', import.meta.url).pathname,
      new URL('../test/coordination/fixtures/replica-child.ts', import.meta.url).pathname,
      sim.url,
      JSON.stringify(storeOptions),
      etcdUrl,
      '/bench/',
      id,
      names.join(','),
      String(TTL_MS),
      'interval=500',
      'perAggregate=8',
      'callTimeout=2000',
      'sessionTimeout=10000',
      'moveTimeout=1800',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  live.set(id, child);
  let buffered = '';
  let ready;
  const readyP = new Promise((r) => {
    ready = r;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) {
      const w = line.split(' ');
      if (w[0] === 'owns') owns.push({ aggregate: w[1], replica: id, fence: Number(w[2]), at: Number(w[4]) });
      else if (w[0] === 'lost') lost.push({ aggregate: w[1], replica: id, at: Number(w[2]) });
      else if (w[0] === 'ready') ready();
      else if (w[0] === 'log' && process.env.BENCH_VERBOSE) process.stderr.write(`${id}: ${line}\n`);
    }
  });
  return { child, ready: readyP };
}
const ownerOf = (a) =>
  owns
    .filter((o) => o.aggregate === a)
    .sort((x, y) => x.fence - y.fence)
    .at(-1)?.replica ?? null;
async function waitFor(what, check, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
const unfinished = async () => (await store.listUnfinishedExecutions()).length;
/** Every aggregate held by the replica the sharing gives it: no hand-over under way. */
const settled = () => {
  const want = assignAggregates(names, REPLICAS);
  return names.every((a) => ownerOf(a) === want.get(a));
};

const loadBefore = loadavg();
const t0 = Date.now();
for (const id of REPLICAS) await startReplica(id).ready;
await waitFor('every aggregate owned as the sharing says', settled, 60_000);
const share = REPLICAS.map((r) => names.filter((a) => ownerOf(a) === r).length);
// The plans as each owner's loop would store and start them, once every replica is up.
for (const [aggregate, moves] of plans)
  await store.createExecution(
    {
      id: `exec-${aggregate}`,
      aggregate,
      planId: null,
      startedAt: new Date(cloud.clock.nowMs()).toISOString(),
      startedBy: 'bench',
    },
    moves,
  );
for (const child of live.values()) child.kill('SIGUSR2');

// kill -9, KILLS times: the victim is the owner of the most aggregates with a migration in flight.
const takeovers = [];
/** Per kill: the moves of the victim's executions not yet completed at the kill ("exec step"). */
const pendingAtKill = [];
for (let k = 0; k < KILLS && (await unfinished()) > 0; k++) {
  let victim = null;
  await waitFor(
    'a migration in flight',
    async () => {
      for (const a of names) {
        const o = ownerOf(a);
        if (o !== null && (await store.listMoves(`exec-${a}`)).some((m) => m.state === 'migrating')) {
          victim = o;
          return true;
        }
      }
      return (await unfinished()) === 0;
    },
    120_000,
  );
  if (victim === null) break;
  const theirs = names.filter((a) => ownerOf(a) === victim);
  const pending = [];
  for (const a of theirs)
    for (const m of await store.listMoves(`exec-${a}`))
      if (m.state !== 'completed') pending.push(`exec-${a} ${m.step}`);
  pendingAtKill.push(pending);
  const killedAt = Date.now();
  live.get(victim).kill('SIGKILL');
  await waitFor('takeover', () => theirs.every((a) => ownerOf(a) !== victim), 120_000);
  for (const a of theirs)
    takeovers.push(
      owns.find((o) => o.aggregate === a && o.at > killedAt && o.replica !== victim).at - killedAt,
    );
  await startReplica(victim).ready;
  await waitFor('the restarted replica taking its share back', settled, 60_000);
}

// Rolling restart: SIGTERM each replica (it hands its aggregates over), start it again.
const handOvers = [];
if ((await unfinished()) > 0)
  for (const id of REPLICAS) {
    const theirs = names.filter((a) => ownerOf(a) === id);
    const stoppedAt = Date.now();
    const child = live.get(id);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await waitFor('hand-over', () => theirs.every((a) => ownerOf(a) !== id), 120_000);
    for (const a of theirs) {
      const next = owns.find((o) => o.aggregate === a && o.at > stoppedAt && o.replica !== id);
      if (!next)
        throw new Error(
          `no new owner line for ${a} after ${stoppedAt}: ${JSON.stringify(owns.filter((o) => o.aggregate === a))}`,
        );
      handOvers.push(next.at - stoppedAt);
    }
    await startReplica(id).ready;
    await waitFor('the restarted replica taking its share back', settled, 60_000);
  }

await waitFor('every execution to finish', async () => (await unfinished()) === 0, 1_800_000);
const wallS = (Date.now() - t0) / 1000;

// The truth: the simulator's own migration records.
const perServer = new Map();
for (const m of cloud.migrations) perServer.set(m.server.uuid, (perServer.get(m.server.uuid) ?? 0) + 1);
const twice = [...perServer.values()].filter((c) => c > 1).length;
let completed = 0;
let other = 0;
const finalState = new Map();
const states = new Map();
for (const a of names)
  for (const m of await store.listMoves(`exec-${a}`)) {
    finalState.set(`exec-${a} ${m.step}`, m.state);
    states.set(m.state, (states.get(m.state) ?? 0) + 1);
    if (m.state === 'completed') completed++;
    else {
      other++;
      console.log(
        `  not completed: exec-${a} step ${m.step} ${m.serverId} ${m.from} -> ${m.to}: ${m.state}: ${m.detail}`,
      );
    }
  }
// The taken-over executions' moves still to do at each kill, and how they ended.
const afterKill = { pending: 0, completed: 0, skipped: 0, other: 0 };
for (const pending of pendingAtKill)
  for (const key of pending) {
    afterKill.pending++;
    const st = finalState.get(key);
    if (st === 'completed') afterKill.completed++;
    else if (st === 'skipped') afterKill.skipped++;
    else afterKill.other++;
  }
const bound = TTL_MS + 2000;
const loadAfter = loadavg();
const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(' ');

console.log(
  `replicas: ${REPLICAS.length} replicas x ${AGGREGATES} aggregates, ${hosts.length} hosts, ${AGGREGATES * MOVES} moves ` +
    `(simulator x${SPEED}, lease TTL ${TTL_MS} ms, rebalance every 500 ms); first share ${share.join('/')}`,
);
console.log(
  `  kill -9 takeover: ${takeovers.length} aggregates over ${pendingAtKill.length} kills, median ${median(takeovers)} ms, max ${Math.max(...takeovers)} ms ` +
    `(lease TTL + 2 s = ${bound} ms; ${takeovers.filter((t) => t > bound).length} over it)`,
);
console.log(
  `  taken-over executions: ${afterKill.pending} moves still to do at the kills, ${afterKill.completed} completed after the takeover, ${afterKill.skipped} skipped, ${afterKill.other} other`,
);
console.log(
  `  rolling restart hand-over: ${handOvers.length} aggregates, median ${median(handOvers)} ms, max ${Math.max(...handOvers)} ms`,
);
console.log(
  `  outcome: ${completed} moves completed, ${other} not (${[...states].map(([k, v]) => `${k} ${v}`).join(', ')}); simulator ${cloud.migrations.length} migrations, servers migrated twice: ${twice}; ${wallS.toFixed(0)} s wall`,
);
console.log(`  load average (1, 5, 15 min): before ${fmtLoad(loadBefore)}, after ${fmtLoad(loadAfter)}`);

for (const [id, child] of live) {
  if (child.exitCode !== null || child.signalCode !== null) continue;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  live.delete(id);
}
await store.close();
await sim.close();
process.exit(twice === 0 && other === 0 ? 0 : 1);
