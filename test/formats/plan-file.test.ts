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

  it('refuses the phase soft-group and the mode repair-only, which aicerine-plan/1 lacks, saying how /1 writes them', () => {
    const doc = plan();
    (doc.aggregates[0]!.moves[0] as { phase: string }).phase = 'soft-group';
    (doc as { mode: string }).mode = 'repair-only';
    let message = '';
    try {
      parsePlan(doc, 'p.json');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(
      /p\.json: aggregates\[0\]\.moves\[0\]\.phase: expected one of "evacuate", "affinity", "spread", "pack" \(aicerine-plan\/1 has no "soft-group": a soft server-group move is phase "affinity" with "softGroup": true\), got "soft-group"/,
    );
    expect(message).toMatch(
      /p\.json: mode: expected one of "spread", "pack" \(aicerine-plan\/1 has no "repair-only": a repair-only plan is mode "spread" with "repairOnly": true\), got "repair-only"/,
    );
  });

  it('reads softGroup and repairOnly, and refuses them where they mean nothing', () => {
    const doc = { ...plan(), repairOnly: true };
    doc.aggregates[0]!.moves[0]!.phase = 'affinity';
    doc.aggregates[0]!.moves[0]!.softGroup = true;
    expect(parsePlan(structuredClone(doc))).toEqual(doc);

    doc.aggregates[0]!.moves[0]!.phase = 'evacuate';
    expect(() => parsePlan(doc, 'p.json')).toThrow(
      /p\.json: aggregates\[0\]\.moves\[0\]\.softGroup: true only on a move of phase "affinity" .*this one is "evacuate", got true/,
    );
    expect(() => parsePlan({ ...plan(), mode: 'pack', repairOnly: true }, 'p.json')).toThrow(
      /p\.json: repairOnly: true only with mode "spread" .*this plan's mode is "pack", got true/,
    );
    expect(() => parsePlan({ ...plan(), repairOnly: 'yes' }, 'p.json')).toThrow(
      /p\.json: repairOnly: expected true or false, got "yes"/,
    );
  });

  it('refuses another format', () => {
    expect(() => parsePlan({ format: 'aicerine-snapshot/1' }, 'p.json')).toThrow(
      /unknown format, expected "aicerine-plan\/1"/,
    );
  });
});
