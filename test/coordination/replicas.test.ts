// Replicas against the simulator (slow migrations), on a private MariaDB and etcd: 3 replicas
// share 4 aggregates, each executing a stored plan. Killing the owner of an aggregate with kill -9
// mid-execution, restarting every replica in turn, or cutting one off from etcd: another replica
// takes over within the lease TTL, reconciles the in-flight migrations from the journal and Nova,
// and no server is migrated twice (the simulator's own migration records say so).
// Every wait is on what the replicas say as it happens (their `owns`, `lost`, `move`, `ended`
// lines), re-checked at each new line, bounded by a timeout: no sleep, no polling on a timer, so
// a loaded machine makes the test slower, not flaky.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { PlannedMove } from '../../src/executor/journal.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { openStore, type Store, type StoreOptions } from '../../src/store/index.js';
import { type Proc, runTs } from '../executor/fixtures/processes.js';
import { host, server, snapshot } from '../executor/sim-world.js';
import { testBackends } from '../store/backends.js';
import { cuttableProxy } from './tcp-proxy.js';

const SIM = fileURLToPath(new URL('../executor/fixtures/sim-child.ts', import.meta.url));
const REPLICA = fileURLToPath(new URL('./fixtures/replica-child.ts', import.meta.url));
const etcd = inject('etcd');
const mariadb = testBackends().find((b) => b.name === 'mariadb')!;

const AGGREGATES = ['agg-a', 'agg-b', 'agg-c', 'agg-d'];
const HOSTS_PER_AGGREGATE = 60;
const SOURCES = 3;
const MOVES_PER_SOURCE = 3;
const SPEED = 5;
// Renewed every TTL/3 and trusted until TTL − 1 s after the renewal was sent: on a loaded 2-core
// machine a renewal can take a second, so a 3 s TTL lets leases lapse without any failure.
const TTL_MS = 5000;
/**
 * A bound, not a figure: the lease TTL plus one rebalance pass plus the new owner's claim, with
 * room for a 2-core machine at load average 25, where that took up to 4.4 s beyond the TTL. The
 * takeover time itself is measured by bench/replicas.mjs (docs/replicas.md, Figures).
 */
const TAKEOVER_BOUND_MS = 3 * TTL_MS;

interface World {
  snap: Snapshot;
  plans: Map<string, PlannedMove[]>;
}

function world(): World {
  const hosts = [];
  const servers = [];
  const plans = new Map<string, PlannedMove[]>();
  let n = 0;
  for (const agg of AGGREGATES) {
    const names = Array.from(
      { length: HOSTS_PER_AGGREGATE },
      (_, i) => `${agg}-h${String(i + 1).padStart(3, '0')}`,
    );
    hosts.push(...names.map((h) => host(h, { aggregates: [agg] })));
    const moves: PlannedMove[] = [];
    for (let s = 0; s < SOURCES; s++)
      for (let k = 0; k < MOVES_PER_SOURCE; k++) {
        n++;
        const srv = server(n, names[s]!, [8192, 16384][n % 2]);
        servers.push(srv);
        moves.push({
          step: moves.length + 1,
          wave: 1,
          serverId: srv.id,
          serverName: srv.name,
          from: names[s]!,
          to: names[SOURCES + ((s * MOVES_PER_SOURCE + k) % 4)]!,
          estimatedSeconds: 15,
        });
      }
    plans.set(agg, moves);
  }
  return { snap: snapshot(hosts, servers), plans };
}

