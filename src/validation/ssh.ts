// Runs one command on the canary over SSH (ssh2), directly or through a jump host, and returns
// its exit status and output. Every way this can fail comes back as a value, never a throw, so
// the validation can always turn it into a reason.
import { readFile } from 'node:fs/promises';
import ssh2 from 'ssh2';

const { Client } = ssh2;
type Connection = InstanceType<typeof Client>;

export interface SshEndpoint {
  host: string;
  port: number;
  user: string;
  privateKeyFile: string;
}

export interface SshCommand {
  target: SshEndpoint;
  jump: SshEndpoint | null;
  command: string;
  /** Connect (including the jump) and run must finish within this. */
  timeoutMs: number;
}

export type SshOutcome =
  | { kind: 'exited'; exitCode: number; stdout: string; stderr: string }
  | { kind: 'signal'; signal: string; stdout: string; stderr: string }
  | { kind: 'failed'; stage: 'key' | 'jump' | 'connect' | 'run' | 'timeout'; message: string };

/** Output kept for the task result: the tail, where a failing check says why. */
const OUTPUT_LIMIT = 4000;
const tail = (s: string) => (s.length > OUTPUT_LIMIT ? s.slice(-OUTPUT_LIMIT) : s);

function connect(
  endpoint: SshEndpoint,
  key: Buffer,
  readyTimeout: number,
  sock?: NodeJS.ReadableStream,
): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const conn = new Client();
    conn.once('ready', () => resolve(conn));
    conn.once('error', (e: Error) => reject(e));
    conn.connect({
      host: endpoint.host,
      port: endpoint.port,
      username: endpoint.user,
      privateKey: key,
      readyTimeout,
      // A canary is a new server with a new host key every time: there is nothing to pin it to.
      hostVerifier: () => true,
      ...(sock ? { sock: sock as never } : {}),
    });
  });
}

function forward(jump: Connection, target: SshEndpoint): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => {
    jump.forwardOut('127.0.0.1', 0, target.host, target.port, (err, stream) =>
      err ? reject(err) : resolve(stream),
    );
  });
}

function exec(conn: Connection, command: string): Promise<SshOutcome> {
  return new Promise((resolve) => {
    conn.exec(command, (err, stream) => {
      if (err) {
        resolve({ kind: 'failed', stage: 'run', message: err.message });
        return;
      }
      let stdout = '';
      let stderr = '';
      stream.on('data', (d: Buffer) => {
        stdout = tail(stdout + d.toString('utf8'));
      });
      stream.stderr.on('data', (d: Buffer) => {
        stderr = tail(stderr + d.toString('utf8'));
      });
      stream.on('close', (code: number | null, signal?: string) => {
        if (typeof code === 'number') resolve({ kind: 'exited', exitCode: code, stdout, stderr });
        else resolve({ kind: 'signal', signal: signal ?? 'unknown', stdout, stderr });
      });
    });
  });
}

async function readKey(file: string): Promise<Buffer | string> {
  try {
    return await readFile(file);
  } catch (e) {
    return `cannot read private key file ${file}: ${(e as Error).message}`;
  }
}

const where = (e: SshEndpoint) => `${e.user}@${e.host}:${e.port}`;

/** Connects (through the jump host when given), runs the command, always closes what it opened. */
export async function runOverSsh(cmd: SshCommand): Promise<SshOutcome> {
  const opened: Connection[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<SshOutcome>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          kind: 'failed',
          stage: 'timeout',
          message: `no answer from ${where(cmd.target)} within ${Math.round(cmd.timeoutMs / 1000)} s`,
        }),
      cmd.timeoutMs,
    );
  });
  const attempt = async (): Promise<SshOutcome> => {
    const targetKey = await readKey(cmd.target.privateKeyFile);
    if (typeof targetKey === 'string') return { kind: 'failed', stage: 'key', message: targetKey };
    let sock: NodeJS.ReadableStream | undefined;
    if (cmd.jump) {
      const jumpKey = await readKey(cmd.jump.privateKeyFile);
      if (typeof jumpKey === 'string') return { kind: 'failed', stage: 'key', message: jumpKey };
      try {
        const jump = await connect(cmd.jump, jumpKey, cmd.timeoutMs);
        opened.push(jump);
        sock = await forward(jump, cmd.target);
      } catch (e) {
        return {
          kind: 'failed',
          stage: 'jump',
          message: `through jump host ${where(cmd.jump)}: ${(e as Error).message}`,
        };
      }
    }
    let conn: Connection;
    try {
      conn = await connect(cmd.target, targetKey, cmd.timeoutMs, sock);
      opened.push(conn);
    } catch (e) {
      return { kind: 'failed', stage: 'connect', message: `${where(cmd.target)}: ${(e as Error).message}` };
    }
    return exec(conn, cmd.command);
  };
  try {
    return await Promise.race([attempt(), timeout]);
  } finally {
    clearTimeout(timer);
    for (const c of opened.reverse()) c.end();
  }
}

/** One line for the task result and the service's disabled reason. */
export function describeSshOutcome(o: SshOutcome): string {
  switch (o.kind) {
    case 'exited': {
      if (o.exitCode === 0) return 'check passed';
      const said = (o.stderr.trim() || o.stdout.trim()).split('\n').at(-1) ?? '';
      return `check exited with status ${o.exitCode}${said ? `: ${said.slice(0, 200)}` : ''}`;
    }
    case 'signal':
      return `check killed by signal ${o.signal}`;
    case 'failed':
      return `ssh ${o.stage === 'timeout' ? 'timed out' : `failed (${o.stage})`}: ${o.message}`;
  }
}
