// The README's "Using it" block, run as written, in order, in a folder holding only what a fresh
// clone has (examples/): every command that needs neither the public traces (../shared) nor a
// real cloud, nor serves until stopped (sim), must exit 0. So the README cannot rot.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'bin', 'aicerine.js');
const run = promisify(execFile);

function usingIt(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Using it'));
  const block = /```bash\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Why a line is not run here, or undefined when it is. */
function skipped(line: string): string | undefined {
  if (line.includes('../shared')) return 'needs the public traces';
  if (line.includes('--cloud')) return 'needs a real cloud';
  if (/^npx aicerine (sim|serve)\b/.test(line)) return 'serves until stopped';
  return undefined;
}

/** Splits a README line into words, dropping its trailing comment. */
function words(line: string): string[] {
  return line.replace(/\s+#.*$/, '').split(/\s+/);
}

const work = mkdtempSync(join(tmpdir(), 'aicerine-readme-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('README "Using it"', () => {
  const lines = usingIt();

  it('runs every command that needs no traces and no cloud, in order, in a fresh folder', async () => {
    cpSync(join(ROOT, 'examples'), join(work, 'examples'), { recursive: true });
    const ran: string[] = [];
    for (const line of lines) {
      if (skipped(line)) continue;
      const [cmd, ...args] = words(line);
      if (cmd === 'cp') {
        await copyFile(join(work, args[0]!), join(work, args[1]!));
      } else {
        expect(cmd, line).toBe('npx');
        expect(args[0], line).toBe('aicerine');
        const result = await run(process.execPath, [CLI, ...args.slice(1)], {
          cwd: work,
          maxBuffer: 64 * 1024 * 1024,
        }).catch((err: { stderr?: string; code?: number }) => {
          throw new Error(`README line failed (exit ${err.code}): ${line}\n${err.stderr ?? ''}`);
        });
        expect(result.stderr, line).toBe('');
      }
      ran.push(line);
    }
    expect(ran.map((l) => words(l).slice(0, 3).join(' '))).toEqual(
      expect.arrayContaining([
        'npx aicerine plan',
        'npx aicerine check-plan',
        'npx aicerine snapshot',
        'npx aicerine credentials',
      ]),
    );
  }, 120_000);

  it('says which lines need the traces or a cloud', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/# with the public traces next to the project in \.\.\/shared\/traces/);
    // The traces (2), a real cloud (record, check) and the two that serve until stopped (sim, serve).
    expect(lines.filter((l) => skipped(l) !== undefined).length).toBeLessThanOrEqual(6);
  });
});
