// The crash test of issue 8: a plan of 120 moves runs against the simulator in another process;
// the executor's process is killed with SIGKILL at 10 random points and restarted each time on
// the same SQLite journal. At the end every move is accounted for exactly once, no server was
// migrated twice (the simulator's own migration records), and no record is lost.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { PlannedMove } from '../../src/executor/journal.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { createRng } from '../../src/util/rng.js';
import { openDurableJournal } from './fixtures/journal-factory.js';
import { runTs } from './fixtures/processes.js';
import { host, server, snapshot } from './sim-world.js';

const SIM = fileURLToPath(new URL('./fixtures/sim-child.ts', import.meta.url));
const EXECUTOR = fileURLToPath(new URL('./fixtures/executor-child.ts', import.meta.url));
const KILLS = 10;
const MOVES = 120;
// Slow enough that the plan needs more lives than there are kills: a source sends one
// migration at a time (13-22 s simulated, 3-4 s wall each), and a killed executor starts nothing
// until its successor has reconciled.
const SPEED = 5;
// The life after the last kill only has to finish the plan (about 80 of the 120 moves): the clock
// runs this much faster for it (a migration in 0.4-0.7 s wall), so the run does not spend a minute
// waiting on simulated migrations nobody interrupts. Its executor reads the speed when it starts.
const TAIL_SPEED = 30;
const SOURCES = 6;

function plan(): { snap: Snapshot; moves: PlannedMove[] } {
  const sources = Array.from({ length: SOURCES }, (_, i) => `src-${String(i + 1).padStart(2, '0')}`);
  const dests = Array.from({ length: 12 }, (_, i) => `dst-${String(i + 1).padStart(2, '0')}`);
  const servers = [];
  const moves: PlannedMove[] = [];
  for (let i = 0; i < MOVES; i++) {
    const from = sources[i % SOURCES]!;
    const ram = [8192, 16384][i % 2]!;
    const s = server(i + 1, from, ram);
    servers.push(s);
    moves.push({
      step: i + 1,
      wave: 1 + Math.floor(i / 48),
      serverId: s.id,
      serverName: s.name,
      from,
      to: dests[(i * 5) % 12]!,
      estimatedSeconds: 10,
    });
  }
  return {
    snap: snapshot(
      [...sources, ...dests].map((h) => host(h)),
      servers,
    ),
    moves,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'aicerine-kill9-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9', () => {
  it(`accounts for every move of a ${MOVES}-move plan exactly once across ${KILLS} kills`, async () => {
    const { snap, moves } = plan();
    const snapFile = join(dir, 'snap.json');
    const movesFile = join(dir, 'moves.json');
    const db = join(dir, 'journal.db');
    writeFileSync(snapFile, JSON.stringify(snap));
    writeFileSync(movesFile, JSON.stringify(moves));
    const sim = runTs(SIM, [snapFile, String(SPEED)]);
    children.push(sim.child);
    const url = (await sim.next(/^url /, 60_000)).slice(4);

    const rng = createRng(8);
    const kills: { afterMs: number; mode: string; inFlight: string }[] = [];
    let finished = false;
    while (!finished) {
      if (kills.length === KILLS) {
        const res = await fetch(`${url}/sim/clock`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ speed: TAIL_SPEED }),
        });
        expect(((await res.json()) as { speed: number }).speed).toBe(TAIL_SPEED);
      }
      const exec = runTs(EXECUTOR, [url, db, movesFile, 'kill9-exec']);
      children.push(exec.child);
      const mode = (await exec.next(/^ready /, 60_000)).slice(6);
      if (kills.length < KILLS) {
        // A random point of this life: early (reconciling) or late (in the middle of migrations).
        const afterMs = Math.round(100 + rng.next() * 1500);
        const ended = await Promise.race([
          exec.exited.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), afterMs)),
        ]);
        if (!ended) {
          exec.child.kill('SIGKILL');
          const { signal } = await exec.exited;
          expect(signal).toBe('SIGKILL');
          // What the dead process left for the next one to reconcile.
          const j = await openDurableJournal(db);
          const left = (await j.getExecution('kill9-exec')) ? await j.listMoves('kill9-exec') : [];
          await j.close();
          const open = ['issuing', 'migrating', 'aborting'].map(
            (st) => `${left.filter((m) => m.state === st).length} ${st}`,
          );
          kills.push({ afterMs, mode, inFlight: open.join('/') });
          continue;
        }
      }
      await exec.next(/^done /, 240_000);
      const { code } = await exec.exited;
      expect(code, exec.stderr()).toBe(0);
      finished = true;
    }
    expect(kills).toHaveLength(KILLS);

    // The journal: one execution, every move once, every one final.
    const journal = await openDurableJournal(db);
    const execution = await journal.getExecution('kill9-exec');
    const stored = await journal.listMoves('kill9-exec');
    expect(await journal.listUnfinishedExecutions()).toEqual([]);
    await journal.close();
    expect(execution?.state).toBe('finished');
    expect(stored.map((m) => m.step)).toEqual(moves.map((m) => m.step));
    expect(stored.every((m) => ['completed', 'failed', 'skipped'].includes(m.state))).toBe(true);

    // The cloud: what the simulator itself recorded.
    const simMigrations = (
      (await (await fetch(`${url}/sim/migrations`)).json()) as {
        migrations: { id: number; server: string; status: string; source: string; requestedHost: string }[];
      }
    ).migrations;
    const truth = (await (await fetch(`${url}/sim/snapshot`)).json()) as Snapshot;
    const hostOf = new Map(truth.servers.map((s) => [s.id, s.host]));
    const perServer = new Map<string, typeof simMigrations>();
    for (const m of simMigrations) perServer.set(m.server, [...(perServer.get(m.server) ?? []), m]);
    for (const m of simMigrations) {
      const planned = moves.find((x) => x.serverId === m.server);
      expect(planned, `migration ${m.id} of an unplanned server`).toBeDefined();
      expect(m.requestedHost).toBe(planned?.to);
      expect(['completed', 'failed', 'cancelled', 'error']).toContain(m.status);
    }
    let twice = 0;
    for (const rec of stored) {
      const mine = perServer.get(rec.serverId) ?? [];
      const completed = mine.filter((m) => m.status === 'completed');
      if (mine.length > 1) twice++;
      expect(
        completed.length,
        `server ${rec.serverId} completed ${completed.length} migrations`,
      ).toBeLessThanOrEqual(1);
      if (rec.state === 'completed') {
        expect(hostOf.get(rec.serverId)).toBe(rec.to);
        expect(completed[0]?.id).toBe(rec.novaMigrationId);
      } else {
        expect(hostOf.get(rec.serverId)).toBe(rec.from);
        expect(completed).toHaveLength(0);
      }
    }
    const counts: Record<string, number> = {};
    for (const m of stored) counts[m.state] = (counts[m.state] ?? 0) + 1;
    // Nothing failed in this cloud: every move must have completed despite the kills.
    expect(counts.completed).toBe(MOVES);
    expect(twice).toBe(0);
    console.log(
      `kill -9: ${MOVES} moves, ${KILLS} kills (${kills.map((k) => `${k.afterMs} ms into a ${k.mode}: ${k.inFlight}`).join('; ')}); ` +
        `journal ${JSON.stringify(counts)}; simulator: ${simMigrations.length} migrations, ` +
        `${simMigrations.filter((m) => m.status === 'completed').length} completed, servers migrated twice: ${twice}`,
    );
    sim.child.kill('SIGTERM');
    await sim.exited;
  }, 600_000);
});
