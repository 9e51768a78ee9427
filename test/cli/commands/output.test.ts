// Output paths are checked before any work, in words; a refusal writes nothing.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { register as registerCredentials } from '../../../src/cli/commands/credentials.js';
import { register as registerPlan } from '../../../src/cli/commands/plan.js';
import { register as registerSnapshot } from '../../../src/cli/commands/snapshot.js';
import { runCommand } from '../../fixtures/cli.js';

const EXAMPLE = resolve(import.meta.dirname, '../../../examples/small-cluster.json');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-output-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const run = (...args: string[]) => runCommand([registerPlan, registerSnapshot, registerCredentials], args);

describe('output paths', () => {
  it('plan -o to a folder is refused in a sentence, before planning', async () => {
    const folder = join(dir, 'plans');
    mkdirSync(folder);
    await expect(run('plan', '--snapshot', EXAMPLE, '-o', folder)).rejects.toThrow(
      `${folder}: is a folder; give a file name to write to`,
    );
    expect(readdirSync(folder)).toEqual([]);
  });

  it('plan -o into a missing folder names the folder', async () => {
    const file = join(dir, 'missing', 'plan.json');
    await expect(run('plan', '--snapshot', EXAMPLE, '-o', file)).rejects.toThrow(
      `${file}: cannot be written: the folder ${join(dir, 'missing')} does not exist`,
    );
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('snapshot synth checks -o before generating', async () => {
    const file = join(dir, 'nowhere', 's.json');
    await expect(
      run('snapshot', 'synth', '--hosts', '4', '--servers', '10', '--groups', '0', '--seed', '1', '-o', file),
    ).rejects.toThrow(`${file}: cannot be written: the folder ${join(dir, 'nowhere')} does not exist`);
  });

  it('credentials --output-dir says when it creates folders', async () => {
    const target = join(dir, 'creds', 'site-a');
    const { out } = await run('credentials', '--output-dir', target);
    expect(out).toContain(`created folder ${target} (and ${join(dir, 'creds')} above it)`);
    expect(readdirSync(target)).toContain('create-credentials.sh');
    expect(readdirSync(target)).toContain('tasks-access-rules.json');
    const again = await run('credentials', '--output-dir', target);
    expect(again.out).not.toContain('created folder');
    expect(again.out).toContain(`replaced what was there: ${join(target, 'reader-access-rules.json')}`);
  });

  it('credentials refuses names and prefixes the script and rules cannot use, writing nothing', async () => {
    const target = join(dir, 'creds-bad');
    await expect(run('credentials', '--user', '', '--output-dir', target)).rejects.toThrow(/--user/);
    await expect(
      run('credentials', '--user', 'ops team', '--compute-prefix', 'not a path', '--output-dir', target),
    ).rejects.toThrow(/--user[\s\S]*--compute-prefix/);
    expect(existsSync(target)).toBe(false);
  });
});
