// No secret and no token leaves the service: a full simulated cycle (configuration file with
// application credentials by reference, record, plan, live migrations, prevention) run the way
// `serve` runs it, then everything it emitted (its logs at debug level, the audit log, every API
// answer, the metrics, the errors thrown on the way) is searched for the application credential
// secrets and for every token the simulated Keystone issued.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreServiceControl } from '../../src/api/control.js';
import { createApiLogger } from '../../src/api/logger.js';
import { ApiMetrics } from '../../src/api/metrics.js';
import { buildApi } from '../../src/api/server.js';
import { accessRules, type CredentialKind, prefixesFromCatalog } from '../../src/cloud/credentials.js';
import { isCloudError } from '../../src/cloud/errors.js';
import { createLogger } from '../../src/cloud/log.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { credentialLabel, sessionSourceFor } from '../../src/config/credentials.js';
import { loadServiceConfig } from '../../src/config/load.js';
import { CLOUD_CALL_ACTION } from '../../src/service/call-audit.js';
import { openServiceParts } from '../../src/service/open.js';
import { AicerineService } from '../../src/service/service.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { host, server, snapshot } from '../sim/fixtures.js';

const SPEED = 50;
const READER_ENV = 'AICERINE_TEST_READER_SECRET';
let sim: SimServerHandle;
let admin: CloudSession;
let dir: string;
const secrets: string[] = [];
const ids: Record<string, string> = {};

async function appCredential(kind: CredentialKind): Promise<string> {
  const userId = (await admin.token()).userId as string;
  const prefixes = await prefixesFromCatalog((t) => admin.service(t).endpoint());
  const res = await admin.service('identity').request({
    method: 'POST',
    path: `/users/${userId}/application_credentials`,
    body: { application_credential: { name: `aicerine-${kind}`, access_rules: accessRules(kind, prefixes) } },
  });
  const ac = (res.body as { application_credential: { id: string; secret: string } }).application_credential;
  ids[kind] = ac.id;
  secrets.push(ac.secret);
  return ac.secret;
}

beforeAll(async () => {
  // Two hot hosts and a cool one in one aggregate: the plan moves servers, prevention lowers ratios.
  const hosts = ['h1', 'h2', 'h3'].map((n) => ({ ...host(n), aggregates: ['gold'] }));
  const servers = Array.from({ length: 8 }, (_, i) => server(i + 1, i < 6 ? 'h1' : 'h2', 2048));
  const cloud = new SimCloud(snapshot(hosts, servers), {
    clock: new SimClock({ speed: SPEED }),
    load: staticLoadModel(),
  });
  sim = await startSimServer({ cloud, password: 'admin-password-7f3a' });
  admin = await openSession({ config: simAdminConfig(sim.authUrl, 'admin-password-7f3a', 'secrets test') });
  secrets.push('admin-password-7f3a');
  dir = await mkdtemp(join(tmpdir(), 'aic-secrets-'));
}, 60_000);

