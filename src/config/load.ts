// Reads aicerine.yaml: validated as a whole (every problem reported at once, each naming the
// file, the key path, the value and what is allowed), defaults merged, policy and metrics
// files loaded, secrets located but never read. Nothing may start on a file that fails here.
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { cloudFromYamlEntry } from '../cloud/auth/clouds-yaml.js';
import { readSettingsFile } from '../cloud/config-file.js';
import { DEFAULT_PROFILE_SETTINGS, type ProfileSettings } from '../cloud/profiles/settings.js';
import { parseMetricsPolicy } from '../cloud/prometheus/policy.js';
import type { AggregateDeclarations, SiteDeclarations } from '../cloud/site.js';
import { formatPath, InputError, type InputIssue } from '../errors.js';
import { toInputIssues } from '../formats/schema-helpers.js';
import { DEFAULT_POLICY } from '../policy/defaults.js';
import { compilePolicy, loadPolicyFile } from '../policy/load.js';
import type { Policy } from '../policy/types.js';
import { isLoopback } from '../util/loopback.js';
import { setOwn } from '../util/maps.js';
import { validationSettings } from '../validation/settings.js';
import { readSecret } from './credentials.js';
import { BUILTIN_AGGREGATE, BUILTIN_SERVICE, BUILTIN_VCPU_RATIO } from './defaults.js';
import { formatDuration } from './duration.js';
import { closestKey, knownKeysAt } from './json-schema.js';
import { type AggregateLayer, aggregateSchema, type ServiceParsed, serviceSchema } from './schema.js';
import type {
  AggregateConfig,
  CoordinationConfig,
  CredentialRef,
  HotLimit,
  SecretSource,
  ServiceConfig,
  StoreConfig,
} from './types.js';

export interface LoadedConfig {
  config: ServiceConfig;
  /** Things that do not stop the service but an operator should fix (file permissions...). */
  warnings: string[];
  /** The metrics policy file's rules, when prometheus.metricsPolicy is set. */
  metricsPolicy: ReturnType<typeof parseMetricsPolicy> | null;
}

export interface ParseOptions {
  /** The file, for messages. */
  file?: string;
  /** Relative paths (store, policy and password files) are resolved from here. */
  baseDir: string;
}

const MIN_CYCLE_MS = 10_000;

/** zod's issues as ours; an unknown key names the closest known one. */
function configIssues(error: z.ZodError, input: unknown, file: string | undefined): InputIssue[] {
  const base = toInputIssues(error, input, file);
  return error.issues.flatMap((issue, i) => {
    if (issue.code !== 'unrecognized_keys') return [base[i]!];
    const known = knownKeysAt(issue.path);
    return issue.keys.map((key) => {
      const near = closestKey(key, known);
      return {
        file,
        path: formatPath([...issue.path, key]),
        message: near
          ? `unknown key (did you mean "${near}"?)`
          : `unknown key (expected one of ${known.join(', ')})`,
      };
    });
  });
}

/** Reads and validates the configuration file; throws InputError listing every problem. */
export async function loadServiceConfig(path: string): Promise<LoadedConfig> {
  const doc = await readSettingsFile(path);
  const loaded = await parseServiceConfig(doc, { file: path, baseDir: dirname(resolve(path)) });
  const mode = (await stat(path)).mode;
  const inline = hasInlineSecrets(loaded.config);
  const readers = [mode & 0o040 ? 'its group' : '', mode & 0o004 ? 'every user' : ''].filter(Boolean);
  if (readers.length > 0) {
    loaded.warnings.unshift(
      `${path} is readable by ${readers.join(' and ')} (mode ${octal(mode)}); it ${
        inline ? 'holds secrets' : 'names the credentials and the store'
      }: chmod 600 ${path}`,
    );
  }
  for (const f of secretFiles(loaded.config)) {
    const m = await stat(f.path).then(
      (st) => st.mode,
      () => undefined,
    );
    // A missing file is reported when the secret is read; here only who else can read it.
    if (m !== undefined && m & 0o044)
      loaded.warnings.push(
        `${f.path} (${f.what}) holds a secret and is readable by ${m & 0o004 ? 'every user' : 'its group'} (mode ${octal(m)}): chmod 600 ${f.path}`,
      );
  }
  const api = loaded.config.api;
  if (api.enabled && !isLoopback(api.host))
    loaded.warnings.push(
      `api.host is ${api.host}, reachable from other machines, and the API speaks plain HTTP: tokens and the dashboard's passwords cross the network in clear unless a TLS proxy in front of it is the only way in (docs/api.md, Security)`,
    );
  return loaded;
}

