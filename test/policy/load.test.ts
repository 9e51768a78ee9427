import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { compilePolicy, loadPolicyFile } from '../../src/policy/load.js';

describe('policy', () => {
  it('an empty policy is the defaults', () => {
    expect(compilePolicy(null)).toEqual(DEFAULT_POLICY);
  });

  it('merges what is given over the defaults and fills known dimensions', () => {
    const p = compilePolicy({
      mode: 'pack',
      budget: { maxMoves: 7 },
      dimensions: [{ name: 'cpu', weight: 1 }],
    });
    expect(p.mode).toBe('pack');
    expect(p.budget.maxMoves).toBe(7);
    expect(p.dimensions).toEqual([
      { name: 'cpu', weight: 1, load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' },
    ]);
    expect(p.concurrency).toEqual(DEFAULT_POLICY.concurrency);
  });

  it('plans on current load unless told, and merges forecast settings over their defaults', () => {
    expect(DEFAULT_POLICY.load).toBe('current');
    expect(DEFAULT_POLICY.forecast).toEqual({ horizonHours: 24, peakSlots: 3, maxError: 0.15 });
    const p = compilePolicy({ load: 'forecast', forecast: { peakSlots: 5 } });
    expect(p.load).toBe('forecast');
    expect(p.forecast).toEqual({ horizonHours: 24, peakSlots: 5, maxError: 0.15 });
  });

  it('accepts a custom dimension that names its load and capacity', () => {
    const p = compilePolicy({
      dimensions: [{ name: 'net', weight: 0.2, load: 'netMbps', capacity: 'NET_BW_EGR_KILOBIT_PER_SEC' }],
    });
    expect(p.dimensions[0]).toMatchObject({ name: 'net', load: 'netMbps', missingServerLoad: 'zero' });
  });

  it.each([
    {
      doc: { mode: 'scatter' },
      message: /policy\.yaml: mode: expected one of "spread", "pack", "repair-only", got "scatter"/,
    },
    {
      doc: { budget: { maxMoves: -1 } },
      message: /budget\.maxMoves: expected a non-negative integer, got -1/,
    },
    { doc: { budjet: {} }, message: /policy\.yaml: budjet: unknown key \(a typo\?\)/ },
    { doc: ['a', 'b'], message: /^policy\.yaml: expected a mapping of keys, got a list of 2 items$/ },
    { doc: { budget: 5 }, message: /policy\.yaml: budget: expected a mapping of keys, got 5/ },
    { doc: { aggregates: 'agg-1' }, message: /policy\.yaml: aggregates: expected a list, got "agg-1"/ },
    {
      doc: { dimensions: [{ name: 'gpu', weight: 1 }] },
      message: /dimensions\[0\]\.load: required for dimension "gpu"/,
    },
    {
      doc: { dimensions: [{ name: 'cpu', weight: 0 }] },
      message: /dimensions: the weights must not all be zero/,
    },
    { doc: { pack: { maxFill: 1.5 } }, message: /pack\.maxFill: expected a fraction/ },
    {
      doc: { pack: { partialDrainMaxPinned: 2 } },
      message: /pack\.partialDrainMaxPinned: expected a fraction in \[0, 1\], got 2/,
    },
    { doc: { load: 'predicted' }, message: /load: expected one of "current", "forecast", got "predicted"/ },
    {
      doc: { forecast: { horizonHours: 0 } },
      message: /forecast\.horizonHours: expected a positive integer, got 0/,
    },
    { doc: { forecast: { horizonHours: 200 } }, message: /forecast\.horizonHours: expected at most 168/ },
    {
      doc: { forecast: { peakSlots: 2.5 } },
      message: /forecast\.peakSlots: expected a positive integer, got 2\.5/,
    },
    {
      doc: { forecast: { horizonHours: 4, peakSlots: 6 } },
      message: /forecast\.peakSlots: expected at most forecast\.horizonHours \(4\), got 6/,
    },
    {
      doc: { forecast: { maxError: 1.2 } },
      message: /forecast\.maxError: expected a fraction in \[0, 1\], got 1\.2/,
    },
    { doc: { forecast: { window: 3 } }, message: /forecast\.window: unknown key/ },
  ])('refuses $doc with a message naming file, field and value', ({ doc, message }) => {
    expect(() => compilePolicy(doc, 'policy.yaml')).toThrow(message);
  });

  it('loads YAML files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aicerine-policy-'));
    const path = join(dir, 'p.yaml');
    writeFileSync(path, 'mode: pack\npack:\n  spareHosts: 2\n');
    expect((await loadPolicyFile(path)).pack.spareHosts).toBe(2);
    writeFileSync(path, 'mode: [unclosed\n');
    await expect(loadPolicyFile(path)).rejects.toThrow(/p\.yaml: not valid YAML/);
  });
});