afterAll(async () => {
  delete process.env[READER_ENV];
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('secrets stay where the operator keeps them', () => {
  it('appear in no log, audit entry, API answer, metric or error of a full cycle', async () => {
    process.env[READER_ENV] = await appCredential('reader');
    await writeFile(join(dir, 'actuator.secret'), `${await appCredential('actuator')}\n`, { mode: 0o600 });
    const file = join(dir, 'aicerine.yaml');
    await writeFile(
      file,
      [
        'credentials:',
        `  reader: { applicationCredential: { authUrl: "${sim.authUrl}", id: ${ids.reader}, secretEnv: ${READER_ENV} } }`,
        `  actuator: { applicationCredential: { authUrl: "${sim.authUrl}", id: ${ids.actuator}, secretFile: actuator.secret } }`,
        `prometheus: { url: "${sim.url}${PROMETHEUS_PREFIX}" }`,
        'store: { url: "sqlite:aicerine.db" }',
        'cycleInterval: 1m',
        'defaults:',
        '  mode: active',
        '  windows: ["Mon-Sun 00:00 - 24:00 UTC"]',
        '  budgets: { perCycle: 3 }',
        '  vcpuRatio: { target: 4, floor: 2 }',
        '',
      ].join('\n'),
    );
    await chmod(file, 0o600);

    const lines: string[] = [];
    const errors: string[] = [];
    const logger = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    const { config, warnings } = await loadServiceConfig(file);
    expect(warnings).toEqual([]);
    const parts = await openServiceParts(config, logger);
    const service = new AicerineService({
      config,
      store: parts.store,
      reader: parts.reader,
      actuator: parts.actuator,
      clock: {
        now: () => sim.cloud.clock.nowMs(),
        sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / SPEED))),
      },
      logger,
      recorder: { historyDays: 1 },
    });
    const reports = [];
    try {
      reports.push(await service.runCycle());
      await service.executor.idle();
      reports.push(await service.runCycle());
      await service.executor.idle();
    } finally {
      await service.stop();
    }
    const started = reports.flatMap((r) => r.aggregates).reduce((n, a) => n + a.started, 0);
    expect(started).toBeGreaterThan(0);
    expect(sim.cloud.migrations.length).toBeGreaterThan(0);

    // Which credential made each write: one audit entry per actuator call, none for reads.
    const audit = (await parts.store.audit.list({}, { limit: 1000 })).items;
    const calls = audit.filter((a) => a.action === CLOUD_CALL_ACTION);
    expect(calls.length).toBeGreaterThan(0);
    const label = credentialLabel('actuator', config.credentials.actuator ?? { kind: 'environment' });
    expect(label).toBe(`actuator (application credential ${ids.actuator})`);
    expect(calls.every((a) => a.credential === label)).toBe(true);
    expect(calls.map((a) => a.target)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^compute:POST \/compute\/v2\.1\/servers\/[^/]+\/action$/),
      ]),
    );
    expect(calls.some((a) => /GET/.test(a.target))).toBe(false);
    // The per-request debug log names the credential of each request.
    expect(lines.some((l) => l.includes(`"credential":"${label}"`))).toBe(true);
    expect(lines.some((l) => l.includes('"credential":"reader (application credential'))).toBe(true);

    // Every API answer and the metrics.
    const metrics = new ApiMetrics();
    const apiLines: string[] = [];
    const app = await buildApi({
      store: parts.store,
      config,
      control: new StoreServiceControl(parts.store, () => new Date()),
      auth: { kind: 'none' },
      metrics,
      logger: createApiLogger({
        level: 'debug',
        destination: new Writable({
          write(chunk, _enc, done) {
            apiLines.push(String(chunk));
            done();
          },
        }),
      }),
    });
    const answers: string[] = [];
    for (const url of [
      '/v1/health',
      '/v1/config',
      '/v1/aggregates',
      '/v1/plans',
      '/v1/executions',
      '/v1/audit?limit=1000',
      '/v1/ratio-changes',
      '/v1/data-health',
      '/v1/quarantine',
      '/v1/pauses',
      '/metrics',
    ]) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      answers.push(res.body);
    }
    expect(answers.join('\n')).toContain(ids.actuator as string);
    await app.close();

    // Errors on the way: a wrong secret, a call refused locally, a call Keystone refuses, a
    // missing secret variable.
    const collect = async (p: Promise<unknown>) => {
      const e = await p.then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(Error);
      errors.push(`${(e as Error).message}\n${(e as Error).stack ?? ''}`);
      return e;
    };
    const readerRef = config.credentials.reader;
    const wrong = { ...(await sessionSourceFor(readerRef)) };
    if (wrong.config)
      wrong.config = {
        ...wrong.config,
        auth: { ...wrong.config.auth, applicationCredentialSecret: 'wrong-secret-1c9e' },
      };
    secrets.push('wrong-secret-1c9e');
    await collect(openSession({ ...wrong, logger }));
    const refusedLocally = await collect(
      parts.reader.nova.liveMigrate('00000000-0000-4000-8000-000000000001', 'h3'),
    );
    expect(isCloudError(refusedLocally, 'not-allowed')).toBe(true);
    const actuatorPlain = await openSession({
      ...(await sessionSourceFor(config.credentials.actuator ?? readerRef)),
      logger,
    });
    const refusedByKeystone = await collect(actuatorPlain.nova.listServers());
    expect(isCloudError(refusedByKeystone, 'auth')).toBe(true);
    delete process.env[READER_ENV];
    const missing = await collect(sessionSourceFor(readerRef));
    expect((missing as Error).message).toContain(READER_ENV);
    await parts.store.close();

    const emitted = [
      ...lines,
      ...apiLines,
      JSON.stringify(audit),
      JSON.stringify(reports),
      ...answers,
      ...errors,
      await metrics.registry.metrics(),
    ].join('\n');
    const tokens = [...sim.keystone.tokens.keys()];
    expect(tokens.length).toBeGreaterThan(3);
    for (const s of [...secrets, ...tokens])
      expect(emitted.includes(s), `a secret or token leaked: ${s.slice(0, 6)}…`).toBe(false);
    // The search looks at something real: identifiers that may be shown are there.
    expect(emitted).toContain(ids.reader as string);
  }, 120_000);
});
