// The service configuration as written (aicerine.yaml): every key, its type and its meaning.
// docs/configuration.md is generated from this schema and src/config/defaults.ts
// (`npm run docs:config`), so the descriptions here are the reference page.
import { z } from 'zod';
import { nonEmpty, nonNegInt, posInt, positive } from '../formats/schema-helpers.js';
import { DURATION_HINT, parseDuration } from './duration.js';
import { parseWindow, WINDOW_GRAMMAR } from './windows.js';

const EXAMPLE_WINDOW = 'Sat 22:00 - Sun 06:00 Europe/Paris';
const bool = () => z.boolean({ error: 'expected true or false' });
// The error param also words unrecognized_keys, which the loader rewords with a suggestion.
const mapping = <S extends z.core.$ZodLooseShape>(shape: S) =>
  z.strictObject(shape, { error: 'expected a mapping' });
const map = <V extends z.core.SomeType>(value: V) =>
  z.record(z.string(), value, { error: 'expected a mapping' });

/** Type names shown in the reference page for keys whose JSON type says too little. */
const typeLabel = (label: string) => ({ typeLabel: label });

export const duration = () =>
  z
    .string({ error: DURATION_HINT })
    .transform((s, ctx) => {
      const ms = parseDuration(s);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: DURATION_HINT, input: s });
        return z.NEVER;
      }
      return ms;
    })
    .meta(typeLabel('duration'));

const fraction = () => {
  const m = { error: 'expected a fraction between 0 and 1' };
  return z.number(m).min(0, m).max(1, m).meta(typeLabel('fraction'));
};

const windowText = () =>
  z
    .string({ error: `expected a window: ${WINDOW_GRAMMAR}` })
    .transform((s, ctx) => {
      const r = parseWindow(s);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: r.error, input: s });
        return z.NEVER;
      }
      return r.window;
    })
    .meta(typeLabel('window'));

const secretSources = {
  passwordFile: nonEmpty()
    .optional()
    .describe('file holding the password (first line); relative paths are relative to this file'),
  passwordEnv: nonEmpty().optional().describe('environment variable holding the password'),
};

const applicationCredential = mapping({
  authUrl: nonEmpty().describe('Keystone URL (https://keystone.example.com/v3)'),
  id: nonEmpty().describe('the application credential id (not a secret)'),
  secretFile: nonEmpty()
    .optional()
    .describe('file holding the secret (first line); relative paths are relative to this file'),
  secretEnv: nonEmpty().optional().describe('environment variable holding the secret'),
  secret: nonEmpty()
    .optional()
    .describe('the secret itself, written here; refused unless allowInlineSecrets is true'),
  regionName: nonEmpty().optional().describe('region of the endpoints to use'),
  interface: z
    .enum(['public', 'internal', 'admin'])
    .optional()
    .describe('endpoint interface of the catalog (default public)'),
  cacert: nonEmpty()
    .optional()
    .describe('PEM CA bundle to verify TLS with; relative paths are relative to this file'),
});

const credential = mapping({
  cloud: nonEmpty()
    .optional()
    .describe(
      'entry of clouds.yaml (merged with secure.yaml), found where the openstack CLI looks; without any key, OS_CLOUD or the OS_* variables',
    ),
  applicationCredential: applicationCredential
    .optional()
    .describe('an application credential by reference: its id here, its secret in a file or a variable'),
  inline: map(z.unknown())
    .optional()
    .describe('a clouds.yaml entry written here, secrets included; refused unless allowInlineSecrets is true')
    .meta(typeLabel('clouds.yaml entry')),
}).refine((c) => [c.cloud, c.applicationCredential, c.inline].filter((x) => x !== undefined).length <= 1, {
  error: 'give one of cloud, applicationCredential or inline',
});

const hotLimit = mapping({
  above: fraction().describe('used fraction of the physical capacity'),
  for: duration().describe('how long it must stay above before the host counts as an emergency'),
}).nullable();

