import { describe, expect, it } from 'vitest';
import { generatedLoadModel, traceLoadModel } from '../../src/sim/load.js';

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