/**
 * What `serve` would find when it reads the secret files: each one that is missing, unreadable or
 * empty, named by its key and path.
 */
export async function secretFileProblems(c: ServiceConfig): Promise<InputIssue[]> {
  const out: InputIssue[] = [];
  for (const f of secretFiles(c))
    await readSecret({ kind: 'file', path: f.path }, {}, 'secret').catch((e: Error) =>
      out.push({ ...(c.file !== undefined ? { file: c.file } : {}), path: f.what, message: e.message }),
    );
  return out;
}

function hasInlineSecrets(c: ServiceConfig): boolean {
  const refs = [c.credentials.reader, c.credentials.actuator, c.credentials.tasks];
  const secrets = [
    c.store.kind === 'mysql' ? c.store.password : null,
    c.notifications?.password ?? null,
    ...refs.map((r) => (r?.kind === 'application-credential' ? r.secret : null)),
  ];
  return refs.some((r) => r?.kind === 'inline') || secrets.some((s) => s?.kind === 'inline');
}

/** The files that hold secrets the configuration points at (password and secret files). */
export function secretFiles(c: ServiceConfig): { path: string; what: string }[] {
  const out: { path: string; what: string }[] = [];
  const add = (s: SecretSource | null | undefined, what: string) => {
    if (s?.kind === 'file') out.push({ path: s.path, what });
  };
  add(c.store.kind === 'mysql' ? c.store.password : null, 'store.passwordFile');
  add(c.notifications?.password, 'notifications.passwordFile');
  for (const k of ['reader', 'actuator', 'tasks'] as const) {
    const r = c.credentials[k];
    if (r?.kind === 'application-credential')
      add(r.secret, `credentials.${k}.applicationCredential.secretFile`);
  }
  return out;
}

/** "640": the permission bits of a mode, as chmod takes them. */
function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(3, '0');
}

