import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenApi } from '../../../src/api/server.js';
import { register as registerAggregates } from '../../../src/cli/commands/aggregates.js';
import { register as registerAudit } from '../../../src/cli/commands/audit.js';
import { register as registerExecutions } from '../../../src/cli/commands/executions.js';
import { register as registerPause } from '../../../src/cli/commands/pause.js';
import { register as registerPlans } from '../../../src/cli/commands/plans.js';
import { register as registerQuarantine } from '../../../src/cli/commands/quarantine.js';
import { register as registerResume } from '../../../src/cli/commands/resume.js';
import { register as registerStatus } from '../../../src/cli/commands/status.js';
import { LocalLockService } from '../../../src/coordination/local-locks.js';
import { AggregateOwnership } from '../../../src/coordination/ownership.js';
import { type Harness, NOW, seedPlan, simKeystone, startApi } from '../../api/harness.js';
import { runCommand } from '../../fixtures/cli.js';

const registers = [
  registerPlans,
  registerExecutions,
  registerQuarantine,
  registerPause,
  registerResume,
  registerAggregates,
  registerAudit,
  registerStatus,
];
let ks: Awaited<ReturnType<typeof simKeystone>>;
let h: Harness;
let url: string;
const saved = { ...process.env };

beforeAll(async () => {
  ks = await simKeystone();
  h = await startApi({ kind: 'keystone', validator: ks.validator });
  url = await listenApi(h.app, { host: '127.0.0.1', port: 0, noAuth: false });
  Object.assign(process.env, {
    OS_CLOUD: '',
    OS_AUTH_URL: ks.sim.authUrl,
    OS_USERNAME: 'admin',
    OS_PASSWORD: 'pw',
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
  });
  await seedPlan(h.store, 'gold', 3);
  await h.store.createExecution(
    { id: 'e1', aggregate: 'gold', planId: '1', startedAt: NOW.toISOString(), startedBy: 'loop:active' },
    [{ step: 1, wave: 1, serverId: 's1', serverName: 'web-1', from: 'c1', to: 'c2', estimatedSeconds: 30 }],
  );
  await h.store.quarantine.quarantine({
    serverId: 's9',
    aggregate: 'gold',
    reason: 'failed 3 attempts',
    attempts: 3,
    at: NOW.toISOString(),
  });
});
afterAll(async () => {
  process.env = saved;
  await h.close();
  await ks.sim.close();
});

const run = (...args: string[]) => runCommand(registers, [...args, '--api', url]);

