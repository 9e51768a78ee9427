// The plan command as a new user runs it: the built CLI, on the example that ships.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import { parsePlan } from '../../../src/formats/plan-file.js';
import { parseSnapshot } from '../../../src/formats/snapshot-file.js';
import { planSnapshot } from '../../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../../src/policy/defaults.js';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', '..', 'bin', 'aicerine.js');
const example = join(import.meta.dirname, '..', '..', '..', 'examples', 'small-cluster.json');
const golden = join(import.meta.dirname, '..', '..', '..', 'examples', 'small-cluster.plan.json');

async function aicerine(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args]);
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe('aicerine plan', () => {
  it('prints a readable plan: before/after, waves, moves and reasons', async () => {
    const { stdout, code } = await aicerine('plan', '--snapshot', example);
    expect(code).toBe(0);
    expect(stdout).toMatch(/== agg-1: \d+ moves in \d+ waves/);
    expect(stdout).toMatch(/before\s+0\.\d{4}/);
    expect(stdout).toMatch(/evacuate .* is disabled \(maintenance\)/);
    expect(stdout).toMatch(/unresolved: /);
  });

  it('prints plan JSON that parses and passes the checker', async () => {
    const { stdout, code } = await aicerine(
      'plan',
      '--snapshot',
      example,
      '--json',
      '--mode',
      'pack',
      '--max-moves',
      '30',
    );
    expect(code).toBe(0);
    const plan = parsePlan(JSON.parse(stdout));
    expect(plan.mode).toBe('pack');
    const snapshot = parseSnapshot(JSON.parse(readFileSync(example, 'utf8')));
    expect(checkPlan(snapshot, plan, { maxMoves: 30 }).violations).toEqual([]);
    expect(plan.aggregates.reduce((n, a) => n + a.moves.length, 0)).toBeLessThanOrEqual(30);
  });

  it('reads a policy file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aicerine-plan-cli-'));
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, 'budget:\n  maxMoves: 3\n');
    const { stdout } = await aicerine('plan', '--snapshot', example, '--policy', policy, '--json');
    expect(parsePlan(JSON.parse(stdout)).aggregates.flatMap((a) => a.moves)).toHaveLength(3);
  });

  it('refuses bad input with file, path and value, and exit status 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aicerine-plan-cli-'));
    const bad = join(dir, 'bad.json');
    const doc = JSON.parse(readFileSync(example, 'utf8'));
    doc.hosts[3].inventory.VCPU.total = -4;
    writeFileSync(bad, JSON.stringify(doc));
    const r = await aicerine('plan', '--snapshot', bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}: hosts[3].inventory.VCPU.total: expected a positive integer, got -4`);
    const mode = await aicerine('plan', '--snapshot', example, '--mode', 'scatter');
    expect(mode.stderr).toContain('--mode: expected one of spread, pack, repair-only, got "scatter"');
  });

  it('refuses a policy naming an aggregate the snapshot lacks, listing the known ones, and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aicerine-plan-cli-'));
    const policy = join(dir, 'p.yaml');
    writeFileSync(policy, 'aggregates: [agg-9]\n');
    const out = join(dir, 'plan.json');
    const r = await aicerine('plan', '--snapshot', example, '--policy', policy, '--json', '-o', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${policy}: aggregates[0]: no host of the snapshot is in this aggregate (the snapshot's aggregates: agg-1, agg-2), got "agg-9"`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('gives the golden plan for the example, byte for byte (UPDATE_GOLDEN=1 rewrites it)', () => {
    const snapshot = parseSnapshot(JSON.parse(readFileSync(example, 'utf8')));
    const text = `${JSON.stringify(planSnapshot(snapshot, DEFAULT_POLICY), null, 2)}\n`;
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden, text);
    expect(text).toBe(readFileSync(golden, 'utf8'));
  });
});
