// Store benchmark: `npm run bench:store` (SQLite) or
// `node bench/store.mjs --mysql-socket=/path/to/mariadbd.sock` (also MariaDB; user root, a
// scratch database is created and dropped). Prints medians; figures, not pass/fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createConnection } from 'mysql2/promise';
import { openStore } from '../dist/store/index.js';

const MOVES = 1000;
const RUNS = 5;
const AUDIT_ROWS = 5000;
const T0 = Date.parse('2026-11-30T12:00:00Z');
const at = (ms) => new Date(T0 + ms).toISOString();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
const moves = (n) =>
  Array.from({ length: n }, (_, i) => ({
    step: i + 1,
    wave: Math.floor(i / 10) + 1,
    serverId: `server-${i + 1}`,
    from: `compute-${i % 50}`,
    to: `compute-${(i + 7) % 50}`,
    estimatedSeconds: 40,
  }));
const planOf = (n) => ({
  format: 'aicerine-plan/1',
  snapshotTakenAt: at(0),
  mode: 'spread',
  aggregates: [
    {
      name: 'gold',
      moves: moves(n).map((m) => ({ ...m, server: m.serverId, phase: 'spread', reason: 'runs hot' })),
      before: { imbalance: 0.1, dimensions: { cpu: { stddev: 0.1, max: 0.9 } } },
      after: { imbalance: 0.05, dimensions: { cpu: { stddev: 0.05, max: 0.7 } } },
      hostsFreed: [],
      unresolved: [],
    },
  ],
  stats: { planningMs: 1 },
});

async function bench(name, store) {
  const rows = [];
  const create = [];
  for (let r = 0; r < RUNS; r++)
    create.push(
      await time(() =>
        store.createExecution(
          { id: `exec-${r}`, aggregate: 'gold', planId: null, startedAt: at(0), startedBy: 'bench' },
          moves(MOVES),
        ),
      ),
    );
  rows.push([`createExecution, ${MOVES} moves`, `${median(create).toFixed(1)} ms`]);

  const per = [];
  const all = await time(async () => {
    for (let step = 1; step <= MOVES; step++) {
      let from = 'pending';
      for (const state of ['issuing', 'migrating', 'completed']) {
        const t = performance.now();
        await store.transitionMove('exec-0', step, from, { state, at: at(step), novaMigrationId: step });
        per.push(performance.now() - t);
        from = state;
      }
    }
  });
  rows.push([
    `transitionMove, ${3 * MOVES} sequential`,
    `${(median(per) * 1000).toFixed(0)} µs median, ${Math.round((3 * MOVES) / (all / 1000))} /s`,
  ]);
  const contended = await time(() =>
    Promise.all(
      Array.from({ length: MOVES }, (_, i) =>
        store.transitionMove('exec-1', i + 1, 'pending', { state: 'issuing', at: at(i) }),
      ),
    ),
  );
  rows.push([`transitionMove, ${MOVES} at once`, `${Math.round(MOVES / (contended / 1000))} /s`]);

  const plans = [];
  for (let r = 0; r < RUNS; r++)
    plans.push(
      await time(() =>
        store.plans.create({ aggregate: 'gold', mode: 'assisted', plan: planOf(MOVES), createdAt: at(r) }),
      ),
    );
  rows.push([`plans.create, ${MOVES} moves`, `${median(plans).toFixed(1)} ms`]);

  const audit = await time(async () => {
    for (let i = 0; i < AUDIT_ROWS; i++)
      await store.audit.record({
        actor: `operator:${i % 10}`,
        action: i % 3 === 0 ? 'plan.approve' : 'migration.start',
        target: `server:${i}`,
        detail: { i },
        at: at(i * 1000),
      });
  });
  rows.push([`audit.record, ${AUDIT_ROWS} sequential`, `${Math.round(AUDIT_ROWS / (audit / 1000))} /s`]);
  const list = [];
  for (let r = 0; r < RUNS; r++) {
    list.push(
      await time(() => store.audit.list({ actor: 'operator:3', action: 'plan.approve' }, { limit: 100 })),
    );
  }
  rows.push([`audit.list, filtered page of 100 of ${AUDIT_ROWS}`, `${median(list).toFixed(1)} ms`]);
  let deleted = 0;
  const purge = await time(async () => {
    deleted = (await store.retention.purge({ audit: 0 }, at(AUDIT_ROWS * 1000))).audit;
  });
  rows.push([`retention.purge, ${deleted} audit rows deleted`, `${purge.toFixed(0)} ms`]);

  console.log(`\n== ${name}`);
  for (const [what, figure] of rows) console.log(`  ${what.padEnd(44)} ${figure}`);
}

const dir = mkdtempSync(join(tmpdir(), 'aic-bench-store-'));
try {
  const sqlite = await openStore({ kind: 'sqlite', path: join(dir, 'bench.db') });
  await bench(`SQLite (file in ${tmpdir()}, WAL, synchronous=FULL)`, sqlite);
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const socketArg = process.argv.find((a) => a.startsWith('--mysql-socket='));
if (socketArg !== undefined) {
  const socketPath = socketArg.slice('--mysql-socket='.length);
  const admin = await createConnection({ socketPath, user: 'root' });
  await admin.query('create database aicerine_bench');
  try {
    const store = await openStore({ kind: 'mysql', socketPath, user: 'root', database: 'aicerine_bench' });
    await bench(`MariaDB (${socketPath})`, store);
    await store.close();
  } finally {
    await admin.query('drop database aicerine_bench');
    await admin.end();
  }
}
