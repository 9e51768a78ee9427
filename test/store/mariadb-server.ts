// Vitest global setup: starts one private MariaDB server (Debian's mariadbd, as root, on a unix
// socket in a temp dir, no TCP) shared by every store test file, and stops it after the run. Each
// test file creates its own databases on it. Without mariadbd the MariaDB cases are skipped with a
// loud warning, except under CI=true, where the run fails: CI must test both backends.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import type { TestProject } from 'vitest/node';
import { logLine } from '../fixtures/log-line.js';

export interface MariadbServer {
  socketPath: string;
  user: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    mariadb: MariadbServer | null;
  }
}

const run = promisify(execFile);
const SEARCH = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin'];

function find(binary: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...SEARCH]) {
    const path = join(dir, binary);
    if (dir !== '' && existsSync(path)) return path;
  }
  return null;
}

/**
 * Resolves when mariadbd says "ready for connections" on its stderr (its error log), then checks
 * once that a client gets in. Its exit, or 60 s without the line, fails with the log's tail.
 */
async function waitUntilReady(server: MariadbServer, child: ChildProcess, log: () => string): Promise<void> {
  await logLine(child, log, 'ready for connections', 'mariadbd', 60_000);
  const conn = await createConnection({ socketPath: server.socketPath, user: server.user });
  await conn.end();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const mariadbd = find('mariadbd');
  const installDb = find('mariadb-install-db');
  if (mariadbd === null || installDb === null) {
    const message =
      'MariaDB is not installed (mariadbd / mariadb-install-db not found): the store tests on MariaDB ' +
      "cannot run. Install Debian's mariadb-server-core and mariadb-client-core (.ci/apt-packages.txt).";
    if (process.env.CI === 'true') throw new Error(`${message} CI=true: failing the run.`);
    console.warn(
      `\n${'!'.repeat(100)}\n!!! ${message}\n!!! SKIPPING every MariaDB store test.\n${'!'.repeat(100)}\n`,
    );
    project.provide('mariadb', null);
    return async () => {};
  }

  // In memory when /dev/shm exists: the tests create many small databases, and DDL on disk is slow.
  const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'aic-mariadb-'));
  const datadir = join(dir, 'data');
  const server: MariadbServer = { socketPath: join(dir, 'mariadbd.sock'), user: 'root' };
  await run(installDb, [
    '--no-defaults',
    `--datadir=${datadir}`,
    '--user=root',
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
  ]);
  const child = spawn(
    mariadbd,
    [
      '--no-defaults',
      `--datadir=${datadir}`,
      `--socket=${server.socketPath}`,
      `--pid-file=${join(dir, 'mariadbd.pid')}`,
      `--tmpdir=${dir}`,
      '--user=root',
      '--skip-networking',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=32M',
      // A throwaway test server: no fsync at all. The store's durability across a killed client
      // (crash.test.ts) does not depend on these; a production server keeps its defaults.
      '--innodb-flush-log-at-trx-commit=0',
      '--innodb-doublewrite=0',
      '--innodb-flush-method=nosync',
      '--innodb-file-per-table=0',
    ],
    // No --log-error: the log goes to stderr, where its "ready for connections" line is awaited.
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // The log's tail, for the errors; stderr is read for the server's whole life so it never blocks.
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-20_000);
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    await waitUntilReady(server, child, () => log);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  project.provide('mariadb', server);

  return async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
}
