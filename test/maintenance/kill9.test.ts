// kill -9 of the service in the middle of a rolling-maintenance campaign. The service runs in its
// own process (test/maintenance/fixtures/service-child.ts: loop, executor, task worker, API) on
// the simulator of this process and a SQLite store; it is killed with SIGKILL at chosen points,
// each found by watching the store, the simulator and the hand-over command, and started again
// on the same store and simulator each time:
//   1. hosts draining, live migrations in flight;
//   2. a host's hand-over running: its command answered and its answer written, its webhook
//      delivered to the receiver (examples/handover-receiver.mjs), whose action still runs, so
//      the webhook's answer is not written;
//   3. a host handed over, waiting for the operator's `done`;
//   4. again hosts draining with migrations in flight, one host back and re-admitted.
// The campaign must then complete: every host drained by one evacuation and re-admitted once,
// never more hosts out than `parallel`, no server migrated twice by one drain (the simulator's
// own migration records), each hand-over channel never sent again once its acknowledgement was
// written, the webhook cut by the kill delivered twice with the same id, and the receiver's
// action run once per host (docs/maintenance.md: at least once, the receiver drops duplicates).

import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { acknowledged } from '../../src/maintenance/handover.js';
import { isInFlight } from '../../src/maintenance/types.js';
import { SimClock } from '../../src/sim/clock.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import { type Proc, runTs } from '../executor/fixtures/processes.js';
import { type Receiver, startReceiver } from './receiver.js';
import { host, server, world } from './rig.js';

const CHILD = fileURLToPath(new URL('./fixtures/service-child.ts', import.meta.url));
// A live migration takes 13-22 simulated seconds: about a second of wall time here, long enough
// to be caught in flight, short enough for five drains in a few seconds each.
const SPEED = 20;
const NAMES = ['k1', 'k2', 'k3', 'k4', 'k5'];
const PARALLEL = 2;
/** The receiver's action for it blocks until the test lets it go: the kill lands while it runs. */
const HELD = 'k2';
const FINAL_MIGRATION = new Set(['completed', 'failed', 'cancelled', 'error', 'confirmed']);

// The hand-over command (no shell of Aicerine's: this one is the operator's script): counts its
// runs per host.
const HANDOVER_SCRIPT = 'echo "$AICERINE_HOST" >> "$0/handovers"';