const bound = mapping({
  min: positive().describe('lowest ratio Aicerine may write'),
  max: positive().describe('highest ratio Aicerine may write'),
}).superRefine((b, ctx) => {
  // On min, with both values: the pair is what is wrong, not the mapping as a whole.
  if (b.min > b.max)
    ctx.addIssue({
      code: 'custom',
      path: ['min'],
      input: b.min,
      message: `min ${b.min} is above max ${b.max}`,
    });
});

export const aggregateSchema = mapping({
  mode: z
    .enum(['observe', 'assisted', 'active'])
    .optional()
    .describe(
      'observe: plan and store, never act; assisted: act on moves an operator approved; active: act inside the windows',
    ),
  paused: bool().optional().describe('stop starting migrations in this aggregate (plans are still made)'),
  onPause: z
    .enum(['finish', 'abort'])
    .optional()
    .describe('what happens to migrations in flight when this aggregate or the whole service is paused'),
  windows: z
    .array(windowText(), { error: `expected a list of windows such as ["${EXAMPLE_WINDOW}"]` })
    .optional()
    .describe(`maintenance windows, ${WINDOW_GRAMMAR}; empty: never (emergencies still run)`),
  emergencies: mapping({
    evacuateDisabledReasonPrefix: nonEmpty()
      .nullable()
      .optional()
      .describe(
        'a host disabled with a reason starting with this is evacuated at once, outside the windows; null: never',
      ),
    memory: hotLimit
      .optional()
      .describe('a host whose used memory stays above a limit is relieved outside the windows; null: never'),
    cpu: hotLimit
      .optional()
      .describe('a host whose CPU use stays above a limit is relieved outside the windows; null: never'),
  })
    .optional()
    .describe('moves that run outside the windows, on their own budget (active mode only)'),
  budgets: mapping({
    perCycle: nonNegInt().optional().describe('moves started per control-loop cycle'),
    perWindow: nonNegInt().optional().describe('moves started per maintenance-window opening'),
    perDay: nonNegInt().optional().describe('moves started in any 24 hours'),
    emergency: mapping({
      perCycle: nonNegInt().optional().describe('emergency moves started per cycle'),
      perDay: nonNegInt().optional().describe('emergency moves started in any 24 hours'),
    })
      .optional()
      .describe('the emergency budget: emergency moves count here only, never against the others'),
  })
    .optional()
    .describe('how many moves may start'),
  policy: z
    .union([nonEmpty(), map(z.unknown())], {
      error: 'expected a policy file path or a policy mapping',
    })
    .optional()
    .describe(
      'the planner policy: a file path, or the same keys inline (docs/policy.md), its mode spread, pack or repair-only; replaces the inherited policy as a whole',
    )
    .meta(typeLabel('path or policy mapping')),
  vcpuRatio: mapping({
    target: positive().describe('VCPU allocation ratio of a host that runs cool'),
    floor: positive().describe('lowest VCPU allocation ratio written to a host that runs hot'),
    step: positive().optional().describe('change per adjustment'),
    lowerAbove: fraction()
      .optional()
      .describe('measured CPU contention (steal/ready fraction) above which the ratio is lowered'),
    restoreBelow: fraction()
      .optional()
      .describe('contention below which the ratio is raised back towards the target (hysteresis)'),
  })
    .nullable()
    .optional()
    .describe(
      "prevention: keep each host's VCPU allocation_ratio in Placement between floor and target; null: off",
    ),
  concurrency: mapping({
    perSourceHost: posInt()
      .optional()
      .describe("outgoing live migrations per host (Nova's max_concurrent_live_migrations)"),
    perSourceHostOverrides: map(posInt())
      .optional()
      .describe('per host name, where nova.conf sets max_concurrent_live_migrations differently'),
    perDestinationHost: posInt().optional().describe('incoming live migrations per host'),
    perAggregate: posInt().optional().describe('live migrations in flight in the aggregate'),
  })
    .optional()
    .describe('how many live migrations may run at once'),
  approvals: mapping({
    expireAfter: duration().describe('an approval not yet carried out lapses after this (assisted mode)'),
  })
    .optional()
    .describe('assisted mode: operator approvals of plans or moves'),
  cooldowns: mapping({
    server: duration().optional().describe('a server moved is not moved again before this'),
    aggregate: duration().optional().describe('after an execution ends, the aggregate waits this long'),
    afterAbort: duration()
      .optional()
      .describe(
        'the servers of moves an aborted execution did not complete are not moved again before this (0s: off)',
      ),
    onAbort: z
      .enum(['cooldown', 'quarantine'])
      .optional()
      .describe(
        'the servers of moves an aborted execution did not complete: held for afterAbort (cooldown), or quarantined until an operator releases them (quarantine)',
      ),
  })
    .optional()
    .describe('quiet times that make oscillation impossible'),
  retry: mapping({
    attempts: posInt().optional().describe('tries of one move before its server is quarantined'),
    backoffBase: duration().optional().describe('wait after the first failure; doubles per failure'),
    backoffMax: duration().optional().describe('longest wait between tries'),
  })
    .optional()
    .describe('failed moves: exponential backoff counted from the failure, then quarantine'),
  migrationTimeout: mapping({
    margin: z
      .number({ error: 'expected a number of at least 1' })
      .min(1, { error: 'expected a number of at least 1' })
      .optional()
      .describe('the timeout is the learned duration times this'),
    floor: duration().optional().describe('shortest timeout'),
    ceiling: duration().optional().describe('longest timeout'),
    abortGiveUp: duration()
      .optional()
      .describe(
        'an abort Nova has not confirmed after this long ends the move failed ("abort not confirmed") and quarantines its server',
      ),
  })
    .optional()
    .describe('when a live migration is aborted for taking too long'),
  dataHealth: mapping({
    maxSnapshotAge: duration().optional().describe('older cloud data: no action this cycle'),
    maxMetricAge: duration().optional().describe('older Prometheus samples count as missing'),
    maxMissingFraction: fraction()
      .optional()
      .describe('more hosts or servers than this without data: no action this cycle'),
  })
    .optional()
    .describe('the data-health gate: stale or partial data stops action, with the reason stored'),
  ratioBounds: map(bound)
    .optional()
    .describe(
      'per resource class (VCPU, MEMORY_MB): allocation ratios the operator accepts; checked by check',
    ),
  cpuAllocationRatioInNovaConf: bool()
    .optional()
    .describe('nova.conf on these hosts sets cpu_allocation_ratio (nova-compute then rewrites Placement)'),
  ramAllocationRatioInNovaConf: bool()
    .optional()
    .describe('nova.conf on these hosts sets ram_allocation_ratio'),
});

