// The worth threshold in a policy file: a level 1..5 or explicit figures, refused otherwise with
// the path; a compiled policy written back as a document compiles to the same policy (what-if
// lays a request's keys over an aggregate's compiled policy).
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { compilePolicy, policyDocument } from '../../src/policy/load.js';
import { LEVEL_FIGURES, objectiveBar, thresholdOfLevel } from '../../src/policy/threshold.js';

describe('policy threshold', () => {
  it('takes a level or figures, and the default is level 3', () => {
    expect(compilePolicy({}).threshold).toEqual(thresholdOfLevel(3));
    expect(compilePolicy({ threshold: 1 }).threshold.mandatoryOnly).toBe(true);
    expect(compilePolicy({ threshold: { perMove: 0.1, perMinute: 0, perGiB: 0.01 } }).threshold).toEqual({
      level: null,
      mandatoryOnly: false,
      perMove: 0.1,
      perMinute: 0,
      perGiB: 0.01,
    });
    expect(compilePolicy({ hotThreshold: 0.9 }).hotThreshold).toBe(0.9);
  });

  it('refuses a level outside 1..5 and figures with a missing or negative key, naming the path', () => {
    for (const bad of [0, 6, 2.5, 'high', { perMove: 0.1 }, { perMove: -1, perMinute: 0, perGiB: 0 }]) {
      try {
        compilePolicy({ threshold: bad }, 'p.yaml');
        expect.unreachable(`accepted ${JSON.stringify(bad)}`);
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        expect((e as InputError).issues[0]!.path).toMatch(/^threshold/);
      }
    }
    expect(() => compilePolicy({ hotThreshold: 1.5 })).toThrow(InputError);
  });

  it('a compiled policy written back compiles to itself', () => {
    for (const doc of [
      {},
      { threshold: 5, minGain: 0.01 },
      { threshold: { perMove: 0.2, perMinute: 0.1, perGiB: 0 } },
      { load: 'forecast', forecast: { horizonHours: 12, peakSlots: 2, maxError: 0.1 } },
    ]) {
      const p = compilePolicy(doc);
      expect(compilePolicy(policyDocument(p))).toEqual(p);
    }
  });

  it('bars grow with seconds and memory, never below minGain plus the per-second cost', () => {
    const t = thresholdOfLevel(3);
    const small = objectiveBar(t, 0.005, 0.00005, 9.3, 4096);
    const large = objectiveBar(t, 0.005, 0.00005, 74, 65536);
    expect(large).toBeGreaterThan(small);
    expect(objectiveBar(thresholdOfLevel(5), 0.005, 0.00005, 10, 4096)).toBeCloseTo(0.0055, 9);
    expect(objectiveBar(thresholdOfLevel(1), 0, 0, 1, 1)).toBe(Number.POSITIVE_INFINITY);
    // Higher levels never ask more of a move than lower ones.
    for (const l of [2, 3, 4] as const) {
      const here = LEVEL_FIGURES[l] as { perMove: number };
      const next = LEVEL_FIGURES[(l + 1) as 3 | 4 | 5] as { perMove: number };
      expect(next.perMove).toBeLessThanOrEqual(here.perMove);
    }
  });
});
