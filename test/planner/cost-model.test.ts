import { describe, expect, it } from 'vitest';
import { estimateMigrationSeconds } from '../../src/planner/cost-model.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';

const model = {
  ...DEFAULT_POLICY.costModel,
  bandwidthMBps: 1000,
  overheadSeconds: 5,
  stopCopyThresholdMB: 64,
};

describe('pre-copy migration cost model', () => {
  it('an idle server costs one copy of its RAM plus the overhead', () => {
    expect(estimateMigrationSeconds({ ramMB: 8192, dirtyRateMBps: 0 }, model)).toBeCloseTo(8.2 + 5, 1);
  });

  it('dirty pages add rounds: 8 GiB at 100 MiB/s dirty over 1000 MiB/s', () => {
    // rounds: 8.192 s, then 0.8192 s (819 MiB dirtied), then 0.0819 s (82 MiB), then 8 MiB < 64: stop-and-copy
    const s = estimateMigrationSeconds({ ramMB: 8192, dirtyRateMBps: 100 }, model);
    expect(s).toBeCloseTo(8.192 + 0.8192 + 0.08192 + 0.0082 + 5, 1);
  });

  it('grows with RAM and with the dirty rate', () => {
    const small = estimateMigrationSeconds({ ramMB: 2048 }, model);
    const big = estimateMigrationSeconds({ ramMB: 65536 }, model);
    const busy = estimateMigrationSeconds({ ramMB: 2048, dirtyRateMBps: 600 }, model);
    expect(big).toBeGreaterThan(small);
    expect(busy).toBeGreaterThan(small);
  });

  it('a server dirtying faster than the link never converges and is charged the iteration cap', () => {
    const s = estimateMigrationSeconds({ ramMB: 1024, dirtyRateMBps: 2000 }, { ...model, maxIterations: 5 });
    expect(s).toBeGreaterThan(5 * 1.024);
  });

  it('learned coefficients replace the estimate', () => {
    const learned = { ...model, learned: { intercept: 10, secondsPerGiB: 3 } };
    expect(estimateMigrationSeconds({ ramMB: 4096 }, learned)).toBe(22);
  });

  it('a learned dirty-rate term adds seconds per GiB per MiB/s, the policy default standing in for an unknown rate', () => {
    const learned = {
      ...model,
      learned: { intercept: 10, secondsPerGiB: 1, secondsPerGiBPerDirtyMBps: 0.01 },
    };
    expect(estimateMigrationSeconds({ ramMB: 4096, dirtyRateMBps: 100 }, learned)).toBe(10 + 4 * (1 + 1));
    expect(estimateMigrationSeconds({ ramMB: 4096 }, learned)).toBe(10 + 4 * (1 + 0.5));
  });
});
