import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { register } from '../../../src/cli/commands/check-plan.js';
import type { Plan } from '../../../src/model/plan.js';
import { move, plan, threeHosts } from '../../checker/fixtures.js';
import { runCommand } from '../../fixtures/cli.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-check-plan-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

async function run(
  p: Plan,
  ...extra: string[]
): Promise<{ out: string; exitCode: number | string | undefined }> {
  const snap = threeHosts({ h3: { status: 'disabled' } });
  const snapshotFile = join(dir, 'snapshot.json');
  const planFile = join(dir, 'plan.json');
  await writeFile(snapshotFile, JSON.stringify(snap));
  await writeFile(planFile, JSON.stringify(p));
  const { out, exitCode } = await runCommand(
    [register],
    ['check-plan', '--snapshot', snapshotFile, '--plan', planFile, ...extra],
  );
  return { out, exitCode };
}

const snap = threeHosts({ h3: { status: 'disabled' } });
const good = plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h2')] });
const bad = plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h3')] });

describe('aicerine check-plan', () => {
  it('prints OK and leaves the exit code alone for a valid plan', async () => {
    const { out, exitCode } = await run(good);
    expect(out).toMatch(/^OK .*plan\.json: 1 move in 1 aggregate, no violations\n$/);
    expect(exitCode).toBeUndefined();
  });

  it('prints the violations and exits 1 for a broken plan', async () => {
    const { out, exitCode } = await run(bad);
    expect(out).toContain('destination-disabled  [placement]  destination h3 is disabled');
    expect(exitCode).toBe(1);
  });

  it('--json prints the result as JSON', async () => {
    const { out } = await run(bad, '--json');
    const result = JSON.parse(out) as { ok: boolean; violations: Array<{ code: string }> };
    expect(result.ok).toBe(false);
    expect(result.violations.map((v) => v.code)).toEqual(['destination-disabled']);
  });

  it('limits from flags apply', async () => {
    const { exitCode, out } = await run(good, '--max-moves', '0');
    expect(exitCode).toBe(1);
    expect(out).toContain('budget-exceeded');
  });

  it('refuses a malformed flag, saying which', async () => {
    await expect(run(good, '--max-moves', 'lots')).rejects.toThrow(
      '--max-moves: expected a non-negative integer, got "lots"',
    );
  });
});