const dir = mkdtempSync(join(tmpdir(), 'aicerine-maint-kill9-'));
const lives: Proc[] = [];
let sim: SimServerHandle | null = null;
let receiver: Receiver | null = null;
let store: Store | null = null;
afterAll(async () => {
  for (const p of lives)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(lives.map((p) => p.exited));
  if (existsSync(join(dir, `hold-${HELD}`))) unlinkSync(join(dir, `hold-${HELD}`));
  await store?.close();
  await receiver?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Kill {
  /** What the campaign was doing. */
  what: string;
  when: (s: Seen) => boolean;
}

interface Seen {
  hosts: Map<string, { state: string; handedOverAt: string | null; command: string | null }>;
  /** Hosts with a live migration in flight from them. */
  migratingFrom: Set<string>;
  handovers: string[];
  /** Hosts the receiver's action started for. */
  actions: string[];
  /** Hosts handed over that the operator has not said `done` for yet. */
  waiting: string[];
}

describe('kill -9 of the service mid-campaign', () => {
  it('completes a rolling-maintenance campaign across SIGKILLs while draining, handing over and waiting', async () => {
    const servers = NAMES.flatMap((h, i) => [1, 2, 3].map((k) => server(10 * i + k, h)));
    const cloud = new SimCloud(
      world(
        NAMES.map((n) => host(n)),
        servers,
      ),
      { clock: new SimClock({ speed: SPEED }), load: staticLoadModel() },
    );
    sim = await startSimServer({ cloud, password: 'secret' });
    receiver = await startReceiver(dir);
    writeFileSync(join(dir, `hold-${HELD}`), '');
    const config = JSON.stringify({
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      // One observe-mode cycle per life: the balancer plans, moves nothing.
      cycleInterval: '1h',
      defaults: { mode: 'observe', concurrency: { perSourceHost: 2, perAggregate: 6 } },
      maintenance: {
        pollInterval: '5s',
        webhook: receiver.url,
        command: ['/bin/sh', '-c', HANDOVER_SCRIPT, dir],
      },
    });
    // Heartbeats every 100 ms (2 simulated seconds); a dead process's tasks are adopted once
    // their heartbeat is 20 simulated seconds old: by the time its successor has started.
    const worker = JSON.stringify({ pollMs: 500, heartbeatMs: 100, staleAfterMs: 20_000 });

    let life: Proc;
    let api: string;
    const start = async () => {
      life = runTs(CHILD, [sim!.url, dir, config, worker]);
      lives.push(life);
      api = (await life.next(/^api /, 120_000)).slice(4);
    };
    await start();
    const post = async (path: string, body: unknown = {}) => {
      const res = await fetch(`${api}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { id: string } };
    };
    const started = await post('/v1/maintenance', { aggregate: 'rack', parallel: PARALLEL });
    expect(started.status).toBe(201);
    const id = started.body.id;
    store = await openStore({ kind: 'sqlite', path: join(dir, 'aicerine.db') });
    const campaign = async (id: string) => {
      const c = await store!.maintenance.get(id);
      if (c === null) throw new Error(`no campaign ${id}`);
      return c;
    };

    const plan: Kill[] = [
      { what: 'hosts draining, live migrations in flight', when: (s) => draining(s).length > 0 },
      {
        what: `${HELD} handing over (its command acknowledged and written, its webhook delivered and its answer not written)`,
        when: (s) =>
          s.actions.includes(HELD) &&
          s.hosts.get(HELD)?.handedOverAt === null &&
          acknowledged(s.hosts.get(HELD)?.command ?? null),
      },
      { what: 'a host handed over, waiting for done', when: (s) => s.waiting.length > 0 },
      {
        what: 'hosts draining, live migrations in flight, after a re-admission',
        when: (s) => draining(s).length > 0 && [...s.hosts.values()].some((h) => h.state === 'done'),
      },
    ];
    const kills: string[] = [];
    const told = new Set<string>();
    let maxOut = 0;
    let maxDisabled = 0;
    // Generous: a loaded 2-core machine runs the five drains several times slower than an idle one.
    const deadline = Date.now() + 420_000;
    for (;;) {
      const c = await campaign(id);
      const seen: Seen = {
        hosts: new Map(
          c.hosts.map((h) => [
            h.host,
            { state: h.state, handedOverAt: h.handedOverAt, command: h.handover.command },
          ]),
        ),
        migratingFrom: new Set(
          cloud.migrations
            .filter((m) => m.type === 'live-migration' && !FINAL_MIGRATION.has(m.status))
            .map((m) => m.source),
        ),
        handovers: handovers(),
        actions: receiver.actions(),
        waiting: c.hosts
          .filter((h) => h.state === 'ready' && h.handedOverAt !== null && !told.has(h.host))
          .map((h) => h.host),
      };
      maxOut = Math.max(maxOut, c.hosts.filter((h) => isInFlight(h.state)).length);
      maxDisabled = Math.max(
        maxDisabled,
        NAMES.filter((n) => cloud.requireHost(n).status === 'disabled').length,
      );
      if (c.state === 'DONE' || c.state === 'ABORTED') break;
      if (Date.now() > deadline)
        throw new Error(
          `the campaign did not end: ${c.state} ${JSON.stringify(c.hosts.map((h) => [h.host, h.state, h.note]))}; kills: ${kills.join('; ')}\n${life!.lines.slice(-30).join('\n')}`,
        );
      const next = plan[kills.length];
      // Not while a host said done is being re-admitted: killed between enabling the host and
      // writing it done, the campaign would find it enabled and record its re-admission a second
      // time, and the test counts one per host. The test chose that moment itself.
      const readmitting = c.hosts.some((h) => h.state === 'returned');
      if (next?.when(seen) && !readmitting) {
        life!.child.kill('SIGKILL');
        expect((await life!.exited).signal).toBe('SIGKILL');
        kills.push(
          `${next.what}: ${c.hosts
            .filter((h) => h.state !== 'pending')
            .map((h) => `${h.host} ${h.state}`)
            .join(
              ', ',
            )}; ${seen.migratingFrom.size ? `migrating from ${[...seen.migratingFrom].join(', ')}` : 'no migration'}`,
        );
        // The receiver's action the dead process's delivery started carries on; let it end.
        if (next === plan[1]) unlinkSync(join(dir, `hold-${HELD}`));
        await start();
        continue;
      }
      // The operator's word, except while the next kill is to find a host waiting for it.
      if (next !== plan[2])
        for (const h of seen.waiting) {
          const res = await post(`/v1/maintenance/hosts/${h}/done`);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          told.add(h);
        }
      // Sampled, not awaited: the kill points are states of another process's SQLite store and of
      // migrations on the simulator's virtual clock, neither of which announces a change, and the
      // maxima above (hosts out, hosts disabled) are only seen by looking.
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(kills).toHaveLength(plan.length);

    // The campaign: done, every host drained and re-admitted.
    const final = await campaign(id);
    expect(final.state).toBe('DONE');
    const evacuations = (await store.tasks.list({ kind: 'evacuate-compute' }, { limit: 100 })).items;
    expect(
      final.hosts.map((h) => [h.host, h.state]),
      JSON.stringify({
        hosts: final.hosts.map((h) => [h.host, h.state, h.note]),
        evacuations: evacuations.map((t) => [t.hosts[0], t.state, t.attempts, t.result, t.error]),
        migrations: cloud.migrations.map((m) => [m.server.uuid, m.source, m.dest, m.status]),
        kills,
      }),
    ).toEqual(NAMES.map((n) => [n, 'done']));
    for (const n of NAMES) expect(cloud.requireHost(n).status).toBe('enabled');
    expect(maxOut).toBeLessThanOrEqual(PARALLEL);
    expect(maxDisabled).toBeLessThanOrEqual(PARALLEL);

    // One evacuation per host, each DONE: no host drained twice.
    expect(evacuations.map((t) => t.hosts[0]).sort()).toEqual(NAMES);
    expect(evacuations.every((t) => t.state === 'DONE' && t.requestedBy === `maintenance:${id}`)).toBe(true);
    console.log(
      `maintenance kill -9: ${kills.length} kills (${kills.join(' | ')}); evacuation attempts ${evacuations
        .map((t) => `${t.hosts[0]} ${t.attempts}`)
        .join(', ')}; hand-over command runs ${handovers().join(',')}; webhook deliveries ${receiver
        .deliveries()
        .map((d) => `${d.host} ${d.verdict}`)
        .join(', ')}`,
    );
    const driver = await store.tasks.get(final.taskId!);
    expect(driver?.state).toBe('DONE');
    expect(driver?.attempts).toBeGreaterThan(1);
    // Re-admitted once each; disabled by the campaign once each (a kill between Nova's answer
    // and the audit write leaves the entry to the next run, which writes it).
    const audit = (await store.audit.list({ actor: `task:${final.taskId}` }, { limit: 500 })).items;
    const per = (action: string) =>
      NAMES.map((n) => audit.filter((a) => a.action === action && a.target === `host:${n}`).length);
    expect(per('task.maintenance.readmitted')).toEqual(NAMES.map(() => 1));
    expect(per('task.maintenance.disabled')).toEqual(NAMES.map(() => 1));

    // The simulator's migrations: every one completed (hosts are taken out between drains, so
    // no destination is disabled under a running drain); none of a server twice from the same
    // host; each host's drain moved what its record says.
    const live = cloud.migrations.filter((m) => m.type === 'live-migration');
    expect(
      live
        .filter((x) => x.status !== 'completed')
        .map(
          (m) =>
            `${m.server.uuid} ${m.source}->${m.requestedHost}: ${m.status}, ${cloud.lastErrors.get(m.id) ?? ''}`,
        ),
    ).toEqual([]);
    const migrations = live;
    const pairs = migrations.map((m) => `${m.server.uuid} from ${m.source}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    for (const h of final.hosts)
      expect(h.moved.live, h.host).toBe(migrations.filter((m) => m.source === h.host).length);
    for (const s of servers) expect(cloud.requireServer(s.id).status).toBe('ACTIVE');

    // The hand-over: a channel whose acknowledgement was written is never sent again (the
    // command of HELD ran once although its hand-over was cut); a delivery whose answer was not
    // written is sent again with the same id (the webhook of HELD twice), and the receiver acts
    // once per host. A kill may by chance cut another host's hand-over too.
    const runs = handovers();
    const delivered = receiver.deliveries();
    for (const d of delivered) expect(d.id).toBe(`maintenance-${id}-${d.host}`);
    for (const n of NAMES) {
      const ran = runs.filter((h) => h === n).length;
      const posted = delivered.filter((d) => d.host === n);
      if (n === HELD) {
        expect(ran, `command runs for ${n}`).toBe(1);
        expect(
          posted.map((d) => d.verdict),
          `webhook deliveries for ${n}`,
        ).toEqual(['new', 'duplicate']);
      } else {
        expect(ran, `command runs for ${n}`).toBeGreaterThanOrEqual(1);
        expect(ran, `command runs for ${n}`).toBeLessThanOrEqual(2);
        expect(posted.length, `webhook deliveries for ${n}`).toBeGreaterThanOrEqual(1);
        expect(posted.length, `webhook deliveries for ${n}`).toBeLessThanOrEqual(2);
      }
      expect(
        receiver.actions().filter((h) => h === n),
        `receiver actions for ${n}`,
      ).toEqual([n]);
    }
    for (const h of final.hosts)
      expect(h.handover, h.host).toEqual({ webhook: 'HTTP 200', command: 'exit 0' });

    life!.child.kill('SIGTERM');
    await life!.exited;
  }, 480_000);
});

function draining(s: Seen): string[] {
  return [...s.hosts].filter(([h, x]) => x.state === 'draining' && s.migratingFrom.has(h)).map(([h]) => h);
}

function handovers(): string[] {
  const f = join(dir, 'handovers');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
}
