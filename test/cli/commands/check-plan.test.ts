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

  it('refuses a limit of 0 migrations per host, as the policy does', async () => {
    await expect(run(good, '--per-host-outgoing', '0')).rejects.toThrow(
      '--per-host-outgoing: expected a positive integer, got "0"',
    );
    await expect(run(good, '--global-concurrent', '0')).rejects.toThrow(
      '--global-concurrent: expected a positive integer, got "0"',
    );
  });

  it('refuses a malformed flag, saying which', async () => {
    await expect(run(good, '--max-moves', 'lots')).rejects.toThrow(
      '--max-moves: expected a non-negative integer, got "lots"',
    );
  });

  it('refuses a plan made from another snapshot unless --allow-other-snapshot', async () => {
    const other = { ...good, snapshotTakenAt: '2026-01-01T00:00:00Z' };
    await expect(run(other)).rejects.toThrow(
      /plan\.json: snapshotTakenAt: the plan was made from a snapshot taken at 2026-01-01T00:00:00Z, but .*snapshot\.json was taken at 2026-11-29T14:00:00Z/,
    );
    const { out, exitCode } = await run(other, '--allow-other-snapshot');
    expect(out).toMatch(/^OK /);
    expect(exitCode).toBeUndefined();
  });

  it('refuses a plan written with the phase soft-group, which aicerine-plan/1 lacks, naming field and value', async () => {
    const old = structuredClone(good);
    (old.aggregates[0]!.moves[0] as { phase: string }).phase = 'soft-group';
    await expect(run(old)).rejects.toThrow(
      /plan\.json: aggregates\[0\]\.moves\[0\]\.phase: expected one of .*"softGroup": true\), got "soft-group"/,
    );
  });

  it('holds a plan flagged repairOnly to the repair-only rules', async () => {
    const { out, exitCode } = await run({ ...good, repairOnly: true });
    expect(out).toMatch(/repair-only-needless-move/);
    expect(exitCode).toBe(1);
  });

  it('flags a move across aggregates listed under _unassigned_', async () => {
    const crossing = threeHosts({ h1: { aggregates: ['agg-2'] }, h2: { aggregates: ['agg-1'] } });
    const p = plan(crossing, { _unassigned_: [move(1, 1, 's1', 'h1', 'h2')] });
    const snapshotFile = join(dir, 'crossing.json');
    const planFile = join(dir, 'crossing-plan.json');
    await writeFile(snapshotFile, JSON.stringify(crossing));
    await writeFile(planFile, JSON.stringify(p));
    const { out, exitCode } = await runCommand(
      [register],
      ['check-plan', '--snapshot', snapshotFile, '--plan', planFile],
    );
    expect(exitCode).toBe(1);
    expect(out).toContain('host-in-wrong-aggregate');
    expect(out).toContain('aggregate-mismatch');
  });
});
