// `aicerine serve --once` as an operator runs it: a configuration file naming clouds.yaml entries,
// a store file next to it, one cycle against the simulator, the report printed as JSON.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../../src/cli/commands/serve.js';
import { cloudsYaml } from '../../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../../src/sim/http/server.js';
import { SimCloud } from '../../../src/sim/model.js';
import { synthesizeSnapshot } from '../../../src/snapshot/synth.js';
import { openStore } from '../../../src/store/store.js';
import { runCommand } from '../../fixtures/cli.js';

let sim: SimServerHandle;
let dir: string;
const saved = process.env.OS_CLIENT_CONFIG_FILE;

beforeAll(async () => {
  const snapshot = synthesizeSnapshot({ hosts: 12, servers: 240, groups: 6, seed: 3, aggregates: 2 });
  sim = await startSimServer({ cloud: new SimCloud(snapshot), password: 'secret' });
  dir = await mkdtemp(join(tmpdir(), 'aic-serve-cli-'));
  await writeFile(
    join(dir, 'clouds.yaml'),
    cloudsYaml({
      authUrl: sim.authUrl,
      password: 'secret',
      cloudName: 'sim',
      prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
      controlUrl: sim.url,
    }),
  );
  process.env.OS_CLIENT_CONFIG_FILE = join(dir, 'clouds.yaml');
  await writeFile(
    join(dir, 'aicerine.yaml'),
    [
      'credentials: { reader: { cloud: sim } }',
      `prometheus: { url: "${sim.url}${PROMETHEUS_PREFIX}" }`,
      'store: { url: "sqlite:state/aicerine.db" }',
      'defaults: { mode: observe }',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  if (saved === undefined) delete process.env.OS_CLIENT_CONFIG_FILE;
  else process.env.OS_CLIENT_CONFIG_FILE = saved;
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('aicerine serve --once', () => {
  it('runs one observe cycle, prints its report and leaves the plans in the store', async () => {
    const run = await runCommand([register], ['serve', '--config', join(dir, 'aicerine.yaml'), '--once']);
    const report = JSON.parse(run.out) as {
      full: boolean;
      aggregates: { aggregate: string; summary: string }[];
    };
    expect(report.full).toBe(true);
    expect(report.aggregates.length).toBe(2);
    for (const a of report.aggregates)
      expect(a.summary).toMatch(/observe mode|nothing to do|data-health gate/);
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'state', 'aicerine.db') });
    try {
      const verdicts = await store.dataHealth.list();
      expect(verdicts.items.length).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('refuses a bad configuration with the key and the value, and starts nothing', async () => {
    await writeFile(
      join(dir, 'bad.yaml'),
      'credentials: { reader: { cloud: sim } }\ndefaults: { mode: fast }\n',
    );
    await expect(
      runCommand([register], ['serve', '--config', join(dir, 'bad.yaml'), '--once']),
    ).rejects.toThrow(/defaults\.mode.*"fast"/);
  });
});

const CLI = join(import.meta.dirname, '..', '..', '..', 'bin', 'aicerine.js');

describe('aicerine serve', () => {
  it('starts the API next to the loop (here in the loopback no-auth mode, said loudly) and stops on SIGTERM', async () => {
    await writeFile(
      join(dir, 'api.yaml'),
      [
        'openstack: { reader: { cloud: sim } }',
        `prometheus: { url: "${sim.url}${PROMETHEUS_PREFIX}" }`,
        'store: { url: "sqlite:api-state/aicerine.db" }',
        'api: { host: 127.0.0.1, port: 0 }',
        'defaults: { mode: observe }',
        '',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--config', join(dir, 'api.yaml'), '--no-auth'], {
      env: { ...process.env, OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    // Each chunk of output re-checks what the test waits for; the child's exit ends every wait.
    const waiters = new Set<() => void>();
    const onOutput = (c: Buffer) => {
      log += c.toString();
      for (const w of [...waiters]) w();
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    /** Resolves with the first match of `re` in the log, as soon as the output carrying it arrives. */
    const logLine = (re: RegExp, what: string, ms: number) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no ${what} in ${ms / 1000} s; log:\n${log}`)), ms);
        const check = () => {
          const m = re.exec(log);
          if (m) done(null, m);
        };
        const onExit = (code: number | null) =>
          done(new Error(`serve exited (${code}) before ${what}; log:\n${log}`));
        const done = (err: Error | null, m?: RegExpExecArray) => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
          if (err) reject(err);
          else resolve(m as RegExpExecArray);
        };
        waiters.add(check);
        child.on('exit', onExit);
        check();
      });
    try {
      const url = (await logLine(/serve: API on (http:\/\/127\.0\.0\.1:\d+)\/v1/, 'API address', 20_000))[1];
      expect(url, log).toBeDefined();
      expect(log).toMatch(/NO AUTHENTICATION/);
      expect((await fetch(`${url}/v1/health`)).status).toBe(200);
      const me = (await (await fetch(`${url}/v1/whoami`)).json()) as { mode: string };
      expect(me.mode).toBe('no-auth');
      // The first cycle runs at once; metrics count it. The service logs each aggregate's line
      // (or the failure) after the cycle's listeners, the metrics among them, have run.
      await logLine(/cycle: agg-\d+: |service: cycle failed/, "the first cycle's end", 20_000);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toMatch(/aicerine_cycles_total\{outcome="ok"\} [1-9]/);
      // Aggregates the file does not list run with the defaults, and have their gauges too.
      expect(metrics).toMatch(/aicerine_imbalance\{aggregate="agg-1",dimension="overall"\} \d/);
      const hosts = await fetch(`${url}/v1/aggregates/agg-1/hosts`);
      expect(hosts.status).toBe(200);
      // Not in the file, planned with the defaults: listed with its mode.
      const aggs = (await (await fetch(`${url}/v1/aggregates`)).json()) as {
        items: { name: string; mode: string }[];
      };
      expect(aggs.items.map((a) => [a.name, a.mode])).toEqual([
        ['agg-1', 'observe'],
        ['agg-2', 'observe'],
      ]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('refuses --no-auth on an address that is not loopback, before starting anything', async () => {
    await writeFile(
      join(dir, 'open.yaml'),
      [
        'openstack: { reader: { cloud: sim } }',
        'store: { url: "sqlite:open-state/aicerine.db" }',
        'api: { host: 0.0.0.0 }',
        '',
      ].join('\n'),
    );
    await expect(
      runCommand([register], ['serve', '--config', join(dir, 'open.yaml'), '--no-auth']),
    ).rejects.toThrow(
      /--no-auth: the API without authentication binds to loopback only, and api\.host is 0\.0\.0\.0/,
    );
  });
});
