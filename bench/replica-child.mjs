// One replica of bench/replicas.mjs in its own process (built code, dist/): MariaDB store, etcd
// locks, a fenced executor and aggregate ownership with the service's hooks. Prints a line for
// every ownership change and execution end; SIGTERM hands everything over and exits.
import { Actuator } from '../dist/cloud/actuator.js';
import { openSession } from '../dist/cloud/session.js';
import { EtcdLockService } from '../dist/coordination/etcd-locks.js';
import { AggregateOwnership } from '../dist/coordination/ownership.js';
import { Executor } from '../dist/executor/index.js';
import { OpenStackExecutorCloud } from '../dist/executor/openstack-cloud.js';
import { scaledClock } from '../dist/executor/ports.js';
import { ExecutorService } from '../dist/executor/service.js';
import { resolveExecutorSettings } from '../dist/executor/settings.js';
import { MigrationSlots } from '../dist/executor/slots.js';
import { replicaOwnershipHooks } from '../dist/service/replica.js';
import { simAdminConfig } from '../dist/sim/connect-info.js';
import { openStore } from '../dist/store/index.js';

const say = (line) => process.stdout.write(`${line}\n`);
const [simUrl, storeJson, etcdEndpoint, prefix, replicaId, aggregatesCsv, ttlMs] = process.argv.slice(2);
const status = await (await fetch(`${simUrl}/sim/status`)).json();
const clock = scaledClock(Date.parse(status.time), status.speed);
const session = await openSession({
  config: simAdminConfig(`${simUrl}/identity/v3`, 'secret', `replica ${replicaId}`),
  timeoutMs: 10_000,
  retry: { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100 },
});
const store = await openStore(JSON.parse(storeJson));
const locks = new EtcdLockService({ endpoints: [etcdEndpoint], prefix, callTimeoutMs: 2000 });
const settings = resolveExecutorSettings({
  pollSeconds: 2,
  settleSeconds: 2,
  limits: { perSourceHost: 1, perDestinationHost: 2, perAggregate: 8, global: 200 },
  retry: { attempts: 4, backoffBaseSeconds: 5, backoffMaxSeconds: 30 },
});
let ownership = null;
const executor = new Executor({
  journal: store.fencedJournal((a) => ownership.fenceOf(a)),
  cloud: new OpenStackExecutorCloud(
    session,
    await Actuator.open({ config: session.config, credential: { label: 'actuator (bench replica)' } }),
  ),
  clock,
  settings,
  slots: new MigrationSlots(settings.limits),
  timeoutFor: () => 1800,
});
const log = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: (msg, f) => say(`log ${msg} ${JSON.stringify(f ?? {})}`),
};
const service = new ExecutorService(executor, {
  isPaused: () => false,
  isOwned: (a) => ownership?.holds(a) ?? false,
  onEnded: (s, a) => say(`ended ${a} ${s.state} ${Date.now()}`),
  logger: log,
});
const hooks = replicaOwnershipHooks({
  store,
  executor: service,
  replicaId,
  now: () => clock.now(),
  logger: log,
  onAcquired: (a, resumed) => say(`owns ${a} ${ownership.fenceOf(a).fence} ${resumed.length} ${Date.now()}`),
});
ownership = new AggregateOwnership({
  locks,
  replicaId,
  aggregates: () => aggregatesCsv.split(','),
  ttlMs: Number(ttlMs),
  intervalMs: 500,
  hooks: {
    ...hooks,
    lost: (a) => {
      hooks.lost(a);
      say(`lost ${a} ${Date.now()}`);
    },
  },
  logger: log,
});
process.on('SIGTERM', () => {
  void (async () => {
    await ownership.stop();
    say(`stopped ${Date.now()}`);
    await locks.close();
    await store.close();
    process.exit(0);
  })();
});
await ownership.start();
say(`ready ${replicaId} ${Date.now()}`);
