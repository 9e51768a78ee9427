// A private OpenSSH server on a loopback port, standing in for the canary guest (the lab's fake
// driver boots no real guest). Host and user keys are generated in a temp dir; stop() ends
// exactly the sshd it started and removes the dir.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { logLine } from '../fixtures/log-line.js';

export interface PrivateSshd {
  host: string;
  port: number;
  user: string;
  /** The user's private key, accepted by this sshd. */
  privateKeyFile: string;
  /** Where the check scripts can write (a directory only this sshd's tests use). */
  dir: string;
  stop(): Promise<void>;
}

const SSHD = '/usr/sbin/sshd';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function startSshd(): Promise<PrivateSshd> {
  const dir = mkdtempSync(join(tmpdir(), 'canary-sshd-'));
  const keygen = (file: string) =>
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'canary-test', '-f', file]);
  keygen(join(dir, 'host_ed25519'));
  keygen(join(dir, 'user_ed25519'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'user_ed25519.pub')));
  // sshd refuses to start without its privilege separation directory.
  mkdirSync('/run/sshd', { recursive: true });
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_ed25519')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'StrictModes no',
      'AllowTcpForwarding yes',
      '',
    ].join('\n'),
  );
  const proc: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  // sshd says "Server listening on 127.0.0.1 port N." once its socket listens: that line is the
  // readiness, its exit or 10 s without it the failure.
  const ready = await logLine(
    proc,
    () => log,
    `Server listening on 127.0.0.1 port ${port}`,
    'sshd',
    10_000,
  ).then(
    () => true,
    () => false,
  );
  if (!ready || !(await accepts(port))) {
    proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`private sshd did not start on 127.0.0.1:${port}: ${log.trim()}`);
  }
  return {
    host: '127.0.0.1',
    port,
    user: userInfo().username,
    privateKeyFile: join(dir, 'user_ed25519'),
    dir,
    stop: async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