const sshEndpoint = {
  user: nonEmpty().describe('user to log in as'),
  port: posInt().optional().describe('SSH port (22 when not given)'),
  privateKeyFile: nonEmpty().describe(
    'file holding the private key (OpenSSH or PEM, no passphrase); relative to this file. Never the key itself',
  ),
};

export const validationSchema = mapping({
  image: nonEmpty().describe('Glance image of the canary, by name or id'),
  flavor: nonEmpty().describe(
    'existing flavor whose size the canary flavor copies; the canary flavor is a private one made per batch, requiring the batch trait',
  ),
  network: nonEmpty().describe(
    'network the canary is attached to: a Neutron network uuid, `auto`, or `none` (then ssh.address must name the target)',
  ),
  keyPair: nonEmpty()
    .nullable()
    .optional()
    .describe(
      "key pair (of Aicerine's user) Nova puts on the canary; null: none (an image that trusts the key)",
    ),
  ssh: mapping({
    ...sshEndpoint,
    address: nonEmpty()
      .optional()
      .describe(
        "where to SSH: a template with {address} (the canary's first fixed address) and {host} (the compute host name)",
      ),
    jump: mapping({ host: nonEmpty().describe('jump host name or address'), ...sshEndpoint })
      .nullable()
      .optional()
      .describe('a bastion to connect through; null: direct'),
  }).describe('how the check reaches the canary'),
  check: nonEmpty().describe('command run on the canary; exit status 0 passes the host'),
  bootTimeout: duration().optional().describe('from the boot request until the canary must be ACTIVE'),
  sshTimeout: duration()
    .optional()
    .describe("from ACTIVE until the canary's SSH server must accept the login (tried every few seconds)"),
  checkTimeout: duration().optional().describe('how long the check command may run'),
  projectName: nonEmpty()
    .optional()
    .describe(
      'dedicated project of each batch: this name, a dash and the batch id; deleted with all it holds',
    ),
  aggregateName: nonEmpty()
    .optional()
    .describe('dedicated host aggregate of each batch: this name, a dash and the batch id'),
  traitName: z
    .string({ error: 'expected a custom trait name such as CUSTOM_AICERINE_VALIDATION' })
    .regex(/^CUSTOM_[A-Z0-9_]+$/, {
      error: 'expected a custom trait name such as CUSTOM_AICERINE_VALIDATION',
    })
    .optional()
    .describe('custom trait of each batch: this name, an underscore and the batch id'),
  role: nonEmpty()
    .optional()
    .describe("role Aicerine's user gets on the dedicated project (it must allow booting onto a named host)"),
});

