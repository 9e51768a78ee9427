// Vitest global setup: starts one private etcd (Debian's etcd-server) on loopback, its data in a
// temp dir, shared by every coordination test file (each one uses keys under a prefix of its
// own), and stops it after the run. Without etcd the coordination cases are skipped with a loud
// warning, except under CI=true, where the run fails: CI must test the replicas.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import type { TestProject } from 'vitest/node';
import { logLine } from '../fixtures/log-line.js';

export interface EtcdServer {
  /** http://127.0.0.1:<port> */
  endpoint: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    etcd: EtcdServer | null;
  }
}

function find(binary: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/sbin', '/usr/local/bin']) {
    const path = join(dir, binary);
    if (dir !== '' && existsSync(path)) return path;
  }
  return null;
}

/** A port free on loopback now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Resolves when etcd logs that it serves client traffic (after its member is published, so it
 * answers), then checks once that a read gets through. Its exit, or 60 s without the line,
 * fails with the log's tail.
 */
async function waitUntilReady(endpoint: string, child: ChildProcess, log: () => string): Promise<void> {
  await logLine(child, log, '"msg":"serving client traffic', 'etcd', 60_000);
  const client = new Etcd3({ hosts: endpoint, dialTimeout: 5000 });
  try {
    await client.get('aicerine-ready-probe').string();
  } finally {
    client.close();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const etcd = find('etcd');
  if (etcd === null) {
    const message =
      "etcd is not installed: the coordination tests cannot run. Install Debian's etcd-server (.ci/apt-packages.txt).";
    if (process.env.CI === 'true') throw new Error(`${message} CI=true: failing the run.`);
    console.warn(`\n${'!'.repeat(100)}\n!!! ${message}\n!!! SKIPPING every etcd test.\n${'!'.repeat(100)}\n`);
    project.provide('etcd', null);
    return async () => {};
  }
  const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'aic-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const child = spawn(
    etcd,
    [
      '--name=aicerine-test',
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=aicerine-test=${peerUrl}`,
      '--initial-cluster-state=new',
      // info: the level of its "serving client traffic" line, the readiness awaited below.
      '--log-level=info',
      '--logger=zap',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // The log's tail, for the errors; stderr is read for etcd's whole life so it never blocks.
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-20_000);
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    await waitUntilReady(endpoint, child, () => log);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  project.provide('etcd', { endpoint });
  return async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
}