describe('operator commands against the API', () => {
  it('lists, shows, approves and rejects plans', async () => {
    const list = await run('plans', 'list');
    expect(list.out).toMatch(/^ID\s+AGGREGATE\s+MODE\s+STATUS/);
    expect(list.out).toMatch(/1\s+gold\s+assisted\s+proposed\s+3/);
    // `aicerine plans` alone lists, as the operator types it.
    expect((await run('plans')).out).toBe(list.out);
    const json = JSON.parse((await run('plans', 'list', '--json', '--status', 'proposed')).out);
    expect(json.items).toHaveLength(1);
    expect((await run('plans', 'approve', '1', '--steps', '1,2', '--comment', 'go')).out).toBe(
      'plan 1: partially-approved\n',
    );
    expect((await run('plans', 'reject', '1', '--steps', '3')).out).toBe('plan 1: partially-approved\n');
    const shown = (await run('plans', 'show', '1')).out;
    expect(shown).toContain('plan 1: gold (assisted), partially-approved, 3 moves');
    expect(shown).toContain('[approved by operator:admin: go]');
    expect(shown).toContain('[rejected by operator:admin]');
    await expect(run('plans', 'approve', '1', '--steps', 'one')).rejects.toThrow(
      /--steps: expected step numbers/,
    );
    await expect(run('plans', 'show', '77')).rejects.toThrow(
      /GET \/v1\/plans\/77: 404 plan 77 not found \[request /,
    );
  });

  it('lists, shows and aborts executions', async () => {
    expect((await run('executions', 'list')).out).toMatch(/e1\s+gold\s+1\s+running/);
    expect((await run('executions', 'show', 'e1')).out).toMatch(/1\s+1\s+web-1\s+c1\s+c2\s+pending/);
    expect((await run('executions', 'abort', 'e1', '--comment', 'stop')).out).toBe(
      'execution e1: aborting\n',
    );
    await expect(run('executions', 'abort', 'e1')).rejects.toThrow(
      /409 execution e1 is aborted, not running/,
    );
  });

  it('lists and releases quarantined servers', async () => {
    expect((await run('quarantine', 'list')).out).toMatch(/s9\s+gold\s+\S+\s+3\s+-\s+failed 3 attempts/);
    expect((await run('quarantine', 'release', 's9')).out).toBe('server s9: released by operator:admin\n');
    expect((await run('quarantine', 'list')).out).toBe('(none)\n');
  });

  it('pauses and resumes, globally and per aggregate', async () => {
    const paused = (await run('pause', '--aggregate', 'gold', '--reason', 'switch upgrade')).out;
    expect(paused).toMatch(/gold\s+-\s+operator:admin\s+\S+\s+switch upgrade/);
    expect((await run('resume', '--aggregate', 'gold')).out).toMatch(/gold\s+-\s+-/);
    await run('pause');
    expect(JSON.parse((await run('resume', '--json')).out).global.runtime).toBeNull();
    await expect(run('resume')).rejects.toThrow(/409 the service is not paused/);
  });

  it('says what to do when the API is unreachable or refuses the token', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(
      runCommand(registers, ['plans', 'list', '--api', `http://127.0.0.1:${port}`, '--no-auth']),
    ).rejects.toThrow(/cannot be reached \(ECONNREFUSED\): is `aicerine serve` running there\? Set --api/);
    await expect(run('plans', 'list', '--no-auth')).rejects.toThrow(/401 .*check the credentials/);
  });

  it('shows the aggregates and the audit log', async () => {
    await h.store.dataHealth.record({
      aggregate: 'gold',
      verdict: 'blocked',
      reasons: ['stale: 400 s'],
      at: NOW.toISOString(),
    });
    // The imbalance is the latest cycle's measurement, not the plan's.
    await h.store.history.record({
      aggregate: 'gold',
      at: NOW.toISOString(),
      imbalance: 0.08,
      dimensions: { cpu: { stddev: 0.08, max: 0.5 } },
      hosts: 3,
      planMoves: 3,
    });
    const aggs = (await run('aggregates')).out;
    expect(aggs).toMatch(/^AGGREGATE\s+MODE\s+PAUSED\s+WINDOW\s+DATA\s+PLAN\s+IMBALANCE\s+LAST DECISION/);
    expect(aggs).toMatch(
      /gold\s+assisted\s+no\s+open\s+blocked: stale: 400 s\s+1 partially-approved \(3 moves\)\s+0\.0800\s+aggregate cooldown until /,
    );
    expect(aggs).toMatch(/silver\s+observe\s+no\s+closed\s+-\s+-\s+-\s+-/);
    const audit = (await run('audit', '--action', 'plan.approve')).out;
    expect(audit).toMatch(/operator:admin\s+plan\.approve\s+plan:1\s+token:/);
    const page = JSON.parse((await run('audit', '--limit', '1', '--json')).out);
    expect(page.items).toHaveLength(1);
    expect((await run('audit', '--limit', '1')).out).toMatch(/more: --cursor \d+\n$/);
  });

  it('reports the service status', async () => {
    await run('pause', '--aggregate', 'silver', '--reason', 'rack move');
    const out = (await run('status')).out;
    expect(out).toMatch(/^aicerine \d+\.\d+\.\d+ at http:\/\/127\.0\.0\.1:\d+: ok \(store ok\)\n/);
    expect(out).toContain('service: running');
    expect(out).toMatch(/ {2}silver: paused by operator:admin at \S+ \(rack move\)/);
    expect(out).toMatch(/ {2}gold: running/);
    expect(out).toContain('replicas: none (one process owns every aggregate)');
    // Under a service-wide pause, an aggregate not paused itself is paused with the service.
    await run('pause', '--reason', 'upgrade');
    const paused = (await run('status')).out;
    expect(paused).toMatch(/service: paused by operator:admin at \S+ \(upgrade\)/);
    expect(paused).toMatch(/ {2}gold: paused with the service/);
    expect(paused).toMatch(/ {2}silver: paused by operator:admin/);
    await run('resume');
    await run('resume', '--aggregate', 'silver');
  });

  it('lists the replicas, what each owns and its heartbeat', async () => {
    const locks = new LocalLockService(() => NOW.getTime());
    const replica = new AggregateOwnership({
      locks,
      replicaId: 'r1',
      aggregates: () => ['gold', 'silver'],
      ttlMs: 5000,
      intervalMs: 1_000_000,
      address: 'http://r1.example:8780',
      now: () => NOW.getTime(),
      hooks: { acquired: async () => {}, releasing: async () => {}, lost: () => {} },
    });
    await replica.start();
    const r = await startApi({ kind: 'none' }, { replicas: replica });
    try {
      const at = await listenApi(r.app, { host: '127.0.0.1', port: 0, noAuth: true });
      const out = (await runCommand(registers, ['status', '--api', at])).out;
      expect(out).toContain('replicas: 1 live');
      expect(out).toMatch(
        new RegExp(
          `  r1 \\(answering\\) at http://r1\\.example:8780: heartbeat ${NOW.toISOString().replace(/\./g, '\\.')}; owns gold \\(fence \\d+\\), silver \\(fence \\d+\\)`,
        ),
      );
    } finally {
      await replica.stop();
      await r.close();
    }
  });
});
