// Built-in defaults, written as an operator would write them in aicerine.yaml. They are
// parsed by the same schema as the file, printed in docs/configuration.md with the reason for
// each (DEFAULT_WHY), and chosen so that a fresh install changes nothing until told to.
import { VALIDATION_DEFAULTS } from '../validation/settings.js';
import type { AggregateInput, ServiceInput } from './schema.js';

export const BUILTIN_AGGREGATE: AggregateInput = {
  mode: 'observe',
  paused: false,
  onPause: 'finish',
  windows: [],
  emergencies: {
    evacuateDisabledReasonPrefix: 'aicerine-evacuate',
    memory: { above: 0.95, for: '10m' },
    cpu: null,
  },
  budgets: { perCycle: 5, perWindow: 50, perDay: 100, emergency: { perCycle: 10, perDay: 50 } },
  vcpuRatio: null,
  concurrency: { perSourceHost: 1, perSourceHostOverrides: {}, perDestinationHost: 2, perAggregate: 4 },
  approvals: { expireAfter: '24h' },
  cooldowns: { server: '24h', aggregate: '15m', afterAbort: '24h', onAbort: 'cooldown' },
  retry: { attempts: 3, backoffBase: '10m', backoffMax: '6h' },
  migrationTimeout: { margin: 3, floor: '5m', ceiling: '2h', abortGiveUp: '15m' },
  dataHealth: { maxSnapshotAge: '15m', maxMetricAge: '5m', maxMissingFraction: 0.05 },
  ratioBounds: {},
};

/** Filled in when `vcpuRatio` is given without them. */
export const BUILTIN_VCPU_RATIO = { step: 0.5, lowerAbove: 0.1, restoreBelow: 0.05 } as const;

export const BUILTIN_SERVICE: ServiceInput = {
  allowInlineSecrets: false,
  credentials: { reader: {} },
  store: {
    url: 'sqlite:aicerine.sqlite',
    synchronous: 'full',
    retention: {
      plans: '90d',
      executions: '400d',
      audit: '400d',
      costSamples: '180d',
      ratioChanges: '400d',
      dataHealth: '30d',
    },
  },
  api: {
    host: '127.0.0.1',
    port: 8780,
    enabled: true,
    allowedHosts: [],
    loginThrottle: { perName: 5, perAddress: 20, window: '1m' },
  },
  stateDir: '.',
  coordination: { kind: 'local', leaseTtl: '15s', rebalanceInterval: '2s' },
  cycleInterval: '5m',
  paused: false,
  concurrency: { global: 10 },
  tasks: { doneRetention: '1d', evacuate: { emergency: true, mayStopMetadataKey: 'aicerine:may-stop' } },
  maintenance: { parallel: 1, validate: false, returnWhen: 'done', pollInterval: '10s' },
};

/** The service defaults as the reference page shows them: the built-ins, plus the defaults of
 * sections that are absent unless configured (tasks.validation needs an image and a check). */
export const SERVICE_DOC_DEFAULTS: Record<string, unknown> = {
  ...BUILTIN_SERVICE,
  tasks: { ...BUILTIN_SERVICE.tasks, validation: VALIDATION_DEFAULTS },
};