export async function parseServiceConfig(doc: unknown, opts: ParseOptions): Promise<LoadedConfig> {
  const { file } = opts;
  const input = doc ?? {};
  const parsed = serviceSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new InputError(configIssues(parsed.error, input, file));
  const u = parsed.data;
  const b = serviceSchema.parse(BUILTIN_SERVICE);
  const issues: InputIssue[] = [];
  const warnings: string[] = [];
  const issue = (path: string, message: string, value?: unknown) =>
    issues.push(value === undefined ? { file, path, message } : { file, path, message, value });
  const allowInline = u.allowInlineSecrets ?? false;

  type CredentialInput = NonNullable<NonNullable<ServiceParsed['credentials']>['reader']>;
  const credential = (c: CredentialInput, path: string): CredentialRef | undefined => {
    if (c.cloud) return { kind: 'clouds-yaml', cloud: c.cloud } satisfies CredentialRef;
    const ac = c.applicationCredential;
    if (ac) {
      const where = `${path}.applicationCredential`;
      const given = [ac.secretFile, ac.secretEnv, ac.secret].filter((x) => x !== undefined);
      if (given.length !== 1) {
        issue(where, 'give the secret one way: secretFile, secretEnv or (with allowInlineSecrets) secret');
        return undefined;
      }
      if (ac.secret !== undefined && !allowInline) {
        issue(
          `${where}.secret`,
          'holds a secret in this file: use secretFile or secretEnv, or set allowInlineSecrets: true',
          '(a secret)',
        );
        return undefined;
      }
      const secret: SecretSource = ac.secretFile
        ? { kind: 'file', path: resolve(opts.baseDir, ac.secretFile) }
        : ac.secretEnv
          ? { kind: 'env', variable: ac.secretEnv }
          : { kind: 'inline', value: ac.secret ?? '' };
      if (!parseUrl(ac.authUrl, ['http:', 'https:'])) {
        issue(`${where}.authUrl`, 'expected an http:// or https:// URL', ac.authUrl);
        return undefined;
      }
      return {
        kind: 'application-credential',
        authUrl: ac.authUrl,
        id: ac.id,
        secret,
        regionName: ac.regionName ?? null,
        interface: ac.interface ?? null,
        cacert: ac.cacert ? resolve(opts.baseDir, ac.cacert) : null,
        origin: `${file ?? 'configuration'} ${where}`,
      };
    }
    if (c.inline) {
      if (!allowInline) {
        issue(
          `${path}.inline`,
          'holds secrets in this file: name a clouds.yaml cloud instead (secure.yaml keeps its secrets), or set allowInlineSecrets: true',
        );
        return undefined;
      }
      try {
        return {
          kind: 'inline',
          config: cloudFromYamlEntry('inline', c.inline, `${file ?? ''} ${path}.inline`),
        } satisfies CredentialRef;
      } catch (e) {
        issue(`${path}.inline`, (e as Error).message);
        return undefined;
      }
    }
    return { kind: 'environment' } satisfies CredentialRef;
  };
  // `openstack:` is the section's former name: still read, and the operator is told.
  let section: 'credentials' | 'openstack' = 'credentials';
  if (u.openstack && u.credentials)
    issue('openstack', 'give credentials only (openstack is its former name)');
  else if (u.openstack) {
    section = 'openstack';
    warnings.push(
      `${file ?? 'the configuration'}: openstack: is the former name of credentials: (rename it)`,
    );
  }
  const creds = u.credentials ?? u.openstack ?? {};
  const reader = credential(creds.reader ?? {}, `${section}.reader`) ?? { kind: 'environment' };
  const actuator = creds.actuator ? (credential(creds.actuator, `${section}.actuator`) ?? null) : null;
  const tasks = u.credentials?.tasks ? (credential(u.credentials.tasks, 'credentials.tasks') ?? null) : null;

  const secret = (
    s: { passwordFile?: string | undefined; passwordEnv?: string | undefined },
    inUrl: string,
    path: string,
  ): SecretSource | null => {
    const given = [s.passwordFile, s.passwordEnv, inUrl || undefined].filter((x) => x !== undefined);
    if (given.length > 1)
      issue(path, 'give the password one way only: passwordFile, passwordEnv or in the URL');
    if (inUrl) {
      if (!allowInline) {
        issue(
          `${path}.url`,
          'holds a password: use passwordFile or passwordEnv, or set allowInlineSecrets: true',
          '(a URL with a password)',
        );
      }
      return { kind: 'inline', value: decodeURIComponent(inUrl) };
    }
    if (s.passwordFile) return { kind: 'file', path: resolve(opts.baseDir, s.passwordFile) };
    if (s.passwordEnv) return { kind: 'env', variable: s.passwordEnv };
    return null;
  };

  const store = parseStore(u.store ?? {}, b, opts.baseDir, issue, secret);
  const coordination = parseCoordination(u.coordination ?? {}, b, opts.baseDir, issue, secret, store?.kind);

  let notifications: ServiceConfig['notifications'] = null;
  if (u.notifications) {
    const url = parseUrl(u.notifications.rabbitmqUrl, ['amqp:', 'amqps:']);
    if (!url) {
      issue(
        'notifications.rabbitmqUrl',
        'expected amqp://USER@HOST[:PORT]/VHOST or amqps://...',
        u.notifications.rabbitmqUrl,
      );
    } else {
      const password = secret({ ...u.notifications }, url.password, 'notifications');
      url.password = '';
      notifications = { url: url.toString(), password };
    }
  }

  let prometheus: ServiceConfig['prometheus'] = null;
  let metricsPolicy: LoadedConfig['metricsPolicy'] = null;
  if (u.prometheus) {
    if (!parseUrl(u.prometheus.url, ['http:', 'https:'])) {
      issue('prometheus.url', 'expected an http:// or https:// URL', u.prometheus.url);
    }
    const policyFile = u.prometheus.metricsPolicy ? resolve(opts.baseDir, u.prometheus.metricsPolicy) : null;
    if (policyFile) {
      try {
        metricsPolicy = parseMetricsPolicy(await readSettingsFile(policyFile), policyFile);
      } catch (e) {
        if (e instanceof InputError) issues.push(...e.issues);
        else throw e;
      }
    }
    prometheus = {
      url: u.prometheus.url,
      metricsPolicyFile: policyFile,
      profiles: profileSettings(u.prometheus.profiles, issue),
    };
  }

  const cycleIntervalMs = u.cycleInterval ?? b.cycleInterval!;
  if (cycleIntervalMs < MIN_CYCLE_MS) {
    issue(
      'cycleInterval',
      `expected at least ${formatDuration(MIN_CYCLE_MS)}`,
      formatDuration(cycleIntervalMs),
    );
  }

  // Aggregates: built-in < defaults < the aggregate's own entry, leaf by leaf.
  const builtin = aggregateSchema.parse(BUILTIN_AGGREGATE);
  const defaultsLayer = u.defaults ?? {};
  const policies = new Map<AggregateLayer, Promise<{ policy: Policy; source: string } | undefined>>();
  const policyOf = (layer: AggregateLayer, path: string) => {
    let p = policies.get(layer);
    if (!p) {
      p = compileLayerPolicy(layer.policy, `${path}.policy`, opts, issues, warnings);
      policies.set(layer, p);
    }
    return p;
  };
  const resolveLayers = async (name: string, layers: { layer: AggregateLayer; path: string }[]) => {
    let policy: { policy: Policy; source: string } = { policy: DEFAULT_POLICY, source: 'built-in' };
    for (const l of layers) {
      if (l.layer.policy !== undefined) policy = (await policyOf(l.layer, l.path)) ?? policy;
    }
    const agg = resolveAggregate(name, layers, policy);
    checkAggregate(agg, layers, actuator !== null, issue);
    return agg;
  };
  const base = [
    { layer: builtin, path: 'defaults' },
    { layer: defaultsLayer, path: 'defaults' },
  ];
  const defaults = await resolveLayers('*', base);
  const aggregates: Record<string, AggregateConfig> = {};
  for (const [name, layer] of Object.entries(u.aggregates ?? {})) {
    setOwn(
      aggregates,
      name,
      await resolveLayers(name, [...base, { layer, path: formatPath(['aggregates', name]) }]),
    );
  }

  const unique = [...new Map(issues.map((i) => [`${i.file}|${i.path}|${i.message}`, i])).values()];
  if (unique.length > 0) throw new InputError(unique);

  const retention = b.store?.retention;
  const ur = u.store?.retention;
  const pick = (k: keyof NonNullable<typeof retention>) => ur?.[k] ?? retention?.[k] ?? 0;
  const storage = u.storage
    ? { default: u.storage.default, ...(u.storage.aggregates ? { aggregates: u.storage.aggregates } : {}) }
    : null;
  const site: SiteDeclarations = {
    defaults: defaults.site,
    aggregates: Object.fromEntries(Object.entries(aggregates).map(([k, a]) => [k, a.site])),
    ...(storage ? { storage } : {}),
  };
  return {
    config: {
      file,
      credentials: { reader, actuator, tasks },
      prometheus,
      store: store ?? { kind: 'sqlite', path: resolve(opts.baseDir, 'aicerine.sqlite') },
      coordination,
      retention: {
        plansMs: pick('plans'),
        executionsMs: pick('executions'),
        auditMs: pick('audit'),
        costSamplesMs: pick('costSamples'),
        ratioChangesMs: pick('ratioChanges'),
        dataHealthMs: pick('dataHealth'),
      },
      notifications,
      api: {
        enabled: u.api?.enabled ?? b.api?.enabled ?? true,
        host: u.api?.host ?? b.api?.host ?? '127.0.0.1',
        port: u.api?.port ?? b.api?.port ?? 8780,
        policyFile: u.api?.policy ? resolve(opts.baseDir, u.api.policy) : null,
        allowedHosts: (u.api?.allowedHosts ?? b.api?.allowedHosts ?? []).map((h) => h.toLowerCase()),
        loginThrottle: {
          perName: u.api?.loginThrottle?.perName ?? b.api?.loginThrottle?.perName ?? 5,
          perAddress: u.api?.loginThrottle?.perAddress ?? b.api?.loginThrottle?.perAddress ?? 20,
          windowMs: u.api?.loginThrottle?.window ?? b.api?.loginThrottle?.window ?? 60_000,
        },
      },
      stateDir: resolve(opts.baseDir, u.stateDir ?? b.stateDir ?? '.'),
      cycleIntervalMs,
      paused: u.paused ?? b.paused ?? false,
      concurrency: { global: u.concurrency?.global ?? b.concurrency?.global ?? 1 },
      budgets: { perCycle: u.budgets?.perCycle ?? null, perDay: u.budgets?.perDay ?? null },
      tasks: {
        doneRetentionMs: u.tasks?.doneRetention ?? b.tasks?.doneRetention ?? 86_400_000,
        evacuate: {
          emergency: u.tasks?.evacuate?.emergency ?? b.tasks?.evacuate?.emergency ?? true,
          mayStopMetadataKey:
            u.tasks?.evacuate?.mayStopMetadataKey ??
            b.tasks?.evacuate?.mayStopMetadataKey ??
            'aicerine:may-stop',
        },
      },
      maintenance: {
        parallel: u.maintenance?.parallel ?? b.maintenance?.parallel ?? 1,
        validate: u.maintenance?.validate ?? b.maintenance?.validate ?? false,
        returnWhen: u.maintenance?.returnWhen ?? b.maintenance?.returnWhen ?? 'done',
        webhook: u.maintenance?.webhook ?? null,
        command: u.maintenance?.command ?? null,
        pollIntervalMs: u.maintenance?.pollInterval ?? b.maintenance?.pollInterval ?? 10_000,
      },
      storage,
      validation: u.tasks?.validation ? validationSettings(u.tasks.validation, opts.baseDir) : null,
      defaults,
      aggregates,
      site,
    },
    warnings,
    metricsPolicy,
  };
}

