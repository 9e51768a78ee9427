// The security findings of issue 25, replayed against a real `aicerine serve` process (bin/aicerine.js,
// the built package) on the simulator, in the no-auth mode and with Keystone: cross-site requests
// and DNS rebinding, cross-tenant reads, password guessing, prototype names, headers and file
// modes, and the smaller ones (non-UTF-8 bodies, huge headers, prototype keys). Green only when
// every one is refused with the status named, and the store and the audit are as they were.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudsYaml } from '../../src/sim/connect-info.js';
import { PROMETHEUS_PREFIX } from '../../src/sim/http/prometheus.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { SimCloud } from '../../src/sim/model.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { openStore } from '../../src/store/store.js';
import { seedPlan } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/aicerine.js');
const PASSWORD = 'secret';
const NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

interface Served {
  url: string;
  dir: string;
  storePath: string;
  planId: string;
  child: ChildProcess;
  /** Resolves once the first cycle is logged: before it, aggregate routes answer 503 (no snapshot). */
  cycled: Promise<void>;
  close(): Promise<void>;
}

async function serve(sim: SimServerHandle, auth: boolean): Promise<Served> {
  expect(existsSync(join(ROOT, 'dist/cli/main.js')), 'dist/ is missing: run npm run build').toBe(true);
  const dir = await mkdtemp(join(tmpdir(), 'aic-hostile-serve-'));
  await writeFile(
    join(dir, 'clouds.yaml'),
    cloudsYaml({
      authUrl: sim.authUrl,
      password: PASSWORD,
      cloudName: 'sim',
      prometheusUrl: `${sim.url}${PROMETHEUS_PREFIX}`,
      controlUrl: sim.url,
    }),
  );
  await writeFile(
    join(dir, 'aicerine.yaml'),
    [
      'credentials: { reader: { cloud: sim } }',
      `prometheus: { url: "${sim.url}${PROMETHEUS_PREFIX}" }`,
      'store: { url: "sqlite:state/aicerine.db" }',
      'stateDir: state',
      'cycleInterval: 1h',
      'defaults: { mode: observe }',
      'api: { host: 127.0.0.1, port: 0 }',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // A plan waiting for a decision, as the one the cross-site page approved.
  const storePath = join(dir, 'state', 'aicerine.db');
  const seed = await openStore({ kind: 'sqlite', path: storePath });
  const planId = (await seedPlan(seed, 'gold', 35)).id;
  await seed.close();
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--config', join(dir, 'aicerine.yaml'), ...(auth ? [] : ['--no-auth'])],
    {
      env: { ...process.env, OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'), OS_CLOUD: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  let onCycle = (): void => {};
  const cycled = new Promise<void>((r) => {
    onCycle = r;
  });
  const url = await new Promise<string>((resolvePromise, reject) => {
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      log += chunk;
      const m = /API on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(log);
      if (m) resolvePromise(m[1]!);
      if (log.includes('cycle: ')) onCycle();
    });
    child.on('exit', (code) =>
      reject(new Error(`serve exited ${code} before its API was up:\n${log.slice(-3000)}`)),
    );
  });
  return {
    url,
    dir,
    storePath,
    planId,
    child,
    cycled,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What an accepted finding would have changed: operator audit entries, pauses, decisions. */
async function written(path: string, planId: string): Promise<string> {
  const store = await openStore({ kind: 'sqlite', path });
  try {
    const audit = (await store.audit.list({}, { limit: 1000 })).items.filter((e) =>
      e.actor.startsWith('operator:'),
    );
    return JSON.stringify([
      audit,
      await store.pauses.list(),
      (await store.plans.get(planId))?.status,
      await store.plans.decisions(planId),
      (await store.snapshots.list()).items,
    ]);
  } finally {
    await store.close();
  }
}

/** A raw request, for what fetch will not send (another Host, a 100 KB header). */
function raw(url: string, text: string): Promise<{ status: number; headers: string; body: string }> {
  const u = new URL(url);
  return new Promise((resolvePromise) => {
    const sock = connect(Number(u.port), u.hostname, () => sock.end(text));
    let data = '';
    sock.on('data', (d) => {
      data += d.toString();
    });
    const done = () => {
      const split = data.indexOf('\r\n\r\n');
      resolvePromise({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0),
        headers: data.slice(0, split),
        body: data.slice(split + 4),
      });
    };
    sock.on('close', done);
    sock.on('error', done);
  });
}

for (const auth of [false, true]) {
  describe(`aicerine serve ${auth ? 'with Keystone' : '--no-auth'}, probed as an attacker would`, () => {
    let sim: SimServerHandle;
    let s: Served;
    let admin: Record<string, string> = {};
    let before = '';

    beforeAll(async () => {
      const snapshot = synthesizeSnapshot({ hosts: 8, servers: 60, groups: 2, seed: 5, aggregates: 2 });
      sim = await startSimServer({ cloud: new SimCloud(snapshot), password: PASSWORD });
      s = await serve(sim, auth);
      if (auth) {
        const res = await fetch(`${s.url}/v1/auth/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: PASSWORD, project: 'admin' }),
        });
        expect(res.status).toBe(201);
        admin = { 'x-auth-token': ((await res.json()) as { token: string }).token };
      }
      before = await written(s.storePath, s.planId);
    }, 120_000);
    afterAll(async () => {
      await s?.close();
      await sim?.close();
    });

    it('1. refuses cross-site state changes (403/415) and foreign Host names (421)', async () => {
      // What a page elsewhere can send without a preflight, even if the browser added a token.
      for (const path of ['/v1/pause', `/v1/plans/${s.planId}/approve`]) {
        const blind = await fetch(`${s.url}${path}`, { method: 'POST', headers: admin });
        expect(blind.status, path).toBe(403);
        const text = await fetch(`${s.url}${path}`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'text/plain;charset=UTF-8' },
          body: '{}',
        });
        expect(text.status, path).toBe(415);
        const form = await fetch(`${s.url}${path}`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'a=1',
        });
        expect(form.status, path).toBe(415);
      }
      // DNS rebinding: the attacker's name, this address.
      const token = auth ? `X-Auth-Token: ${admin['x-auth-token']}\r\n` : '';
      const get = await raw(
        s.url,
        `GET /v1/aggregates HTTP/1.1\r\nHost: evil.example\r\n${token}Connection: close\r\n\r\n`,
      );
      expect(get.status).toBe(421);
      const pause = await raw(
        s.url,
        `POST /v1/pause HTTP/1.1\r\nHost: evil.example\r\n${token}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      expect(pause.status).toBe(421);
      expect(JSON.parse(pause.body).error).toMatchObject({
        code: 'misdirected-request',
        field: 'headers.host',
      });
      // No CORS header invites another origin in.
      const h = await fetch(`${s.url}/v1/health`, { headers: { origin: 'https://evil.example' } });
      for (const k of ['allow-origin', 'allow-credentials', 'allow-methods', 'allow-headers'])
        expect(h.headers.get(`access-control-${k}`), k).toBeNull();
    });

    it.runIf(auth)('2. shows a project member none of the cloud (403), only who they are', async () => {
      const res = await fetch(`${s.url}/v1/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'demo', password: PASSWORD, project: 'demo' }),
      });
      expect(res.status).toBe(201);
      const member = { 'x-auth-token': ((await res.json()) as { token: string }).token };
      for (const path of ['/v1/snapshots/1', '/v1/audit', '/v1/plans', '/v1/aggregates', '/v1/executions'])
        expect((await fetch(`${s.url}${path}`, { headers: member })).status, path).toBe(403);
      expect((await fetch(`${s.url}/v1/whoami`, { headers: member })).status).toBe(200);
      for (const path of ['/v1/health', '/v1/version'])
        expect((await fetch(`${s.url}${path}`)).status).toBe(200);
    });

    it('3. throttles password guessing: 429 with Retry-After, the same for a user that does not exist', async () => {
      const login = (username: string, password: string) =>
        fetch(`${s.url}/v1/auth/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password, project: 'admin' }),
        });
      if (!auth) {
        // No login at all without authentication.
        expect((await login('admin', 'x')).status).toBe(409);
        return;
      }
      for (const user of ['demo', 'nobody-here']) {
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) statuses.push((await login(user, `guess-${i}`)).status);
        expect(statuses, user).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
        const last = await login(user, 'guess-9');
        expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await last.json()).error.code).toBe('too-many-logins');
      }
      // The right password, once guessing started, waits like the wrong ones.
      expect((await login('demo', PASSWORD)).status).toBe(429);
    });

    it('4. treats prototype names as unknown names: 404, no phantom pause or audit entry', async () => {
      await s.cycled;
      for (const name of NAMES) {
        const hosts = await fetch(`${s.url}/v1/aggregates/${name}/hosts`, { headers: admin });
        expect(hosts.status, name).toBe(404);
        const pause = await fetch(`${s.url}/v1/aggregates/${name}/pause`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(pause.status, name).toBe(404);
      }
      expect(
        (
          await fetch(`${s.url}/v1/aggregates/nope/pause`, {
            method: 'POST',
            headers: { ...admin, 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(404);
    });

    it('5. sends the policy headers on the dashboard and the API, and keeps its files to itself', async () => {
      for (const path of ['/', '/v1/health']) {
        const res = await fetch(`${s.url}${path}`);
        expect(res.headers.get('content-security-policy'), path).toMatch(
          /default-src 'self'.*frame-ancestors 'none'/,
        );
        expect(res.headers.get('referrer-policy')).toBe('no-referrer');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      const mode = async (p: string) => ((await stat(p)).mode & 0o777).toString(8);
      expect(await mode(join(s.dir, 'state'))).toBe('700');
      for (const f of ['aicerine.db', 'aicerine.db-wal', 'aicerine.db-shm'])
        expect(await mode(join(s.dir, 'state', f)), f).toBe('600');
    });

    it('6. refuses non-UTF-8 bodies (415), huge headers (431) and prototype keys (400), in the error shape', async () => {
      const bad = await fetch(`${s.url}/v1/pause`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: Buffer.from([0x7b, 0x22, 0x72, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
      });
      expect(bad.status).toBe(415);
      expect((await bad.json()).error).toMatchObject({ code: 'unsupported-media-type', field: 'body' });
      const big = await raw(
        s.url,
        `GET /v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`,
      );
      expect(big.status).toBe(431);
      expect(JSON.parse(big.body).error).toMatchObject({
        status: 431,
        code: 'headers-too-large',
        field: 'headers',
      });
      const proto = await fetch(`${s.url}/v1/pause`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: '{"__proto__":{"admin":true}}',
      });
      expect(proto.status).toBe(400);
      expect((await proto.json()).error).toMatchObject({ code: 'forbidden-key', field: 'body.__proto__' });
    });

    it('leaves the store and the audit as they were', async () => {
      expect(await written(s.storePath, s.planId)).toBe(before);
      // And still does what its operator asks.
      const ok = await fetch(`${s.url}/v1/pause`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: '{"reason":"the real operator"}',
      });
      expect(ok.status).toBe(200);
    });
  });
}
