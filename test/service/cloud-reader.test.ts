// What the loop's reader makes of a recorder cycle for the data-health gate (when each host's
// load was sampled), and what the gate's verdicts ask the recorder to read again.
import { describe, expect, it } from 'vitest';
import type { HealthVerdict } from '../../src/loop/health.js';
import { readProblems, recoveryFor } from '../../src/service/cloud-reader.js';

const verdict = (aggregate: string, reasons: string[]): HealthVerdict => ({
  aggregate,
  verdict: reasons.length ? 'blocked' : 'ok',
  reasons,
  at: '2026-12-02T10:00:00.000Z',
});

describe('the loop reader', () => {
  it("dates each host's load by the oldest of its host rules' newest samples", () => {
    const rule = (scope: 'host' | 'server', sampledAt: Record<string, number>) => ({
      dimension: 'cpu',
      scope,
      query: 'q',
      matched: 0,
      missing: [],
      stale: [],
      unmatched: [],
      sampledAt,
    });
    const p = readProblems({
      warnings: [],
      hostsLeftOut: [],
      aggregates: [],
      metrics: {
        hostLoads: new Map(),
        serverLoads: new Map(),
        health: {
          ok: true,
          problems: [],
          rules: [
            rule('host', { c1: 1_764_669_600, c2: 1_764_669_610 }),
            rule('host', { c1: 1_764_669_605, c2: 1_764_669_590 }),
            rule('server', { s1: 1 }),
          ],
        },
      },
    });
    const iso = (s: number) => new Date(s * 1000).toISOString();
    expect(p.hostSampledAt).toEqual({ c1: iso(1_764_669_600), c2: iso(1_764_669_590) });
    expect(
      readProblems({ warnings: [], hostsLeftOut: [], aggregates: [], metrics: undefined }).hostSampledAt,
    ).toBeUndefined();
  });

  it('servers without a host are no failed read; what those building claim is passed on', () => {
    const p = readProblems({
      warnings: [
        '2 servers have no host (building, shelved or failed): left out',
        'server groups not readable: 403',
      ],
      hostsLeftOut: [],
      aggregates: [],
      metrics: undefined,
      building: { servers: 1, vcpus: 2, ramMB: 4096 },
    });
    expect(p.partialReads).toEqual(['server groups not readable: 403']);
    expect(p.building).toEqual({ servers: 1, vcpus: 2, ramMB: 4096 });
    const none = readProblems({
      warnings: [],
      hostsLeftOut: [],
      aggregates: [],
      metrics: undefined,
      building: { servers: 0, vcpus: 0, ramMB: 0 },
    });
    expect(none.building).toBeUndefined();
  });

  it('a contradiction asks for its hosts again, a stale snapshot for a full read, the rest for nothing', () => {
    expect(
      recoveryFor([
        verdict('gold', [
          "contradictory: host compute1 Placement VCPU usage 16, its servers' flavors sum to 15",
          'stale or missing metrics: 1 of 4 hosts (25%, limit 5%) have no fresh load, e.g. compute2',
        ]),
        verdict('silver', [
          "contradictory: host compute7 Placement MEMORY_MB usage 4096, its servers' flavors sum to 2048",
        ]),
        verdict('bronze', []),
      ]),
    ).toEqual({ full: null, hosts: ['compute1', 'compute7'] });
    expect(recoveryFor([verdict('gold', ['stale: snapshot taken 1200 s ago (limit 900 s)'])])).toEqual({
      full: 'data health (gold): stale: snapshot taken 1200 s ago (limit 900 s)',
      hosts: [],
    });
  });
});