const MIN_LEASE_TTL_MS = 3000;

function parseCoordination(
  c: NonNullable<ServiceParsed['coordination']>,
  builtin: ServiceParsed,
  baseDir: string,
  issue: (path: string, message: string, value?: unknown) => void,
  secret: (
    s: { passwordFile?: string | undefined; passwordEnv?: string | undefined },
    inUrl: string,
    path: string,
  ) => SecretSource | null,
  storeKind: StoreConfig['kind'] | undefined,
): CoordinationConfig {
  const kind = c.kind ?? builtin.coordination?.kind ?? 'local';
  if (kind === 'local') {
    if (c.etcd) issue('coordination.etcd', 'is only read with kind: etcd (kind is local)');
    return { kind: 'local' };
  }
  if ((storeKind ?? 'sqlite') === 'sqlite')
    issue(
      'coordination.kind',
      'etcd coordination runs replicas, and replicas share a MariaDB/MySQL store: set store.url to mysql://... (a SQLite store belongs to one process, which needs kind: local)',
      kind,
    );
  const leaseTtlMs = c.leaseTtl ?? builtin.coordination?.leaseTtl ?? 15_000;
  const rebalanceIntervalMs = c.rebalanceInterval ?? builtin.coordination?.rebalanceInterval ?? 2000;
  if (leaseTtlMs < MIN_LEASE_TTL_MS)
    issue(
      'coordination.leaseTtl',
      `expected at least ${formatDuration(MIN_LEASE_TTL_MS)}`,
      formatDuration(leaseTtlMs),
    );
  if (rebalanceIntervalMs >= leaseTtlMs)
    issue(
      'coordination.rebalanceInterval',
      `expected less than coordination.leaseTtl (${formatDuration(leaseTtlMs)})`,
      formatDuration(rebalanceIntervalMs),
    );
  const e = c.etcd;
  if (!e) {
    issue('coordination.etcd', 'kind: etcd needs coordination.etcd.endpoints');
    return { kind: 'local' };
  }
  e.endpoints.forEach((url, i) => {
    if (!parseUrl(url, ['http:', 'https:']))
      issue(
        `coordination.etcd.endpoints[${i}]`,
        'expected an http:// or https:// URL of an etcd client port',
        url,
      );
  });
  const password = secret(e, '', 'coordination.etcd');
  if (password !== null && !e.username)
    issue('coordination.etcd.username', 'a password is given: name the etcd user it belongs to');
  if ((e.certFile === undefined) !== (e.keyFile === undefined))
    issue('coordination.etcd', 'give certFile and keyFile together (a client certificate and its key)');
  if (e.certFile !== undefined && e.caFile === undefined)
    issue('coordination.etcd.caFile', 'a client certificate needs the CA of the https etcd');
  return {
    kind: 'etcd',
    replicaId: c.replicaId ?? hostname(),
    endpoints: e.endpoints,
    prefix: e.prefix ?? '/aicerine/',
    username: e.username ?? null,
    password,
    tls: e.caFile
      ? {
          caFile: resolve(baseDir, e.caFile),
          certFile: e.certFile ? resolve(baseDir, e.certFile) : null,
          keyFile: e.keyFile ? resolve(baseDir, e.keyFile) : null,
        }
      : null,
    leaseTtlMs,
    rebalanceIntervalMs,
  };
}

