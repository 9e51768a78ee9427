// `aicerine serve --once` as an operator runs it: a configuration file naming clouds.yaml entries,
// a store file next to it, one cycle against the simulator, the report printed as JSON.
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
