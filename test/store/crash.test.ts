// Durability of acknowledged journal writes across kill -9: a child process writes transitions as
// fast as it can and prints each one after the store acknowledged it; the parent SIGKILLs it at
// several points, reopens the store and finds every acknowledged write (and at most the one write
// that was in flight when the process died).

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { MoveState } from '../../src/executor/journal.js';
import { openStore } from '../../src/store/index.js';
import { type TestBackend, testBackends } from './backends.js';

const RUNNER = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));
const WRITER = fileURLToPath(new URL('./fixtures/journal-writer.ts', import.meta.url));
const PROGRESS: MoveState[] = ['pending', 'issuing', 'migrating', 'completed'];
const MOVES = 150;

/**
 * Runs the writer until it has printed `acks` acknowledgements, kills it with SIGKILL, and returns
 * every line it printed before it died (the pipe keeps what was written but not yet read, so
 * lines printed after the threshold count too: the child acknowledged them).
 */
function writeUntilKilled(optionsJson: string, executionId: string, acks: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, WRITER, optionsJson, executionId, String(MOVES)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (!killed && stdout.split('\n').length - 1 >= acks) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('close', (code, signal) => {
      // Only whole lines: a line cut by the kill was not acknowledged.
      const lines = stdout.split('\n').slice(0, -1);
      if (signal === 'SIGKILL' && killed) resolve(lines);
      else
        reject(
          new Error(`writer ended on its own (${signal ?? code}) after ${lines.length} acks:\n${stderr}`),
        );
    });
  });
}

describe.each(testBackends().map((b) => [b.name, b] as const))(
  'journal durability on %s',
  (_n, backend: TestBackend) => {
    it.skipIf(!backend.available)(
      'keeps every acknowledged write across kill -9 at several points',
      async () => {
        const { options, cleanup } = await backend.fresh();
        try {
          // Kill points: right after creation, mid-way, late (the acks include "ack created").
          const points = [1, 58, 301];
          for (const [round, acks] of points.entries()) {
            const executionId = `crash-${round}`;
            const lines = await writeUntilKilled(JSON.stringify(options), executionId, acks);
            expect(lines[0]).toBe('ack created');
            const acked = new Map<number, MoveState>();
            for (const line of lines.slice(1)) {
              const [, step, state] = line.split(' ');
              acked.set(Number(step), state as MoveState);
            }

            const store = await openStore(options);
            try {
              const moves = await store.listMoves(executionId);
              expect(moves).toHaveLength(MOVES);
              // Every acknowledged transition is there; beyond them, at most the one in flight.
              let beyond = 0;
              for (const move of moves) {
                const stored = PROGRESS.indexOf(move.state);
                const ack = PROGRESS.indexOf(acked.get(move.step) ?? 'pending');
                expect(stored, `step ${move.step}`).toBeGreaterThanOrEqual(ack);
                beyond += stored - ack;
                if (move.state === 'migrating' || move.state === 'completed')
                  expect(move.novaMigrationId).toBe(1000 + move.step);
              }
              expect(beyond).toBeLessThanOrEqual(1);
              expect((await store.getExecution(executionId))?.state).toBe('running');
            } finally {
              await store.close();
            }
          }
        } finally {
          await cleanup();
        }
      },
      120_000,
    );
  },
);