function parseUrl(text: string, protocols: string[]): URL | undefined {
  try {
    const url = new URL(text);
    return protocols.includes(url.protocol) ? url : undefined;
  } catch {
    return undefined;
  }
}

function parseStore(
  s: NonNullable<ServiceParsed['store']>,
  builtin: ServiceParsed,
  baseDir: string,
  issue: (path: string, message: string, value?: unknown) => void,
  secret: (
    s: { passwordFile?: string | undefined; passwordEnv?: string | undefined },
    inUrl: string,
    path: string,
  ) => SecretSource | null,
): StoreConfig | undefined {
  const text = s.url ?? builtin.store?.url ?? 'sqlite:aicerine.sqlite';
  const expected =
    'expected sqlite:PATH, mysql://USER@HOST[:PORT]/DATABASE or mysql://USER@localhost/DATABASE?socket=PATH';
  if (text.startsWith('sqlite:')) {
    // sqlite:///abs/path and sqlite:rel/path, as SQLAlchemy and most tools write them.
    const path = text.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!path) {
      issue('store.url', `${expected} (the SQLite file path is missing)`, text);
      return undefined;
    }
    if (s.passwordFile || s.passwordEnv)
      issue('store', 'a SQLite store has no password: remove passwordFile/passwordEnv');
    const synchronous = s.synchronous ?? builtin.store?.synchronous;
    // Only when set other than the default, so a default store reads as before.
    return {
      kind: 'sqlite',
      path: resolve(baseDir, path),
      ...(synchronous === 'normal' ? { synchronous } : {}),
    };
  }
  if (s.synchronous !== undefined)
    issue(
      'store.synchronous',
      'a setting of the SQLite store only: MariaDB commits as its server is configured',
      s.synchronous,
    );
  const url = parseUrl(text, ['mysql:', 'mariadb:']);
  if (!url) {
    issue('store.url', expected, text);
    return undefined;
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const user = decodeURIComponent(url.username);
  const socketPath = url.searchParams.get('socket');
  const extra = [...url.searchParams.keys()].filter((k) => k !== 'socket');
  if (!user) issue('store.url', `${expected} (the user is missing)`, text.replace(/:[^:@/]*@/, ':***@'));
  if (!database || database.includes('/'))
    issue('store.url', `${expected} (one database name after the host)`, text.replace(/:[^:@/]*@/, ':***@'));
  if (extra.length)
    issue(
      'store.url',
      `unknown parameter ${extra.map((k) => JSON.stringify(k)).join(', ')} (only socket=PATH)`,
    );
  const password = secret(s, url.password, 'store');
  return {
    kind: 'mysql',
    host: socketPath ? null : url.hostname,
    port: !socketPath && url.port ? Number(url.port) : null,
    socketPath: socketPath ? resolve(baseDir, socketPath) : null,
    user,
    database,
    password,
  };
}

