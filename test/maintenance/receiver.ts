// examples/handover-receiver.mjs in a child process, as an operator would run it: its action is a
// shell script of the test's (it appends the host to `<dir>/actions`, then waits while
// `<dir>/hold-<host>` exists), its deliveries read from its stdout, waited on as they come.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RECEIVER = fileURLToPath(new URL('../../examples/handover-receiver.mjs', import.meta.url));

/** The action: counts its runs per host, waits while a hold file for its host exists, fails while a fail file does. */
const ACTION =
  'echo "$AICERINE_HOST" >> "$0/actions"; while [ -e "$0/hold-$AICERINE_HOST" ]; do sleep 0.05; done; ' +
  'if [ -e "$0/fail-$AICERINE_HOST" ]; then echo "no such host in the automation" >&2; exit 3; fi';

export interface Delivery {
  id: string;
  verdict: 'new' | 'duplicate' | 'failed';
  host: string;
}

export interface Receiver {
  url: string;
  child: ChildProcess;
  deliveries(): Delivery[];
  /** Hosts the action ran for, one entry per run (started). */
  actions(): string[];
  /** Resolves once `count` deliveries were answered. */
  delivered(count: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(dir: string): Promise<Receiver> {
  const child = spawn(
    process.execPath,
    [RECEIVER, '--port', '0', '--state', join(dir, 'receiver.json'), '--', '/bin/sh', '-c', ACTION, dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let err = '';
  let buffered = '';
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    wake();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  void exited.then(wake);
  const waitFor = <T>(what: string, ready: () => T | null): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const v = ready();
        if (v !== null) {
          waiters.delete(check);
          resolve(v);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          reject(new Error(`the receiver exited before ${what}:\n${lines.join('\n')}\n${err}`));
        }
      };
      waiters.add(check);
      check();
    });
  const deliveries = (): Delivery[] =>
    lines
      .filter((l) => l.startsWith('delivery '))
      .map((l) => {
        const [, id, verdict, host] = l.split(' ');
        return { id: id!, verdict: verdict as Delivery['verdict'], host: host! };
      });
  const listening = await waitFor('listening', () => lines.find((l) => l.startsWith('listening ')) ?? null);
  const file = join(dir, 'actions');
  return {
    url: `${listening.slice('listening '.length)}ready`,
    child,
    deliveries,
    actions: () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []),
    delivered: (count) =>
      waitFor(`${count} deliveries`, () => {
        const d = deliveries();
        return d.length >= count ? d : null;
      }),
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
