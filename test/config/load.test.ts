import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE_SETTINGS } from '../../src/cloud/profiles/settings.js';
import { loadServiceConfig, parseServiceConfig } from '../../src/config/load.js';
import { InputError } from '../../src/errors.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const parse = (doc: unknown) => parseServiceConfig(doc, { file: 'aicerine.yaml', baseDir: '/etc/aicerine' });

async function problems(doc: unknown): Promise<string[]> {
  try {
    await parse(doc);
  } catch (e) {
    if (e instanceof InputError) return e.message.split('\n');
    throw e;
  }
  throw new Error('expected the configuration to be refused');
}

describe('parseServiceConfig: defaults', () => {
  it('an empty file is a service that observes everything, with documented defaults', async () => {
    const { config } = await parse(null);
    expect(config.credentials).toEqual({ reader: { kind: 'environment' }, actuator: null, tasks: null });
    expect(config.store).toEqual({ kind: 'sqlite', path: '/etc/aicerine/aicerine.sqlite' });
    expect(config.cycleIntervalMs).toBe(300_000);
    expect(config.budgets).toEqual({ perCycle: null, perDay: null });
    expect(config.retention.executionsMs).toBe(400 * 86_400_000);
    expect(config.defaults).toMatchObject({
      name: '*',
      mode: 'observe',
      onPause: 'finish',
      windows: [],
      budgets: { perCycle: 5, perWindow: 50, perDay: 100, emergency: { perCycle: 10, perDay: 50 } },
      concurrency: { perSourceHost: 1, perSourceHostOverrides: {}, perDestinationHost: 2, perAggregate: 4 },
      cooldowns: { serverMs: 86_400_000, aggregateMs: 900_000 },
      vcpuRatio: null,
      policySource: 'built-in',
    });
    expect(config.defaults.policy).toEqual(DEFAULT_POLICY);
  });

  it('an aggregate inherits the defaults key by key, and maps merge', async () => {
    const { config } = await parse({
      openstack: { actuator: { cloud: 'act' } },
      defaults: {
        budgets: { perCycle: 3 },
        concurrency: { perSourceHostOverrides: { a: 2 } },
        ratioBounds: { VCPU: { min: 1, max: 8 } },
        windows: ['Sat 22:00 - Sun 06:00 Europe/Paris'],
      },
      aggregates: {
        gold: {
          mode: 'active',
          budgets: { perDay: 7, emergency: { perDay: 1 } },
          concurrency: { perSourceHostOverrides: { b: 3 } },
          ratioBounds: { MEMORY_MB: { min: 1, max: 1.5 } },
          emergencies: { memory: null, cpu: { above: 0.9, for: '15m' } },
        },
      },
    });
    const gold = config.aggregates.gold!;
    expect(gold.budgets).toEqual({
      perCycle: 3,
      perWindow: 50,
      perDay: 7,
      emergency: { perCycle: 10, perDay: 1 },
    });
    expect(gold.concurrency.perSourceHostOverrides).toEqual({ a: 2, b: 3 });
    expect(gold.emergencies).toEqual({
      evacuateDisabledReasonPrefix: 'aicerine-evacuate',
      memory: null,
      cpu: { above: 0.9, forMs: 900_000 },
    });
    expect(gold.windows.map((w) => w.text)).toEqual(['Sat 22:00 - Sun 06:00 Europe/Paris']);
    expect(config.site.aggregates.gold?.ratioBounds).toEqual({
      VCPU: { min: 1, max: 8 },
      MEMORY_MB: { min: 1, max: 1.5 },
    });
    expect(config.site.defaults.maintenanceWindows?.[0]?.zone).toBe('Europe/Paris');
  });

  it('vcpuRatio gets its step and hysteresis defaults', async () => {
    const { config } = await parse({ defaults: { vcpuRatio: { target: 4, floor: 2 } } });
    expect(config.defaults.vcpuRatio).toEqual({
      target: 4,
      floor: 2,
      step: 0.5,
      lowerAbove: 0.1,
      restoreBelow: 0.05,
    });
  });
});