async function compileLayerPolicy(
  value: AggregateLayer['policy'],
  path: string,
  opts: ParseOptions,
  issues: InputIssue[],
  warnings: string[],
): Promise<{ policy: Policy; source: string } | undefined> {
  if (value === undefined) return undefined;
  try {
    if (typeof value === 'string') {
      const file = resolve(opts.baseDir, value);
      const policy = await loadPolicyFile(file);
      if (policy.aggregates.length) {
        warnings.push(
          `${file}: "aggregates" is ignored where ${path} uses this policy (it applies to its aggregate)`,
        );
      }
      return { policy, source: file };
    }
    if ('aggregates' in value) {
      issues.push({
        file: opts.file,
        path: `${path}.aggregates`,
        message: "not used here: an aggregate's policy applies to that aggregate",
      });
      return undefined;
    }
    return { policy: compilePolicy(value), source: 'inline' };
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    for (const i of e.issues) {
      // Inline: the policy's own paths, below this key of this file.
      if (typeof value === 'string') issues.push(i);
      else
        issues.push({
          ...i,
          file: opts.file,
          path: i.path ? `${path}${i.path.startsWith('[') ? '' : '.'}${i.path}` : path,
        });
    }
    return undefined;
  }
}

type Layers = { layer: AggregateLayer; path: string }[];

