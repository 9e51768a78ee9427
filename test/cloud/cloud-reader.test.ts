// The control loop's CloudReader on the incremental recorder: one cycle per read, and the
// recorder's warnings sorted into what the data-health gate weighs.
import { afterEach, describe, expect, it } from 'vitest';
import { RecorderCloudReader, readProblems } from '../../src/cloud/cloud-reader.js';
import type { CycleResult } from '../../src/cloud/incremental-record.js';
import type { LoadedMetrics } from '../../src/cloud/prometheus/loads.js';
import { openSession } from '../../src/cloud/session.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { generatedLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';

let sim: SimServerHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('readProblems', () => {
  const cycle = (warnings: string[], metrics: LoadedMetrics | undefined): CycleResult =>
    ({
      snapshot: {
        format: 'aicerine-snapshot/1',
        takenAt: '2026-11-30T12:00:00Z',
        source: 't',
        hosts: [{ name: 'c1' }, { name: 'c2' }],
        servers: [{ id: 's1' }],
        serverGroups: [],
      },
      warnings,
      metrics,
      hostsLeftOut: ['c3'],
    }) as unknown as CycleResult;

  it('keeps what makes a read partial, and counts loads from the metrics health', () => {
    const metrics: LoadedMetrics = {
      hostLoads: new Map(),
      serverLoads: new Map(),
      health: {
        ok: false,
        problems: [],
        rules: [
          {
            dimension: 'cpu',
            scope: 'host',
            query: 'q',
            matched: 1,
            missing: ['c2'],
            stale: [],
            unmatched: [],
          },
          {
            dimension: 'cpu',
            scope: 'server',
            query: 'q',
            matched: 0,
            missing: [],
            stale: ['s1'],
            unmatched: [],
          },
        ],
      },
    };
    const p = readProblems(
      cycle(
        [
          'host c3: no Placement resource provider found; host and its servers left out',
          'server s9: on host c3, which is not recorded; left out',
          '2 servers have no host (building, shelved or failed): left out',
          'metrics: host cpu: no sample for 1 of 2 hosts (c2)',
          'Neutron ports not readable (forbidden): servers recorded without "sriov"',
          'server group g1: unknown policy "strange"; left out',
        ],
        metrics,
      ),
    );
    expect(p).toEqual({
      hostsLeftOut: ['c3'],
      hostsWithoutLoad: ['c2'],
      serversWithoutLoad: ['s1'],
      partialReads: [
        'Neutron ports not readable (forbidden): servers recorded without "sriov"',
        'server group g1: unknown policy "strange"; left out',
      ],
    });
  });

  it('counts every host and server as without load when there is no Prometheus', () => {
    expect(readProblems(cycle([], undefined))).toMatchObject({
      hostsWithoutLoad: ['c1', 'c2'],
      serversWithoutLoad: ['s1'],
    });
  });
});

describe('RecorderCloudReader on the simulator', () => {
  it('reads a cycle per call: full, then incremental, with no problems on a healthy cloud', async () => {
    const snap = synthesizeSnapshot({ hosts: 8, servers: 80, groups: 4, seed: 3, aggregates: 2 });
    const cloud = new SimCloud(snap, { clock: new SimClock({ speed: 0 }), load: generatedLoadModel() });
    sim = await startSimServer({ cloud, password: 'pw' });
    const session = await openSession({
      config: simAdminConfig(sim.authUrl, 'pw', 'test'),
      prometheusUrl: `${sim.url}/prometheus`,
    });
    const reader = new RecorderCloudReader(session, { now: () => new Date(cloud.nowMs()) });
    const first = await reader.read();
    expect(reader.last?.full).toBe(true);
    expect(first.snapshot.hosts).toHaveLength(8);
    expect(first.problems).toEqual({
      hostsLeftOut: [],
      hostsWithoutLoad: [],
      serversWithoutLoad: [],
      partialReads: [],
    });
    cloud.advance(30);
    const second = await reader.read();
    expect(reader.last?.full).toBe(false);
    expect(second.snapshot.servers.map((s) => s.id)).toEqual(first.snapshot.servers.map((s) => s.id));
  });
});