const dir = mkdtempSync(join(tmpdir(), 'aicerine-replicas-'));
const procs: Proc[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of procs)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  for (const c of cleanups.reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

interface Scenario {
  url: string;
  store: Store;
  storeOptions: StoreOptions;
  prefix: string;
  plans: Map<string, PlannedMove[]>;
  replica(id: string, etcdEndpoint?: string): Proc;
  /** Every `owns` line so far: aggregate, replica, fence, wall time. */
  owners(): { aggregate: string; replica: string; fence: number; at: number }[];
  currentOwner(aggregate: string): string | null;
  /** Aggregates with a move whose last written state (any replica's `move` lines) is `migrating`. */
  migrating(): string[];
  /** The newest process of the replica. */
  procOf(id: string): Proc;
  /**
   * Once every replica is up and every aggregate owned: stores one running execution per
   * aggregate (as the owner's loop would) and tells every live replica to start those of its
   * aggregates. Before that nothing runs, so no replica finishes the work before the others join.
   */
  go(): Promise<void>;
  /** Stops the replicas and the simulator of the scenario. */
  stopAll(): Promise<void>;
}

async function scenario(name: string): Promise<Scenario> {
  const { snap, plans } = world();
  const snapFile = join(dir, `${name}.json`);
  writeFileSync(snapFile, JSON.stringify(snap));
  const sim = runTs(SIM, [snapFile, String(SPEED)]);
  procs.push(sim);
  const url = (await sim.next(/^url /, 60_000)).slice(4);
  const { options, cleanup } = await mariadb.fresh();
  const store = await openStore(options);
  cleanups.push(async () => {
    await store.close();
    await cleanup();
  });
  const prefix = `/${name}-${randomBytes(3).toString('hex')}/`;
  const started: { id: string; proc: Proc }[] = [];
  const owners = () =>
    started.flatMap(({ id, proc }) =>
      proc.lines
        .filter((l) => l.startsWith('owns '))
        .map((l) => {
          const [, aggregate, fence, , at] = l.split(' ');
          return { aggregate: aggregate!, replica: id, fence: Number(fence), at: Number(at) };
        }),
    );
  return {
    url,
    store,
    storeOptions: options,
    prefix,
    plans,
    replica(id, etcdEndpoint = etcd?.endpoint ?? '') {
      const proc = runTs(REPLICA, [
        url,
        JSON.stringify(options),
        etcdEndpoint,
        prefix,
        id,
        AGGREGATES.join(','),
        String(TTL_MS),
      ]);
      procs.push(proc);
      started.push({ id, proc });
      return proc;
    },
    owners,
    currentOwner(aggregate) {
      const mine = owners().filter((o) => o.aggregate === aggregate);
      return mine.sort((a, b) => a.fence - b.fence).at(-1)?.replica ?? null;
    },
    migrating() {
      // A final state is never left, whichever process said it last; otherwise the newest line.
      const last = new Map<string, { state: string; at: number }>();
      for (const { proc } of started)
        for (const l of proc.lines) {
          if (!l.startsWith('move ')) continue;
          const [, execution, step, state, at] = l.split(' ');
          const key = `${execution} ${step}`;
          const was = last.get(key);
          if (was !== undefined && (FINAL.has(was.state) || was.at > Number(at))) continue;
          last.set(key, { state: state!, at: Number(at) });
        }
      return [
        ...new Set(
          [...last]
            .filter(([, v]) => v.state === 'migrating')
            .map(([k]) => k.split(' ')[0]!.slice('exec-'.length)),
        ),
      ].sort();
    },
    procOf: (id) => started.filter((r) => r.id === id).at(-1)!.proc,
    async go() {
      await waitFor(
        'every aggregate owned',
        () => AGGREGATES.every((a) => owners().some((o) => o.aggregate === a)),
        60_000,
      );
      for (const [aggregate, moves] of plans)
        await store.createExecution(
          {
            id: `exec-${aggregate}`,
            aggregate,
            planId: null,
            startedAt: new Date().toISOString(),
            startedBy: 'test:replicas',
          },
          moves,
        );
      for (const { proc } of started)
        if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGUSR2');
    },
    async stopAll() {
      const live = [...started.map((r) => r.proc), sim].filter(
        (p) => p.child.exitCode === null && p.child.signalCode === null,
      );
      for (const p of live) p.child.kill('SIGTERM');
      await Promise.all(live.map((p) => p.exited));
    },
  };
}

const FINAL = new Set(['completed', 'failed', 'skipped', 'aborted']);

/**
 * Re-checks `check` at every new line (or exit) of any process of the test, until it holds; fails
 * after `timeoutMs` (a bound, not a wait: nothing is re-checked on a timer).
 */
async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let wake = () => {};
    const woken = new Promise<void>((r) => {
      wake = r;
    });
    // Listening before checking: a line that comes during the check is not missed.
    const stops = procs.map((p) => p.watch(wake));
    let timer: NodeJS.Timeout | undefined;
    try {
      if (await check()) return;
      const left = until - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out waiting for ${what}; the replicas said:\n${procs
            .map(
              (p) =>
                `${p.child.spawnargs.slice(3, 4).join(' ')} ${p.lines.slice(-15).join('\n  ')}\n${p.stderr().slice(-1500)}`,
            )
            .join('\n')}`,
        );
      await Promise.race([
        woken,
        new Promise<void>((r) => {
          timer = setTimeout(r, left);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      for (const stop of stops) stop();
    }
  }
}

/** Every execution finished, every move completed, and no server migrated twice. */
async function expectEveryServerMigratedOnce(s: Scenario): Promise<{ migrations: number; moves: number }> {
  await waitFor(
    'every execution to finish',
    async () => (await s.store.listUnfinishedExecutions()).length === 0,
    240_000,
  );
  const sim = (
    (await (await fetch(`${s.url}/sim/migrations`)).json()) as {
      migrations: { id: number; server: string; status: string; requestedHost: string }[];
    }
  ).migrations;
  const truth = (await (await fetch(`${s.url}/sim/snapshot`)).json()) as Snapshot;
  const hostOf = new Map(truth.servers.map((x) => [x.id, x.host]));
  let moves = 0;
  for (const [aggregate, planned] of s.plans) {
    expect((await s.store.getExecution(`exec-${aggregate}`))?.state).toBe('finished');
    const stored = await s.store.listMoves(`exec-${aggregate}`);
    for (const m of stored) {
      moves++;
      expect(m.state, `${aggregate} step ${m.step}: ${m.detail}`).toBe('completed');
      const records = sim.filter((r) => r.server === m.serverId);
      expect(records, `server ${m.serverId} migrated ${records.length} times`).toHaveLength(1);
      expect(records[0]?.status).toBe('completed');
      expect(records[0]?.id).toBe(m.novaMigrationId);
      expect(hostOf.get(m.serverId)).toBe(m.to);
    }
    expect(stored).toHaveLength(planned.length);
  }
  return { migrations: sim.length, moves };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor((s.length - 1) / 2)]!;
};

describe.skipIf(etcd === null || !mariadb.available)('replicas on MariaDB + etcd', () => {
  it('kill -9 of an owner mid-execution: the others take over within the TTL, no server migrated twice', async () => {
    const s = await scenario('kill9');
    const ids = ['r1', 'r2', 'r3'];
    const replicas = new Map(ids.map((id) => [id, s.replica(id)]));
    await Promise.all([...replicas.values()].map((p) => p.next(/^ready /, 180_000)));
    // Joining replicas took their share from the first one (hand-overs on join).
    await waitFor('3 owners', () => new Set(AGGREGATES.map((a) => s.currentOwner(a))).size === 3, 60_000);
    await s.go();
    // The victim: an owner with a migration in flight.
    let victim = '';
    await waitFor(
      'a migration in flight',
      () => {
        for (const a of s.migrating()) {
          const owner = s.currentOwner(a);
          if (owner !== null) {
            victim = owner;
            return true;
          }
        }
        return false;
      },
      120_000,
    );
    const theirs = AGGREGATES.filter((a) => s.currentOwner(a) === victim);
    const fenceBefore = new Map(
      theirs.map((a) => [
        a,
        s
          .owners()
          .filter((o) => o.aggregate === a)
          .at(-1)!.fence,
      ]),
    );
    const doneBefore = (await Promise.all(theirs.map((a) => s.store.listMoves(`exec-${a}`))))
      .flat()
      .filter((m) => m.state === 'completed').length;
    const killedAt = Date.now();
    replicas.get(victim)!.child.kill('SIGKILL');
    await replicas.get(victim)!.exited;
    await waitFor('takeover', () => theirs.every((a) => (s.currentOwner(a) ?? victim) !== victim), 30_000);
    const takeovers = theirs.map((a) => {
      const o = s.owners().filter((x) => x.aggregate === a && x.replica !== victim && x.at > killedAt)[0]!;
      expect(o.fence).toBeGreaterThan(fenceBefore.get(a)!);
      return o.at - killedAt;
    });
    for (const t of takeovers) expect(t).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    // The dead replica comes back: it joins and takes its share again, by hand-over.
    const back = s.replica(victim);
    await back.next(/^ready /, 180_000);
    const { migrations, moves } = await expectEveryServerMigratedOnce(s);
    for (const a of theirs)
      expect((await s.store.ownership.get(a))!.fence).toBeGreaterThan(fenceBefore.get(a)!);
    // Every move of the taken-over executions completed: none skipped for the dead owner's locks.
    const after = (await Promise.all(theirs.map((a) => s.store.listMoves(`exec-${a}`)))).flat();
    expect(after.filter((m) => m.state !== 'completed').map((m) => m.detail)).toEqual([]);
    const completedAfterKill = after.length - doneBefore;
    console.log(
      `replicas kill -9: 3 replicas x ${AGGREGATES.length} aggregates, ${AGGREGATES.length * HOSTS_PER_AGGREGATE} hosts, ${moves} moves; ` +
        `killed ${victim} owning ${theirs.join(', ')} (${completedAfterKill} of their ${after.length} moves completed after the kill, none skipped); takeover ${takeovers.map((t) => `${t} ms`).join(', ')} (TTL ${TTL_MS} ms, median ${median(takeovers)} ms); ` +
        `simulator: ${migrations} migrations, none twice`,
    );
    await s.stopAll();
  }, 300_000);

  it('a rolling restart of every replica during execution hands every aggregate over; no server migrated twice', async () => {
    const s = await scenario('rolling');
    const ids = ['r1', 'r2', 'r3'];
    await Promise.all(ids.map((id) => s.replica(id).next(/^ready /, 180_000)));
    await waitFor('3 owners', () => new Set(AGGREGATES.map((a) => s.currentOwner(a))).size === 3, 60_000);
    await s.go();
    await waitFor('a migration in flight', () => s.migrating().length > 0, 120_000);
    const handOvers: number[] = [];
    for (const id of ids) {
      const proc = s.procOf(id);
      const held = AGGREGATES.filter((a) => s.currentOwner(a) === id);
      const stoppedFrom = Date.now();
      proc.child.kill('SIGTERM');
      expect((await proc.exited).code).toBe(0);
      await waitFor('hand-over', () => held.every((a) => s.currentOwner(a) !== id), 30_000);
      for (const a of held) {
        const o = s.owners().filter((x) => x.aggregate === a && x.at >= stoppedFrom)[0];
        if (o) handOvers.push(o.at - stoppedFrom);
      }
      await s.replica(id).next(/^ready /, 180_000);
    }
    const { migrations, moves } = await expectEveryServerMigratedOnce(s);
    console.log(
      `replicas rolling restart: 3 replicas x ${AGGREGATES.length} aggregates, ${moves} moves; hand-over after SIGTERM median ${median(handOvers)} ms ` +
        `(${handOvers.length} hand-overs); simulator: ${migrations} migrations, none twice`,
    );
    await s.stopAll();
  }, 300_000);

  it('a replica cut off from etcd stops acting before its leases can expire; the others take over', async () => {
    const s = await scenario('cutoff');
    const proxy = await cuttableProxy(etcd?.endpoint ?? '');
    cleanups.push(() => proxy.close());
    const cut = s.replica('r1', proxy.endpoint);
    await Promise.all([cut, s.replica('r2'), s.replica('r3')].map((p) => p.next(/^ready /, 180_000)));
    await waitFor('3 owners', () => new Set(AGGREGATES.map((a) => s.currentOwner(a))).size === 3, 60_000);
    await s.go();
    await waitFor(
      'r1 owning an aggregate with a migration in flight',
      () => s.migrating().some((a) => s.currentOwner(a) === 'r1'),
      120_000,
    );
    const held = AGGREGATES.filter((a) => s.currentOwner(a) === 'r1');
    const cutAt = Date.now();
    proxy.cut();
    await waitFor('takeover', () => held.every((a) => s.currentOwner(a) !== 'r1'), 30_000);
    for (const a of held) {
      const lost = cut.lines.find((l) => l.startsWith(`lost ${a} `));
      expect(lost, `r1 noticed it lost ${a}`).toBeDefined();
      const lostAt = Number(lost!.split(' ')[2]);
      const taken = s.owners().filter((o) => o.aggregate === a && o.replica !== 'r1' && o.at > cutAt)[0]!;
      // r1 stopped acting (locally) before another replica could even hold the lease.
      expect(lostAt).toBeLessThan(taken.at);
      expect(taken.at - cutAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    }
    proxy.restore();
    const { migrations } = await expectEveryServerMigratedOnce(s);
    expect(migrations).toBe(AGGREGATES.length * SOURCES * MOVES_PER_SOURCE);
    await s.stopAll();
  }, 300_000);
});
