import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, parseTimingSpec } from '../../src/sim/model.js';
import { chooseLoadModel, parseSynthSpec, setupSim } from '../../src/sim/setup.js';

describe('parseSynthSpec', () => {
  it('reads positional and named specs', () => {
    expect(parseSynthSpec('40,1200,30,7')).toEqual({ hosts: 40, servers: 1200, groups: 30, seed: 7 });
    expect(parseSynthSpec('hosts=4,servers=20,groups=1,seed=2,disabled=1')).toEqual({
      hosts: 4,
      servers: 20,
      groups: 1,
      seed: 2,
      disabled: 1,
    });
  });

  it('says which part is wrong', () => {
    expect(() => parseSynthSpec('40,x,3,1')).toThrow(
      '--synth 40,x,3,1: servers: expected a non-negative integer, got "x"',
    );
    expect(() => parseSynthSpec('40,100')).toThrow(/groups is missing/);
    expect(() => parseSynthSpec('cores=4')).toThrow(/part 1/);
  });
});

describe('parseTimingSpec (--timing)', () => {
  it('reads KEY=SECONDS for a known timing and says what is wrong otherwise', () => {
    expect(parseTimingSpec('completionLagSeconds=0')).toEqual({ completionLagSeconds: 0 });
    expect(parseTimingSpec('scheduleSeconds=0.25')).toEqual({ scheduleSeconds: 0.25 });
    expect(() => parseTimingSpec('lagSeconds=1')).toThrow(
      /--timing lagSeconds=1: expected KEY=SECONDS with KEY one of scheduleSeconds/,
    );
    expect(() => parseTimingSpec('holdSeconds=-1')).toThrow(
      '--timing holdSeconds=-1: expected seconds >= 0, got "-1"',
    );
  });

  it('reaches the cloud through setupSim, the rest staying at the lab defaults', async () => {
    const { cloud } = await setupSim({
      synth: '4,10,1,1',
      load: 'generated',
      speed: 0,
      timing: { completionLagSeconds: 0 },
      migrationProgress: true,
    });
    expect(cloud.timing).toEqual({ ...DEFAULT_TIMING, completionLagSeconds: 0 });
    expect(cloud.migrationProgress).toBe(true);
  });
});

describe('setupSim', () => {
  it('builds a cloud from a synthetic spec with generated load', async () => {
    const { cloud } = await setupSim({ synth: '6,40,2,3,2,1', load: 'generated', speed: 0 });
    expect(cloud.hosts).toHaveLength(6);
    expect(cloud.servers).toHaveLength(40);
    expect(cloud.load.kind).toBe('generated');
    expect(cloud.hosts.filter((h) => h.status === 'disabled')).toHaveLength(1);
  });

  it('refuses both a snapshot and a spec, and a trace that is not there', async () => {
    await expect(setupSim({ snapshotFile: 'x.json', synth: '1,1,0,1' })).rejects.toThrow('not both');
    await expect(chooseLoadModel('trace', '/nonexistent/hourly.csv.gz')).rejects.toThrow();
  });
});
