import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlan, readPlan, writePlan } from '../../src/formats/plan-file.js';
import { planSnapshot } from '../../src/planner/index.js';
import { cluster, host, server } from '../fixtures/cluster.js';
import { policyWith } from '../fixtures/state.js';

const plan = () =>
  planSnapshot(cluster([host('a', { status: 'disabled' }), host('b')], [server('s1', 'a')]), policyWith());

describe('plan files', () => {
  it('round-trips a plan the planner made', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'aicerine-plan-')), 'p.json.gz');
    await writePlan(path, plan());
    expect(await readPlan(path)).toEqual(plan());
  });

  it('refuses a move with a bad phase, naming the path and value', () => {
    const doc = plan();
    (doc.aggregates[0]!.moves[0] as { phase: string }).phase = 'teleport';
    expect(() => parsePlan(doc, 'p.json')).toThrow(
      /p\.json: aggregates\[0\]\.moves\[0\]\.phase: expected one of .*got "teleport"/,
    );
  });

  it('refuses another format', () => {
    expect(() => parsePlan({ format: 'aicerine-snapshot/1' }, 'p.json')).toThrow(
      /unknown format, expected "aicerine-plan\/1"/,
    );
  });
});