/** Why each default is what it is, by key path (aggregate keys under `defaults.`). */
export const DEFAULT_WHY: Record<string, string> = {
  'tasks.validation.bootTimeout':
    'a fake or fast hypervisor boots in seconds, a real one with a cold image cache in a few minutes',
  'tasks.validation.sshTimeout': "cloud-init and the guest's SSH server start well after Nova says ACTIVE",
  'tasks.validation.role':
    "Nova's default policy lets only a project admin boot onto a named host (os_compute_api:servers:create:forced_host)",
  'tasks.validation.ssh.address': "the canary's own address; set a template when it has no reachable one",
  allowInlineSecrets:
    'a configuration file is copied, diffed and pasted into tickets; secrets belong in clouds.yaml/secure.yaml or files readable by the service only',
  'credentials.reader': 'like every other command: OS_CLOUD, else the OS_* variables of an openrc',
  'store.url':
    'one file next to the configuration, no server to run; MariaDB only when several replicas share state',
  'store.synchronous':
    'the journal must not forget a migration it asked Nova for, whatever stops the machine; normal is for disks whose fsync costs the executor its pace',
  'store.retention.plans':
    'a quarter of plans answers "what did it want to do and why" for any recent incident',
  'store.retention.executions': 'over a year, so yearly audits and seasonal comparisons find every migration',
  'store.retention.audit': 'as long as executions: who approved what must outlive what was done',
  'store.retention.costSamples':
    'half a year of durations follows hardware and network changes without forgetting rare large servers',
  'store.retention.ratioChanges': 'as long as executions, to explain past placement decisions of Nova',
  'store.retention.dataHealth': 'a month shows recurring data problems; older verdicts have no use',
  'api.host':
    'loopback until the operator decides who may reach it (a reverse proxy with TLS, or an address of the management network)',
  'api.port': 'the port the operator commands (aicerine status, plans, ...) and the demo use by default',
  'api.policy':
    'the documented defaults (docs/api.md): reader reads, operator approves and aborts, admin reads the configuration',
  'api.enabled': 'operators approve plans and Prometheus scrapes /metrics through it',
  'api.allowedHosts':
    'only the listen addresses (and localhost on loopback): a page elsewhere cannot reach the API by pointing its own DNS name at it',
  'api.loginThrottle.perName':
    'a user mistyping a password a few times is not locked out, a guesser gets 5 tries a minute per name',
  'api.loginThrottle.perAddress': 'a few users behind one address (a jump host) log in without waiting',
  'api.loginThrottle.window':
    'a minute: long enough to make guessing slow, short enough not to lock anyone out for long',
  stateDir: 'next to the configuration, like the default SQLite store',
  'maintenance.parallel':
    'one host at a time is what an operator would do by hand; more only when asked, and never more than the rest can take',
  'maintenance.validate':
    'validation needs a canary image, flavor and SSH access configured (tasks.validation), which a fresh install has not',
  'maintenance.returnWhen':
    'the operator (or their automation) says when the work is done; a reboot alone does not say the patching succeeded',
  'maintenance.pollInterval':
    "a host's steps take minutes; ten seconds notices each step's end promptly at a few reads each time",
  'tasks.doneRetention':
    'a day to read what a finished task did; ERROR tasks stay until an operator removes them',
  'tasks.evacuate.emergency':
    'an operator who empties a host now means now: waiting for the next window would leave it half-empty',
  'tasks.evacuate.mayStopMetadataKey':
    "stopping a guest is the owner's call: only servers marked by their owner are stopped to move them",
  'coordination.kind':
    'one process needs no coordination engine; replicas are for operators who must survive the loss of a machine',
  'coordination.leaseTtl':
    'an aggregate waits this long for a new owner after a crash; shorter risks losing ownership to a GC pause or a slow network',
  'coordination.rebalanceInterval':
    'a joining or departing replica is noticed within seconds, at one small etcd read each time',
  cycleInterval:
    'Nova and Placement change on the scale of minutes; a cycle costs a few calls once the first full read is done',
  paused: 'running is the point of the service; the per-aggregate mode decides what it may do',
  'concurrency.global': 'matches the planner policy default; live migrations share the migration network',
  'defaults.mode': 'a new installation only plans and explains until an operator opts an aggregate in',
  'defaults.paused': 'the mode already keeps new aggregates from acting',
  'defaults.onPause':
    'aborting a live migration costs what it has already copied; finishing is usually quicker and always safe',
  'defaults.windows': 'no window means no routine moves: operators choose when guests may be paused briefly',
  'defaults.emergencies.evacuateDisabledReasonPrefix':
    'only a host an operator disabled with this exact reason is evacuated, so nothing happens by accident',
  'defaults.emergencies.memory':
    'a host whose memory stays nearly full risks the OOM killer; ten minutes rules out spikes',
  'defaults.emergencies.cpu':
    'CPU contention degrades but kills nothing; prevention (vcpuRatio) handles it without migrations',
  'defaults.budgets.perCycle':
    'a handful per cycle keeps each cycle reviewable and bounds the damage of a wrong plan',
  'defaults.budgets.perWindow':
    'enough to rebalance a typical aggregate in one night without saturating the migration network',
  'defaults.budgets.perDay': 'twice a window: at most two windows a day do full work',
  'defaults.budgets.emergency.perCycle': 'evacuating a host must make progress, but not flood the network',
  'defaults.budgets.emergency.perDay': 'a runaway emergency (flapping host) stops within a day',
  'defaults.vcpuRatio': "ratios are the operator's capacity decision: off until declared",
  'defaults.concurrency.perSourceHost':
    "Nova's max_concurrent_live_migrations default: more are queued by nova-compute anyway",
  'defaults.concurrency.perSourceHostOverrides': 'Nova default on every host unless declared',
  'defaults.concurrency.perDestinationHost':
    'two incoming copies fit in a 10 GbE link without stretching either much',
  'defaults.concurrency.perAggregate': 'keeps the migration network of one aggregate usable by its guests',
  'defaults.approvals.expireAfter':
    "an approval given in the afternoon still covers the night window, not next week's cloud",
  'defaults.cooldowns.server': 'a server moves at most once a day: no guest pays for oscillation',
  'defaults.cooldowns.afterAbort':
    'an abort is a decision: the same moves wait as long as a moved server would before the loop may plan them again',
  'defaults.cooldowns.onAbort':
    'an abort holds its servers for a while and then lets the loop decide again; quarantine is for sites that want a person to look first',
  'defaults.cooldowns.aggregate':
    'lets usage settle and metrics catch up after an execution before planning again',
  'defaults.retry.attempts': 'two retries separate transient faults from a server that cannot move',
  'defaults.retry.backoffBase': 'long enough for a busy source host or a stuck compute service to recover',
  'defaults.retry.backoffMax': 'a failing server is retried at most a few times a day before quarantine',
  'defaults.migrationTimeout.margin':
    'learned durations vary with dirty rate; three times covers the slow tail',
  'defaults.migrationTimeout.floor': 'small servers still need scheduling and RPC time',
  'defaults.migrationTimeout.ceiling':
    'a migration that has not converged in two hours will not; abort and retry later',
  'defaults.migrationTimeout.abortGiveUp':
    'Nova confirms a cancelled migration within seconds to minutes; a quarter of an hour without it means a stuck compute service',
  'defaults.dataHealth.maxSnapshotAge': 'three cycles: older data no longer describes the cloud',
  'defaults.dataHealth.maxMetricAge': 'a few scrape intervals; an older sample means the exporter is down',
  'defaults.dataHealth.maxMissingFraction':
    'a few hosts without metrics are tolerated (flavor sizes stand in), more are an outage',
  'defaults.ratioBounds': 'none declared: Aicerine writes no ratio and check says so',
};
