// The SSH step against a real private sshd: a check that passes, one that fails, the same
// through a jump host, and the ways a connection fails.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSshOutcome, runOverSsh, type SshEndpoint } from '../../src/validation/ssh.js';
import { type PrivateSshd, startSshd } from './sshd.js';

let sshd: PrivateSshd;
let target: SshEndpoint;

beforeAll(async () => {
  sshd = await startSshd();
  target = { host: sshd.host, port: sshd.port, user: sshd.user, privateKeyFile: sshd.privateKeyFile };
});

afterAll(async () => {
  await sshd?.stop();
});

describe('runOverSsh', () => {
  it('runs a check that succeeds and returns its output', async () => {
    const o = await runOverSsh({ target, jump: null, command: 'echo canary-ok', timeoutMs: 10_000 });
    expect(o).toMatchObject({ kind: 'exited', exitCode: 0, stdout: 'canary-ok\n' });
    expect(describeSshOutcome(o)).toBe('check passed');
  });

  it('returns the exit status and the last line of a failing check', async () => {
    const o = await runOverSsh({
      target,
      jump: null,
      command: 'echo "disk /dev/vdb missing" >&2; exit 3',
      timeoutMs: 10_000,
    });
    expect(o).toMatchObject({ kind: 'exited', exitCode: 3 });
    expect(describeSshOutcome(o)).toBe('check exited with status 3: disk /dev/vdb missing');
  });

  it('goes through a jump host', async () => {
    const o = await runOverSsh({ target, jump: target, command: 'echo via-jump', timeoutMs: 10_000 });
    expect(o).toMatchObject({ kind: 'exited', exitCode: 0, stdout: 'via-jump\n' });
  });

  it('reports a jump host that refuses the connection', async () => {
    const o = await runOverSsh({
      target,
      jump: { ...target, port: 1 },
      command: 'true',
      timeoutMs: 10_000,
    });
    expect(o).toMatchObject({ kind: 'failed', stage: 'jump' });
    expect(describeSshOutcome(o)).toMatch(/^ssh failed \(jump\): through jump host .*:1:/);
  });

  it('reports a refused connection', async () => {
    const o = await runOverSsh({
      target: { ...target, port: 1 },
      jump: null,
      command: 'true',
      timeoutMs: 10_000,
    });
    expect(o).toMatchObject({ kind: 'failed', stage: 'connect' });
  });

  it('reports a key the server does not accept', async () => {
    const o = await runOverSsh({
      target: { ...target, privateKeyFile: join(sshd.dir, 'host_ed25519') },
      jump: null,
      command: 'true',
      timeoutMs: 10_000,
    });
    expect(o).toMatchObject({ kind: 'failed', stage: 'connect' });
    expect(describeSshOutcome(o)).toMatch(/authentication/i);
  });

  it('reports a missing key file without connecting', async () => {
    const o = await runOverSsh({
      target: { ...target, privateKeyFile: join(sshd.dir, 'nope') },
      jump: null,
      command: 'true',
      timeoutMs: 10_000,
    });
    expect(o).toMatchObject({ kind: 'failed', stage: 'key' });
    expect(describeSshOutcome(o)).toContain('cannot read private key file');
  });

  it('times out a check that does not finish', async () => {
    const o = await runOverSsh({ target, jump: null, command: 'sleep 30', timeoutMs: 1500 });
    expect(o).toMatchObject({ kind: 'failed', stage: 'timeout' });
    expect(describeSshOutcome(o)).toBe(
      `ssh timed out: no answer from ${sshd.user}@127.0.0.1:${sshd.port} within 2 s`,
    );
  });
});