const storageKind = z.enum(['shared', 'local']);

export const serviceSchema = mapping({
  allowInlineSecrets: bool()
    .optional()
    .describe('accept passwords and credential secrets written in this file (otherwise refused)'),
  credentials: mapping({
    reader: credential
      .optional()
      .describe('makes every read: Nova, Placement, Neutron (docs/credentials.md, aicerine credentials)'),
    actuator: credential
      .optional()
      .describe(
        'makes only the writes: live and cold migrations, aborts, force-completes, compute service disable/enable, Placement inventory writes; required by assisted and active aggregates',
      ),
    tasks: credential
      .optional()
      .describe("operator tasks' canary servers, in the tasks' own project; absent: no canaries"),
  })
    .optional()
    .describe('the credentials Aicerine runs with (references, not secrets)'),
  openstack: mapping({
    reader: credential.optional().describe('credentials.reader'),
    actuator: credential.optional().describe('credentials.actuator'),
  })
    .optional()
    .describe('the former name of credentials (reader and actuator only); still read, with a warning'),
  prometheus: mapping({
    url: nonEmpty().describe('Prometheus base URL'),
    metricsPolicy: nonEmpty()
      .optional()
      .describe('metrics policy file (docs/openstack.md); relative to this file'),
    profiles: mapping({
      enabled: bool().optional().describe('record load profiles from history (default: true)'),
      history: duration()
        .optional()
        .describe('history read at each refresh, 7d to 28d (default 14d), hourly points'),
      refresh: duration()
        .optional()
        .describe("how often an aggregate's profiles are read again (default 1d, at least 1h)"),
      resolution: z
        .enum(['hour-of-week', 'hour-of-day'], { error: 'expected "hour-of-week" or "hour-of-day"' })
        .optional()
        .describe('slots: 168 hours of the week, or 24 weekday and 24 weekend hours (default hour-of-week)'),
      quantile: fraction().optional().describe('the quantile each slot keeps (default 0.9)'),
      timeZone: nonEmpty().optional().describe('IANA time zone the hours are counted in (default UTC)'),
      minSamples: posInt()
        .optional()
        .describe('a slot with fewer samples is unknown and plans on current load (default 2)'),
    })
      .optional()
      .describe(
        'load profiles: per-server history reduced to a weekly shape (docs/openstack.md, "Load profiles")',
      ),
  })
    .optional()
    .describe('where measured load comes from; without it, plans use flavor sizes'),
  store: mapping({
    url: nonEmpty()
      .optional()
      .describe(
        'sqlite:PATH (relative to this file), or mysql://USER@HOST[:PORT]/DB, or mysql://USER@localhost/DB?socket=PATH (mariadb:// too)',
      ),
    ...secretSources,
    synchronous: z
      .enum(['full', 'normal'])
      .optional()
      .describe(
        'SQLite only: full: each commit waits until it is on disk (survives a power loss); normal: survives a killed process, a power loss may lose the last commits (docs/executor.md, "The journal")',
      ),
    retention: mapping({
      plans: duration().optional().describe('plans, their moves and approvals'),
      executions: duration().optional().describe('executions with their Nova migration ids'),
      audit: duration().optional().describe('the audit log of every action and who approved it'),
      costSamples: duration().optional().describe('measured migration durations the cost model learns from'),
      ratioChanges: duration().optional().describe('allocation-ratio changes and their reasons'),
      dataHealth: duration().optional().describe('data-health verdicts'),
    })
      .optional()
      .describe('how long records are kept'),
  })
    .optional()
    .describe('where plans, executions, approvals and the audit log are kept'),
  coordination: mapping({
    kind: z
      .enum(['local', 'etcd'])
      .optional()
      .describe(
        'local: one process, locks in memory; etcd: several replicas sharing a MariaDB/MySQL store (docs/replicas.md)',
      ),
    replicaId: nonEmpty()
      .optional()
      .describe("this replica's name, unique among the replicas (default: the host name)"),
    leaseTtl: duration()
      .optional()
      .describe('how long an aggregate stays without an owner after its replica dies (etcd lease TTL)'),
    rebalanceInterval: duration()
      .optional()
      .describe('how often a replica reads who is alive and takes or hands over aggregates'),
    etcd: mapping({
      endpoints: z
        .array(nonEmpty(), { error: 'expected a list of URLs' })
        .min(1, { error: 'expected at least one endpoint' })
        .describe('client URLs of the etcd cluster (http:// or https://)'),
      prefix: nonEmpty()
        .optional()
        .describe('key prefix of every Aicerine key: several installations may share etcd'),
      username: nonEmpty().optional().describe('etcd user, when etcd has authentication on'),
      ...secretSources,
      caFile: nonEmpty().optional().describe('CA certificate (PEM) of an https etcd; relative to this file'),
      certFile: nonEmpty().optional().describe('client certificate (PEM) for etcd; relative to this file'),
      keyFile: nonEmpty().optional().describe('client key (PEM) for etcd; relative to this file'),
    })
      .optional()
      .describe('the etcd cluster; required with kind: etcd'),
  })
    .optional()
    .describe('one process, or several replicas owning aggregates through etcd leases'),
  notifications: mapping({
    rabbitmqUrl: nonEmpty().describe("amqp[s]://USER@HOST[:PORT]/VHOST of Nova's versioned notifications"),
    ...secretSources,
  })
    .optional()
    .describe(
      'optional: wake the loop on Nova notifications; without it, periodic reconcile does it, slower',
    ),
  api: mapping({
    host: nonEmpty()
      .optional()
      .describe(
        'address the REST API and dashboard listen on (docs/api.md); 0.0.0.0 or :: for every interface',
      ),
    port: z
      .number({ error: 'expected a port from 0 to 65535' })
      .int({ error: 'expected a port from 0 to 65535' })
      .min(0, { error: 'expected a port from 0 to 65535' })
      .max(65535, { error: 'expected a port from 0 to 65535' })
      .optional()
      .describe('TCP port of the API (0: any free port, said at start)'),
    policy: nonEmpty()
      .optional()
      .describe('API policy file: Keystone roles per action (docs/api.md); relative to this file'),
    enabled: bool().optional().describe('false: serve runs the loop without the API'),
    allowedHosts: z
      .array(nonEmpty(), { error: 'expected a list of host names' })
      .optional()
      .describe(
        'more names the API answers to in the Host header (the name of a reverse proxy, a DNS alias); the addresses it listens on are always allowed, any other name gets 421 (DNS rebinding)',
      ),
    loginThrottle: mapping({
      perName: posInt()
        .optional()
        .describe('failed logins of one user name in the window before POST /v1/auth/tokens answers 429'),
      perAddress: posInt()
        .optional()
        .describe('failed logins from one client address in the window before 429'),
      window: duration().optional().describe('how long a failed login counts'),
    })
      .optional()
      .describe('password guessing: failed logins counted per user name and per client address'),
  })
    .optional()
    .describe('the REST API, /metrics and the dashboard that serve starts next to the loop'),
  stateDir: nonEmpty()
    .optional()
    .describe(
      'folder for the files the service keeps besides its store (recorded snapshots); relative to this file',
    ),
  cycleInterval: duration().optional().describe('time between control-loop cycles'),
  paused: bool().optional().describe('global pause: no aggregate starts a migration'),
  concurrency: mapping({
    global: posInt().optional().describe('live migrations in flight across all aggregates'),
  })
    .optional()
    .describe('limits across all aggregates'),
  budgets: mapping({
    perCycle: nonNegInt().optional().describe('moves started per cycle across all aggregates'),
    perDay: nonNegInt().optional().describe('moves started in any 24 hours across all aggregates'),
  })
    .optional()
    .describe("global budgets, on top of each aggregate's; absent: none"),
  storage: mapping({
    default: storageKind.describe('where disks of servers nothing else declares live'),
    aggregates: map(storageKind).optional().describe('per aggregate name'),
  })
    .optional()
    .describe('shared or local disks (docs/openstack.md, shared storage); below what the cloud declares'),
  tasks: mapping({
    doneRetention: duration().optional().describe('how long a DONE task is kept before a worker purges it'),
    evacuate: mapping({
      emergency: bool()
        .optional()
        .describe("evacuate-compute ignores the aggregate's maintenance windows, as an emergency does"),
      mayStopMetadataKey: nonEmpty()
        .optional()
        .describe(
          'server metadata key that, set to "true", lets evacuate-compute stop the server to cold-migrate it',
        ),
    })
      .optional()
      .describe('evacuate-compute (docs/tasks.md)'),
    validation: validationSchema
      .optional()
      .describe(
        'validate-compute: the canary server booted onto a host before it takes customers (docs/tasks.md)',
      ),
  })
    .optional()
    .describe('operator tasks: validate, evacuate, purge (docs/tasks.md)'),
  maintenance: mapping({
    parallel: posInt()
      .optional()
      .describe(
        'hosts of a campaign out at once, at most (fewer when the rest cannot take their servers); `maintenance start --parallel` overrides it',
      ),
    validate: bool()
      .optional()
      .describe(
        'run validate-compute on a host before re-admitting it (needs tasks.validation); `--validate` / `--no-validate` override it',
      ),
    returnWhen: z
      .enum(['done', 'service-restart'])
      .optional()
      .describe(
        'how a handed-over host counts as back: done (`aicerine maintenance done HOST`) or service-restart (nova-compute goes down, then up); `maintenance done` always works',
      ),
    webhook: z
      .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })
      .optional()
      .describe('POSTed a JSON event when a host is ready for maintenance'),
    command: z
      .array(nonEmpty(), { error: 'expected a list of strings: the program, then its arguments' })
      .min(1, { error: 'expected at least the program' })
      .optional()
      .describe(
        'run (no shell; AICERINE_HOST, AICERINE_CAMPAIGN, AICERINE_AGGREGATE in its environment) when a host is ready for maintenance',
      ),
    pollInterval: duration()
      .optional()
      .describe("how often a campaign's driver looks at its hosts, their tasks and nova-compute"),
  })
    .optional()
    .describe('rolling maintenance of an aggregate (docs/maintenance.md)'),
  defaults: aggregateSchema.optional().describe('settings every aggregate inherits'),
  aggregates: map(aggregateSchema)
    .optional()
    .describe('per Nova aggregate name (_unassigned_ for hosts in none): settings over the defaults'),
});

export type AggregateInput = z.input<typeof aggregateSchema>;
export type AggregateLayer = z.output<typeof aggregateSchema>;
export type ServiceInput = z.input<typeof serviceSchema>;
export type ServiceParsed = z.output<typeof serviceSchema>;
export type ValidationParsed = z.output<typeof validationSchema>;