describe('parseServiceConfig: every problem names the file, the key, the value and what is allowed', () => {
  it('unknown keys suggest the closest known key', async () => {
    expect(
      await problems({
        budget: { perDay: 3 },
        defaults: { windws: [] },
        aggregates: { gold: { cooldowns: { sever: '1h' } } },
        cycleIntervall: '5m',
        zzzzzz: 1,
      }),
    ).toEqual([
      'aicerine.yaml: defaults.windws: unknown key (did you mean "windows"?)',
      'aicerine.yaml: aggregates.gold.cooldowns.sever: unknown key (did you mean "server"?)',
      'aicerine.yaml: budget: unknown key (did you mean "budgets"?)',
      'aicerine.yaml: cycleIntervall: unknown key (did you mean "cycleInterval"?)',
      expect.stringMatching(
        /^aicerine.yaml: zzzzzz: unknown key \(expected one of allowInlineSecrets, credentials, openstack, /,
      ),
    ]);
  });

  it('bad values: windows, durations, enums, fractions', async () => {
    expect(
      await problems({
        cycleInterval: '5 minutes',
        defaults: {
          mode: 'aktive',
          windows: ['Sat 22:00 - Sun 06:00 Europe/Pariss'],
          dataHealth: { maxMissingFraction: 5 },
          budgets: { perCycle: -1 },
        },
      }),
    ).toEqual([
      'aicerine.yaml: cycleInterval: expected a duration such as "90s", "5m", "1h30m" or "7d", got "5 minutes"',
      'aicerine.yaml: defaults.mode: expected one of "observe", "assisted", "active", got "aktive"',
      'aicerine.yaml: defaults.windows[0]: unknown time zone "Europe/Pariss" (expected an IANA name such as Europe/Paris, or UTC), got "Sat 22:00 - Sun 06:00 Europe/Pariss"',
      'aicerine.yaml: defaults.budgets.perCycle: expected a non-negative integer, got -1',
      'aicerine.yaml: defaults.dataHealth.maxMissingFraction: expected a fraction between 0 and 1, got 5',
    ]);
  });

  it('maintenance: defaults, a full section, and bad values with their paths', async () => {
    expect((await parse(null)).config.maintenance).toEqual({
      parallel: 1,
      validate: false,
      returnWhen: 'done',
      webhook: null,
      command: null,
      pollIntervalMs: 10_000,
    });
    const { config } = await parse({
      maintenance: {
        parallel: 3,
        validate: true,
        returnWhen: 'service-restart',
        webhook: 'https://automation.example.org/hook',
        command: ['/usr/local/bin/patch-host', '--now'],
        pollInterval: '30s',
      },
    });
    expect(config.maintenance).toEqual({
      parallel: 3,
      validate: true,
      returnWhen: 'service-restart',
      webhook: 'https://automation.example.org/hook',
      command: ['/usr/local/bin/patch-host', '--now'],
      pollIntervalMs: 30_000,
    });
    expect(
      await problems({
        maintenance: { parallel: 0, returnWhen: 'reboot', webhook: 'ftp://x', command: [] },
      }),
    ).toEqual([
      'aicerine.yaml: maintenance.parallel: expected a positive integer, got 0',
      'aicerine.yaml: maintenance.returnWhen: expected one of "done", "service-restart", got "reboot"',
      'aicerine.yaml: maintenance.webhook: expected an http:// or https:// URL, got "ftp://x"',
      'aicerine.yaml: maintenance.command: expected at least the program, got a list of 0 items',
    ]);
  });

  it('wrong shapes say what was expected', async () => {
    expect(
      await problems({ paused: 'yes', budgets: 5, defaults: { windows: 'Sat 22:00 - Sun 06:00 UTC' } }),
    ).toEqual([
      'aicerine.yaml: paused: expected true or false, got "yes"',
      'aicerine.yaml: budgets: expected a mapping, got 5',
      'aicerine.yaml: defaults.windows: expected a list of windows such as ["Sat 22:00 - Sun 06:00 Europe/Paris"], got "Sat 22:00 - Sun 06:00 UTC"',
    ]);
  });

  it('rules between keys, reported where the deciding key is set', async () => {
    expect(
      await problems({
        cycleInterval: '2s',
        defaults: { retry: { backoffBase: '2h', backoffMax: '1h' } },
        aggregates: {
          gold: {
            mode: 'active',
            vcpuRatio: { target: 2, floor: 4, lowerAbove: 0.1, restoreBelow: 0.2 },
            ratioBounds: { VCPU: { min: 1, max: 1.5 } },
            migrationTimeout: { floor: '3h' },
          },
        },
      }),
    ).toEqual([
      'aicerine.yaml: cycleInterval: expected at least 10s, got "2s"',
      'aicerine.yaml: defaults.retry.backoffBase: above retry.backoffMax (1h), got "2h"',
      'aicerine.yaml: aggregates.gold.vcpuRatio.floor: above the target 2, got 4',
      'aicerine.yaml: aggregates.gold.vcpuRatio.restoreBelow: must be below lowerAbove (0.1), or the ratio would flap, got 0.2',
      'aicerine.yaml: aggregates.gold.vcpuRatio: floor 4 and target 2 must lie within ratioBounds.VCPU [1, 1.5]',
      'aicerine.yaml: aggregates.gold.migrationTimeout.floor: above migrationTimeout.ceiling (2h), got "3h"',
      'aicerine.yaml: aggregates.gold.mode: needs credentials.actuator, the credential that live-migrates (it may name the same cloud as the reader), got "active"',
    ]);
  });

  it('an inline policy is validated by the policy loader, at its path in this file', async () => {
    expect(
      await problems({
        aggregates: {
          gold: { policy: { minGain: -1, spred: {} } },
          silver: { policy: { aggregates: ['x'] } },
        },
      }),
    ).toEqual([
      'aicerine.yaml: aggregates.gold.policy.minGain: expected a non-negative number, got -1',
      'aicerine.yaml: aggregates.gold.policy.spred: unknown key (a typo?)',
      "aicerine.yaml: aggregates.silver.policy.aggregates: not used here: an aggregate's policy applies to that aggregate",
    ]);
    expect(await problems({ defaults: { policy: { dimensions: [{ name: 'gpu', weight: 1 }] } } })).toEqual([
      'aicerine.yaml: defaults.policy.dimensions[0].load: required for dimension "gpu"',
      'aicerine.yaml: defaults.policy.dimensions[0].capacity: required for dimension "gpu"',
    ]);
  });

  it('an aggregate chooses the planner mode repair-only in its inline policy', async () => {
    const { config } = await parseServiceConfig(
      { aggregates: { gold: { policy: { mode: 'repair-only' } }, silver: {} } },
      { file: 'x.yaml', baseDir: dir },
    );
    expect(config.aggregates.gold?.policy.mode).toBe('repair-only');
    expect(config.aggregates.silver?.policy.mode).toBe('spread');
    expect(await problems({ aggregates: { gold: { policy: { mode: 'repair' } } } })).toEqual([
      'aicerine.yaml: aggregates.gold.policy.mode: expected one of "spread", "pack", "repair-only", got "repair"',
    ]);
  });

  it('a policy file is read relative to the configuration and replaces the inherited policy', async () => {
    await writeFile(join(dir, 'pack.yaml'), 'mode: pack\npack: { spareHosts: 2 }\n');
    const { config } = await parseServiceConfig(
      { defaults: { policy: { minGain: 0.1 } }, aggregates: { gold: { policy: 'pack.yaml' }, silver: {} } },
      { file: 'x.yaml', baseDir: dir },
    );
    expect(config.aggregates.gold?.policy).toMatchObject({
      mode: 'pack',
      pack: { spareHosts: 2 },
      minGain: 0.005,
    });
    expect(config.aggregates.gold?.policySource).toBe(join(dir, 'pack.yaml'));
    expect(config.aggregates.silver?.policy.minGain).toBe(0.1);
    await expect(
      parseServiceConfig(
        { aggregates: { gold: { policy: 'missing.yaml' } } },
        { file: 'x.yaml', baseDir: dir },
      ),
    ).rejects.toThrow(/missing\.yaml/);
  });
});

describe('credentials and secrets', () => {
  const inline = {
    auth: {
      auth_url: 'https://keystone:5000/v3',
      application_credential_id: 'id',
      application_credential_secret: 's',
    },
  };

  it('credentials are references; inline secrets need allowInlineSecrets', async () => {
    const { config } = await parse({
      credentials: { reader: { cloud: 'r' }, actuator: { cloud: 'a' }, tasks: { cloud: 't' } },
    });
    expect(config.credentials).toEqual({
      reader: { kind: 'clouds-yaml', cloud: 'r' },
      actuator: { kind: 'clouds-yaml', cloud: 'a' },
      tasks: { kind: 'clouds-yaml', cloud: 't' },
    });
    expect(await problems({ credentials: { reader: { inline } } })).toEqual([
      'aicerine.yaml: credentials.reader.inline: holds secrets in this file: name a clouds.yaml cloud instead (secure.yaml keeps its secrets), or set allowInlineSecrets: true',
    ]);
    const ok = await parse({ allowInlineSecrets: true, credentials: { reader: { inline } } });
    expect(ok.config.credentials.reader).toMatchObject({
      kind: 'inline',
      config: { method: 'application-credential' },
    });
    expect(await problems({ credentials: { reader: { cloud: 'r', inline } } })).toEqual([
      'aicerine.yaml: credentials.reader: give one of cloud, applicationCredential or inline, got a mapping of keys',
    ]);
  });

  it('an application credential by reference: its id in the file, its secret in a file or a variable', async () => {
    const ac = { authUrl: 'https://keystone.example.com/v3', id: 'a1b2' };
    const { config } = await parse({
      credentials: {
        reader: { applicationCredential: { ...ac, secretEnv: 'READER_SECRET' } },
        actuator: {
          applicationCredential: { ...ac, id: 'c3d4', secretFile: 'actuator.secret', interface: 'internal' },
        },
      },
    });
    expect(config.credentials.reader).toMatchObject({
      kind: 'application-credential',
      id: 'a1b2',
      secret: { kind: 'env', variable: 'READER_SECRET' },
      interface: null,
    });
    expect(config.credentials.actuator).toMatchObject({
      kind: 'application-credential',
      id: 'c3d4',
      secret: { kind: 'file', path: '/etc/aicerine/actuator.secret' },
      interface: 'internal',
    });
    expect(
      await problems({ credentials: { reader: { applicationCredential: { ...ac, secret: 'x' } } } }),
    ).toEqual([
      'aicerine.yaml: credentials.reader.applicationCredential.secret: holds a secret in this file: use secretFile or secretEnv, or set allowInlineSecrets: true, got "(a secret)"',
    ]);
    expect(await problems({ credentials: { reader: { applicationCredential: ac } } })).toEqual([
      'aicerine.yaml: credentials.reader.applicationCredential: give the secret one way: secretFile, secretEnv or (with allowInlineSecrets) secret',
    ]);
    const inline = await parse({
      allowInlineSecrets: true,
      credentials: { reader: { applicationCredential: { ...ac, secret: 'x' } } },
    });
    expect(inline.config.credentials.reader).toMatchObject({ secret: { kind: 'inline', value: 'x' } });
  });

  it('openstack: is still read as the former name of credentials:, with a warning', async () => {
    const { config, warnings } = await parse({
      openstack: { reader: { cloud: 'r' }, actuator: { cloud: 'a' } },
    });
    expect(config.credentials.actuator).toEqual({ kind: 'clouds-yaml', cloud: 'a' });
    expect(warnings).toContain('aicerine.yaml: openstack: is the former name of credentials: (rename it)');
    expect(
      await problems({ openstack: { reader: { cloud: 'r' } }, credentials: { reader: { cloud: 'r' } } }),
    ).toEqual(['aicerine.yaml: openstack: give credentials only (openstack is its former name)']);
  });

  it('store URLs: SQLite paths, MariaDB over TCP or a socket, passwords never inline by default', async () => {
    const store = async (s: unknown, extra: object = {}) =>
      (await parse({ store: s, ...extra })).config.store;
    expect(await store({ url: 'sqlite:///var/lib/aicerine/a.db' })).toEqual({
      kind: 'sqlite',
      path: '/var/lib/aicerine/a.db',
    });
    expect(await store({ url: 'sqlite:a.db', synchronous: 'normal' })).toEqual({
      kind: 'sqlite',
      path: '/etc/aicerine/a.db',
      synchronous: 'normal',
    });
    expect(await store({ url: 'sqlite:a.db', synchronous: 'full' })).toEqual({
      kind: 'sqlite',
      path: '/etc/aicerine/a.db',
    });
    expect(await problems({ store: { url: 'sqlite:a.db', synchronous: 'off' } })).toEqual([
      expect.stringMatching(/store\.synchronous.*"full".*"normal"/),
    ]);
    expect(await problems({ store: { url: 'mysql://aic@db/aicerine', synchronous: 'normal' } })).toEqual([
      expect.stringMatching(/store\.synchronous: a setting of the SQLite store only/),
    ]);
    expect(await store({ url: 'mysql://aic@db.example.org:3307/aicerine', passwordFile: 'db-pass' })).toEqual(
      {
        kind: 'mysql',
        host: 'db.example.org',
        port: 3307,
        socketPath: null,
        user: 'aic',
        database: 'aicerine',
        password: { kind: 'file', path: '/etc/aicerine/db-pass' },
      },
    );
    expect(
      await store({ url: 'mariadb://aic@localhost/aicerine?socket=/run/mysqld/mysqld.sock' }),
    ).toMatchObject({
      host: null,
      socketPath: '/run/mysqld/mysqld.sock',
      password: null,
    });
    expect(await problems({ store: { url: 'mysql://aic:hunter2@db/aicerine' } })).toEqual([
      'aicerine.yaml: store.url: holds a password: use passwordFile or passwordEnv, or set allowInlineSecrets: true, got "(a URL with a password)"',
    ]);
    expect(
      await store({ url: 'mysql://aic:hunter2@db/aicerine' }, { allowInlineSecrets: true }),
    ).toMatchObject({
      password: { kind: 'inline', value: 'hunter2' },
    });
    expect(await problems({ store: { url: 'postgres://x@y/z' } })).toEqual([
      'aicerine.yaml: store.url: expected sqlite:PATH, mysql://USER@HOST[:PORT]/DATABASE or mysql://USER@localhost/DATABASE?socket=PATH, got "postgres://x@y/z"',
    ]);
    expect(await problems({ store: { url: 'sqlite:a.db', passwordEnv: 'X' } })).toEqual([
      'aicerine.yaml: store: a SQLite store has no password: remove passwordFile/passwordEnv',
    ]);
  });

  it('notifications and Prometheus URLs', async () => {
    const { config } = await parse({
      notifications: { rabbitmqUrl: 'amqp://nova@rabbit:5672/nova', passwordEnv: 'RABBIT_PASSWORD' },
      prometheus: { url: 'http://prom:9090' },
    });
    expect(config.notifications).toEqual({
      url: 'amqp://nova@rabbit:5672/nova',
      password: { kind: 'env', variable: 'RABBIT_PASSWORD' },
    });
    // Load profiles are recorded by default (prometheus.profiles.enabled: false turns them off).
    expect(config.prometheus).toEqual({
      url: 'http://prom:9090',
      metricsPolicyFile: null,
      profiles: DEFAULT_PROFILE_SETTINGS,
    });
    expect(
      await problems({ notifications: { rabbitmqUrl: 'http://rabbit' }, prometheus: { url: 'prom' } }),
    ).toEqual([
      'aicerine.yaml: notifications.rabbitmqUrl: expected amqp://USER@HOST[:PORT]/VHOST or amqps://..., got "http://rabbit"',
      'aicerine.yaml: prometheus.url: expected an http:// or https:// URL, got "prom"',
    ]);
  });
});

describe('loadServiceConfig', () => {
  it('warns when the file is readable by its group or other users, saying which file and which mode', async () => {
    const f = join(dir, 'aicerine.yaml');
    await writeFile(f, 'cycleInterval: 1m\n');
    await chmod(f, 0o644);
    const loose = await loadServiceConfig(f);
    expect(loose.config.cycleIntervalMs).toBe(60_000);
    expect(loose.warnings).toEqual([
      `${f} is readable by its group and every user (mode 644); it names the credentials and the store: chmod 600 ${f}`,
    ]);
    await chmod(f, 0o640);
    expect((await loadServiceConfig(f)).warnings).toEqual([
      `${f} is readable by its group (mode 640); it names the credentials and the store: chmod 600 ${f}`,
    ]);
    await chmod(f, 0o600);
    expect((await loadServiceConfig(f)).warnings).toEqual([]);
  });

  it('warns about a secret file others can read', async () => {
    const f = join(dir, 'with-secret.yaml');
    const secret = join(dir, 'actuator.secret');
    await writeFile(secret, 'not-really\n');
    await chmod(secret, 0o644);
    await writeFile(
      f,
      'credentials:\n  actuator:\n    applicationCredential: { authUrl: "https://k/v3", id: a1, secretFile: actuator.secret }\n',
    );
    await chmod(f, 0o600);
    expect((await loadServiceConfig(f)).warnings).toEqual([
      `${secret} (credentials.actuator.applicationCredential.secretFile) holds a secret and is readable by every user (mode 644): chmod 600 ${secret}`,
    ]);
    await chmod(secret, 0o600);
    expect((await loadServiceConfig(f)).warnings).toEqual([]);
  });

  it('refuses a file that is not YAML, naming it', async () => {
    const f = join(dir, 'broken.yaml');
    await writeFile(f, 'defaults: [\n');
    await expect(loadServiceConfig(f)).rejects.toThrow(`${f}: not valid YAML or JSON`);
  });

  it('the example configuration is valid', async () => {
    const { config } = await loadServiceConfig('examples/aicerine.yaml');
    expect(Object.keys(config.aggregates)).toEqual(['gold', 'silver']);
    expect(config.aggregates.gold?.mode).toBe('active');
  });
});
