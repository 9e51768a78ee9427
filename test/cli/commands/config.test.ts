import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { register as registerCheck } from '../../../src/cli/commands/check.js';
import { register } from '../../../src/cli/commands/config.js';
import { type FakeCloud, startFakeCloud } from '../../cloud/fake-cloud.js';
import { runCommand } from '../../fixtures/cli.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-config-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  process.exitCode = undefined;
  vi.unstubAllEnvs();
});

async function file(name: string, text: string): Promise<string> {
  const f = join(dir, name);
  await writeFile(f, text);
  await chmod(f, 0o600);
  return f;
}

describe('aicerine config check', () => {
  it('prints OK with each aggregate: mode, windows with next edges in their zone and UTC, budgets', async () => {
    const f = await file(
      'ok.yaml',
      [
        'credentials: { actuator: { cloud: act } }',
        'aggregates:',
        '  gold:',
        '    mode: active',
        '    windows: ["Sat 22:00 - Sun 06:00 Europe/Paris", "Mon-Fri 01:00 - 05:00 UTC"]',
        '    budgets: { perWindow: 20 }',
      ].join('\n'),
    );
    const { out, err, exitCode } = await runCommand(
      [register],
      ['config', 'check', f, '--now', '2026-03-28T22:00:00Z'],
    );
    expect(err).toBe('');
    expect(exitCode).toBeUndefined();
    expect(out).toContain(`OK ${f}\n`);
    expect(out).toContain(
      [
        'aggregate gold',
        '  mode active (in-flight migrations finish on pause)',
        '  windows:',
        // The spring-forward night: opened 21:00 UTC, closes 06:00 CEST = 04:00 UTC.
        '    Sat 22:00 - Sun 06:00 Europe/Paris: open now, closes Sun 2026-03-29 06:00 GMT+2 (2026-03-29T04:00Z)',
        '    Mon-Fri 01:00 - 05:00 UTC: opens Mon 2026-03-30 01:00 UTC, closes Mon 2026-03-30 05:00 UTC',
        '  budgets: 5/cycle, 20/window, 100/24 h; emergencies 10/cycle, 50/24 h',
      ].join('\n'),
    );
    expect(out).toContain('any other aggregate (defaults)\n  mode observe');
  });

  it('prints every problem and exits 1', async () => {
    const f = await file('bad.yaml', 'budget: 3\ndefaults:\n  windows: ["Sat 22:00 - Sun 06:00"]\n');
    const { out, exitCode } = await runCommand([register], ['config', 'check', f]);
    expect(exitCode).toBe(1);
    expect(out).toBe(
      [
        `INVALID ${f}: 2 problems`,
        `${f}: defaults.windows[0]: missing the time zone at the end (DAYS HH:MM - [DAY] HH:MM ZONE, e.g. "Sat 22:00 - Sun 06:00 Europe/Paris"), got "Sat 22:00 - Sun 06:00"`,
        `${f}: budget: unknown key (did you mean "budgets"?)`,
        '',
      ].join('\n'),
    );
  });

  it('warns on stderr when the file is readable by other users', async () => {
    const f = await file('loose.yaml', 'paused: true\n');
    await chmod(f, 0o644);
    const { out, err } = await runCommand([register], ['config', 'check', f]);
    expect(out).toContain('service: cycle every 5m, PAUSED;');
    expect(err).toBe(
      `warning: ${f} is readable by its group and every user (mode 644); it names the credentials and the store: chmod 600 ${f}\n`,
    );
  });

  it('reads the secret files as serve would: a missing one is a problem naming its key and path', async () => {
    const secret = join(dir, 'store.secret');
    const text = [
      'store: { url: "mysql://aicerine@db.example.com/aicerine", passwordFile: store.secret }',
      '',
    ].join('\n');
    const f = await file('secret.yaml', text);
    const missing = await runCommand([register], ['config', 'check', f]);
    expect(missing.exitCode).toBe(1);
    expect(missing.out).toBe(
      [
        `INVALID ${f}: 1 problem`,
        `${f}: store.passwordFile: secret file ${secret} cannot be read (ENOENT)`,
        '',
      ].join('\n'),
    );
    await file('store.secret', 'hunter2\n');
    process.exitCode = undefined;
    const ok = await runCommand([register], ['config', 'check', f]);
    expect(ok.exitCode).toBeUndefined();
    expect(ok.out).toContain(`OK ${f}`);
    expect(ok.out).not.toContain('hunter2');
  });

  it('warns when the API listens beyond loopback, where it speaks plain HTTP', async () => {
    const f = await file('open.yaml', 'api: { host: 0.0.0.0 }\n');
    const { out, err, exitCode } = await runCommand([register], ['config', 'check', f]);
    expect(exitCode).toBeUndefined();
    expect(out).toContain(`OK ${f}`);
    expect(err).toContain(
      'warning: api.host is 0.0.0.0, reachable from other machines, and the API speaks plain HTTP',
    );
    const local = await file('local.yaml', 'api: { host: 127.0.0.1 }\n');
    expect((await runCommand([register], ['config', 'check', local])).err).toBe('');
  });

  it('refuses binary, gzip-compressed and oversized files without printing their bytes', async () => {
    const { gzipSync } = await import('node:zlib');
    const bin = join(dir, 'image.yaml');
    await writeFile(bin, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff]));
    const gz = join(dir, 'config.yaml.gz');
    await writeFile(gz, gzipSync('paused: true\n'));
    for (const [f, says] of [
      [bin, 'is a binary file, not text'],
      [gz, 'is a binary file (gzip-compressed), not text'],
    ] as const) {
      const { out, exitCode } = await runCommand([register], ['config', 'check', f]);
      expect(exitCode, f).toBe(1);
      expect(out, f).toContain(`${f}: ${says}`);
      expect(out, f).not.toMatch(/PNG|\ufffd/);
    }
    // Sparse: 600 MiB long without writing them.
    const big = join(dir, 'big.yaml');
    const { open } = await import('node:fs/promises');
    const h = await open(big, 'w');
    await h.truncate(600 * 1024 * 1024);
    await h.close();
    const { out, exitCode } = await runCommand([register], ['config', 'check', big]);
    expect(exitCode).toBe(1);
    expect(out).toContain(`${big}: is 600 MiB, more than the 512 MiB an input file may have`);
    await rm(big);
  });

  it('names both values of a ratio bound whose min is above its max', async () => {
    const f = await file('bounds.yaml', 'defaults:\n  ratioBounds:\n    VCPU: { min: 8, max: 2 }\n');
    const { out, exitCode } = await runCommand([register], ['config', 'check', f]);
    expect(exitCode).toBe(1);
    expect(out).toContain(`${f}: defaults.ratioBounds.VCPU.min: min 8 is above max 2`);
    expect(out).not.toContain('mapping of keys');
  });

  it('config example prints the example file, which passes the check', async () => {
    const { out } = await runCommand([register], ['config', 'example']);
    expect(out).toMatch(/^# aicerine.yaml: the configuration of `aicerine serve`/);
    // Its secret file is where a deployment would put it; here, one that exists.
    expect(out).toContain('/etc/aicerine/actuator.secret');
    const secret = await file('actuator.secret', 'not-a-real-secret\n');
    const f = await file('example.yaml', out.replaceAll('/etc/aicerine/actuator.secret', secret));
    const checked = await runCommand([register], ['config', 'check', f]);
    expect(checked.exitCode).toBeUndefined();
    expect(checked.out).toContain('aggregate gold\n  mode active');
  });
});

