import { describe, expect, it } from 'vitest';
import {
  dailyLoadModel,
  generatedLoadModel,
  staticLoadModel,
  traceLoadModel,
  weeklyFactor,
} from '../../src/sim/load.js';

const series = {
  cores: 4,
  memCapacityMB: 4096,
  stepSeconds: 3600,
  cpuCores: new Float32Array([0, 4, 2]),
  memMB: new Float32Array([0, 4096, 2048]),
};

describe('load models', () => {
  it('scales a trace share to the flavor and interpolates between steps', () => {
    const m = traceLoadModel([series]);
    const subject = { id: 'x', vcpus: 8, ramMB: 16384 };
    const samples = Array.from({ length: 7 }, (_, i) => m.serverLoad(subject, i * 1800));
    for (const s of samples) {
      expect(s.cpu).toBeGreaterThanOrEqual(0);
      expect(s.cpu).toBeLessThanOrEqual(8);
      expect(s.memoryMB).toBeGreaterThanOrEqual(Math.floor(16384 * 0.3));
      expect(s.memoryMB).toBeLessThanOrEqual(16384);
    }
    // Three hourly points of 0, 4 and 2 busy cores of 4: the flavor of 8 sees 0, 8 and 4 in some rotation.
    const hourly = [0, 2, 4].map((i) => samples[i]?.cpu);
    expect([...hourly].sort()).toEqual([0, 4, 8]);
    expect(m.serverLoad(subject, 900)).toEqual(m.serverLoad(subject, 900));
  });

  it('refuses a trace with no usable series', () => {
    expect(() => traceLoadModel([{ ...series, cores: 0 }])).toThrow(/no usable series/);
  });

  it('generates reproducible, bounded load without a trace', () => {
    const m = generatedLoadModel();
    const a = m.serverLoad({ id: 's1', vcpus: 4, ramMB: 8192 }, 12345);
    expect(a).toEqual(m.serverLoad({ id: 's1', vcpus: 4, ramMB: 8192 }, 12345));
    expect(a.cpu).toBeLessThanOrEqual(4);
    expect(a.memoryMB).toBeLessThanOrEqual(8192);
  });
});

describe('working-week shape', () => {
  const monday = Date.parse('2026-11-30T00:00:00Z') / 1000;
  const peakOf = (id: string, dayStart: number): number => {
    let best = 0;
    for (let h = 1; h < 24; h++)
      if (weeklyFactor(id, dayStart + h * 3600) > weeklyFactor(id, dayStart + best * 3600)) best = h;
    return best;
  };

  it('peaks on weekdays at each server own working hour, lower on weekends', () => {
    const peaks = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id) => peakOf(id, monday)));
    expect(peaks.size).toBeGreaterThan(2);
    for (const p of peaks) expect(p >= 8 && p <= 19).toBe(true);
    const saturday = monday + 5 * 86400;
    const p = peakOf('a', monday);
    expect(weeklyFactor('a', monday + p * 3600)).toBeCloseTo(1);
    expect(weeklyFactor('a', saturday + p * 3600)).toBeCloseTo(0.6);
    expect(weeklyFactor('a', monday + ((p + 12) % 24) * 3600)).toBeLessThan(0.5);
  });

  it("moves a model's CPU with the clock and keeps memory at its level", () => {
    const m = dailyLoadModel(staticLoadModel());
    const subject = { id: 'x', vcpus: 4, ramMB: 4096, fixed: { cpu: 4, memoryMB: 2000 } };
    const p = peakOf('x', monday);
    const high = m.serverLoad(subject, monday + p * 3600);
    const low = m.serverLoad(subject, monday + ((p + 12) % 24) * 3600);
    expect(high.cpu).toBeCloseTo(4);
    expect(low.cpu).toBeLessThan(2);
    expect(low.memoryMB).toBe(2000);
    // Anchored at an instant, the model gives the base loads there, and never more than the flavor.
    const anchored = dailyLoadModel(staticLoadModel(), monday + ((p + 12) % 24) * 3600);
    expect(anchored.serverLoad(subject, monday + ((p + 12) % 24) * 3600).cpu).toBeCloseTo(4);
    expect(anchored.serverLoad(subject, monday + p * 3600).cpu).toBe(4);
  });
});
