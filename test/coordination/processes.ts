// Child processes of the replica tests: TypeScript modules run through Vite's module runner,
// their stdout read line by line, waited on by pattern.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUNNER = fileURLToPath(new URL('../executor/fixtures/run-ts.mjs', import.meta.url));

export interface Proc {
  child: ChildProcess;
  lines: string[];
  /** The first line (from `from` on) matching, waiting for it. */
  next(match: RegExp, timeoutMs: number, from?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

export function runTs(file: string, args: string[]): Proc {
  const child = spawn(process.execPath, [RUNNER, file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buffered = '';
  let err = '';
  const waiters: (() => void)[] = [];
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal });
    }),
  );
  return {
    child,
    lines,
    exited,
    stderr: () => err,
    async next(match, timeoutMs, from = 0) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines.slice(from).find((l) => match.test(l));
        if (hit) return hit;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > until) {
          throw new Error(
            `no line matching ${match} (exit ${child.exitCode ?? child.signalCode}):\n${lines.slice(-20).join('\n')}\n${err.slice(-3000)}`,
          );
        }
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
  };
}