describe('aicerine check --config reads the same declarations as --site', () => {
  let cloud: FakeCloud;
  beforeAll(async () => {
    cloud = await startFakeCloud();
  });
  afterAll(async () => {
    await cloud.close();
  });

  it('gives the same report, and takes the reader credential from the file', async () => {
    const a = cloud.config.auth;
    const clouds = await file(
      'clouds.yaml',
      `clouds:\n  fake:\n    auth: { auth_url: "${a.authUrl}", username: ${a.username}, password: ${a.password}, project_name: admin, user_domain_name: Default, project_domain_name: Default }\n    region_name: RegionOne\n`,
    );
    vi.stubEnv('OS_CLIENT_CONFIG_FILE', clouds);
    vi.stubEnv('OS_CLOUD', '');
    const site = await file(
      'site.yaml',
      [
        'defaults:',
        '  cpuAllocationRatioInNovaConf: false',
        '  maintenanceWindows: ["Sun 01:00 - 05:00 UTC"]',
        'aggregates:',
        '  aic-fixture-gold: { ratioBounds: { VCPU: { min: 1, max: 8 } } }',
        'storage: { default: shared }',
      ].join('\n'),
    );
    const config = await file(
      'aicerine.yaml',
      [
        'credentials: { reader: { cloud: fake } }',
        'defaults:',
        '  cpuAllocationRatioInNovaConf: false',
        '  windows: ["Sun 01:00 - 05:00 UTC"]',
        'aggregates:',
        '  aic-fixture-gold: { ratioBounds: { VCPU: { min: 1, max: 8 } } }',
        'storage: { default: shared }',
      ].join('\n'),
    );
    const bySite = await runCommand([registerCheck], ['check', '--cloud', 'fake', '--site', site, '--json']);
    const byConfig = await runCommand([registerCheck], ['check', '--config', config, '--json']);
    type Result = { aggregate: string; id: string; status: string };
    const results = (out: string) => (JSON.parse(out) as { results: Result[] }).results;
    const ofCloud = (rs: Result[]) => rs.filter((r) => r.aggregate !== 'credentials');
    expect(ofCloud(results(byConfig.out))).toEqual(results(bySite.out));
    // With --config, the configured credentials are checked too: a password user authenticates,
    // and is reported as not restricted by access rules.
    expect(
      results(byConfig.out)
        .filter((r) => r.aggregate === 'credentials')
        .map((r) => [r.id, r.status]),
    ).toEqual([
      ['credential-reader-authenticates', 'ok'],
      ['credential-reader-roles', 'info'],
      ['credential-reader-restricted', 'info'],
    ]);
    expect(byConfig.err).toContain(
      'warning: reader (cloud fake) is restricted by access rules: no (not an application credential',
    );
    expect(byConfig.out).toContain('Sun 01:00 - 05:00 UTC');
    expect(byConfig.out).toContain('"id": "ratio-bounds"');
  });
});