function last<T>(layers: Layers, f: (l: AggregateLayer) => T | undefined): T | undefined {
  for (let i = layers.length - 1; i >= 0; i--) {
    const v = f(layers[i]!.layer);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The most specific layer that sets a key: where a problem with the merged value is reported. */
function ownerPath(layers: Layers, f: (l: AggregateLayer) => unknown): string {
  for (let i = layers.length - 1; i >= 0; i--) if (f(layers[i]!.layer) !== undefined) return layers[i]!.path;
  return layers[layers.length - 1]!.path;
}

function need<T>(layers: Layers, f: (l: AggregateLayer) => T | undefined): T {
  const v = last(layers, f);
  // The built-in layer (src/config/defaults.ts) sets every key read through need().
  if (v === undefined) throw new Error('internal: a built-in default is missing');
  return v;
}

const hot = (h: { above: number; for: number } | null): HotLimit | null =>
  h === null ? null : { above: h.above, forMs: h.for };

function resolveAggregate(
  name: string,
  layers: Layers,
  policy: { policy: Policy; source: string },
): AggregateConfig {
  const merged = <T>(f: (l: AggregateLayer) => Record<string, T> | undefined): Record<string, T> =>
    Object.assign({}, ...layers.map((l) => f(l.layer) ?? {}));
  const vcpu = need(layers, (l) => l.vcpuRatio);
  const windows = need(layers, (l) => l.windows);
  const ratioBounds = merged((l) => l.ratioBounds);
  const cpuConf = last(layers, (l) => l.cpuAllocationRatioInNovaConf);
  const ramConf = last(layers, (l) => l.ramAllocationRatioInNovaConf);
  return {
    name,
    mode: need(layers, (l) => l.mode),
    paused: need(layers, (l) => l.paused),
    onPause: need(layers, (l) => l.onPause),
    windows,
    emergencies: {
      evacuateDisabledReasonPrefix: need(layers, (l) => l.emergencies?.evacuateDisabledReasonPrefix),
      memory: hot(need(layers, (l) => l.emergencies?.memory)),
      cpu: hot(need(layers, (l) => l.emergencies?.cpu)),
    },
    budgets: {
      perCycle: need(layers, (l) => l.budgets?.perCycle),
      perWindow: need(layers, (l) => l.budgets?.perWindow),
      perDay: need(layers, (l) => l.budgets?.perDay),
      emergency: {
        perCycle: need(layers, (l) => l.budgets?.emergency?.perCycle),
        perDay: need(layers, (l) => l.budgets?.emergency?.perDay),
      },
    },
    policy: policy.policy,
    policySource: policy.source,
    vcpuRatio: vcpu === null ? null : { ...BUILTIN_VCPU_RATIO, ...stripUndefined(vcpu) },
    concurrency: {
      perSourceHost: need(layers, (l) => l.concurrency?.perSourceHost),
      perSourceHostOverrides: merged((l) => l.concurrency?.perSourceHostOverrides),
      perDestinationHost: need(layers, (l) => l.concurrency?.perDestinationHost),
      perAggregate: need(layers, (l) => l.concurrency?.perAggregate),
    },
    approvalExpiryMs: need(layers, (l) => l.approvals?.expireAfter),
    cooldowns: {
      serverMs: need(layers, (l) => l.cooldowns?.server),
      aggregateMs: need(layers, (l) => l.cooldowns?.aggregate),
      afterAbortMs: need(layers, (l) => l.cooldowns?.afterAbort),
      onAbort: need(layers, (l) => l.cooldowns?.onAbort),
    },
    retry: {
      attempts: need(layers, (l) => l.retry?.attempts),
      backoffBaseMs: need(layers, (l) => l.retry?.backoffBase),
      backoffMaxMs: need(layers, (l) => l.retry?.backoffMax),
    },
    migrationTimeout: {
      margin: need(layers, (l) => l.migrationTimeout?.margin),
      floorMs: need(layers, (l) => l.migrationTimeout?.floor),
      ceilingMs: need(layers, (l) => l.migrationTimeout?.ceiling),
      abortGiveUpMs: need(layers, (l) => l.migrationTimeout?.abortGiveUp),
    },
    dataHealth: {
      maxSnapshotAgeMs: need(layers, (l) => l.dataHealth?.maxSnapshotAge),
      maxMetricAgeMs: need(layers, (l) => l.dataHealth?.maxMetricAge),
      maxMissingFraction: need(layers, (l) => l.dataHealth?.maxMissingFraction),
    },
    site: {
      maintenanceWindows: windows,
      ...(Object.keys(ratioBounds).length ? { ratioBounds } : {}),
      ...(cpuConf === undefined ? {} : { cpuAllocationRatioInNovaConf: cpuConf }),
      ...(ramConf === undefined ? {} : { ramAllocationRatioInNovaConf: ramConf }),
    } satisfies AggregateDeclarations,
  };
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}

/** Rules between keys, checked on the merged values, reported where the deciding key is set. */
function checkAggregate(
  a: AggregateConfig,
  layers: Layers,
  hasActuator: boolean,
  issue: (path: string, message: string, value?: unknown) => void,
): void {
  const at = (f: (l: AggregateLayer) => unknown, key: string) => `${ownerPath(layers, f)}.${key}`;
  const v = a.vcpuRatio;
  if (v) {
    if (v.floor > v.target)
      issue(
        at((l) => l.vcpuRatio, 'vcpuRatio.floor'),
        `above the target ${v.target}`,
        v.floor,
      );
    if (v.restoreBelow >= v.lowerAbove) {
      issue(
        at((l) => l.vcpuRatio, 'vcpuRatio.restoreBelow'),
        `must be below lowerAbove (${v.lowerAbove}), or the ratio would flap`,
        v.restoreBelow,
      );
    }
    const bound = a.site.ratioBounds?.VCPU;
    if (bound && (v.floor < bound.min || v.target > bound.max)) {
      issue(
        at((l) => l.vcpuRatio, 'vcpuRatio'),
        `floor ${v.floor} and target ${v.target} must lie within ratioBounds.VCPU [${bound.min}, ${bound.max}]`,
      );
    }
  }
  if (a.retry.backoffBaseMs > a.retry.backoffMaxMs) {
    issue(
      at((l) => l.retry?.backoffBase, 'retry.backoffBase'),
      `above retry.backoffMax (${formatDuration(a.retry.backoffMaxMs)})`,
      formatDuration(a.retry.backoffBaseMs),
    );
  }
  if (a.migrationTimeout.floorMs > a.migrationTimeout.ceilingMs) {
    issue(
      at((l) => l.migrationTimeout?.floor, 'migrationTimeout.floor'),
      `above migrationTimeout.ceiling (${formatDuration(a.migrationTimeout.ceilingMs)})`,
      formatDuration(a.migrationTimeout.floorMs),
    );
  }
  if (a.mode !== 'observe' && !hasActuator) {
    issue(
      at((l) => l.mode, 'mode'),
      'needs credentials.actuator, the credential that live-migrates (it may name the same cloud as the reader)',
      a.mode,
    );
  }
}

const DAY_MS = 86_400_000;

/** prometheus.profiles over the defaults; null when switched off. Bad values are issues. */
function profileSettings(
  u:
    | {
        enabled?: boolean | undefined;
        history?: number | undefined;
        refresh?: number | undefined;
        resolution?: 'hour-of-week' | 'hour-of-day' | undefined;
        quantile?: number | undefined;
        timeZone?: string | undefined;
        minSamples?: number | undefined;
      }
    | undefined,
  issue: (path: string, message: string, value?: unknown) => void,
): ProfileSettings | null {
  if (u?.enabled === false) return null;
  const d = DEFAULT_PROFILE_SETTINGS;
  const history = u?.history ?? d.historyDays * DAY_MS;
  if (history < 7 * DAY_MS || history > 28 * DAY_MS || history % DAY_MS !== 0)
    issue('prometheus.profiles.history', 'expected whole days from 7d to 28d', formatDuration(history));
  const refresh = u?.refresh ?? d.refreshMs;
  if (refresh < 3_600_000)
    issue('prometheus.profiles.refresh', 'expected at least 1h', formatDuration(refresh));
  const timeZone = u?.timeZone ?? d.timeZone;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    issue('prometheus.profiles.timeZone', 'expected an IANA time zone name such as Europe/Paris', timeZone);
  }
  const quantile = u?.quantile ?? d.quantile;
  if (quantile <= 0) issue('prometheus.profiles.quantile', 'expected a quantile above 0', quantile);
  return {
    historyDays: Math.round(history / DAY_MS),
    refreshMs: refresh,
    resolution: u?.resolution ?? d.resolution,
    quantile,
    timeZone,
    minSamples: u?.minSamples ?? d.minSamples,
  };
}
