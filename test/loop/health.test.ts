import { describe, expect, it } from 'vitest';
import { assessHealth, type ReadProblems } from '../../src/loop/health.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { cluster, host, server } from '../fixtures/cluster.js';

const NOW = new Date('2026-11-29T14:01:00Z');
const none: ReadProblems = {
  hostsLeftOut: [],
  hostsWithoutLoad: [],
  serversWithoutLoad: [],
  partialReads: [],
};
const noFlight = { servers: new Set<string>(), hosts: new Set<string>() };

function snap(): Snapshot {
  return cluster(
    [
      host('a', { aggregates: ['gold'], cpuLoad: 4, memLoad: 8000 }),
      host('b', { aggregates: ['gold'], cpuLoad: 2, memLoad: 4000 }),
      host('c', { aggregates: ['blue'], cpuLoad: 2, memLoad: 4000 }),
    ],
    [server('s1', 'a'), server('s2', 'a'), server('s3', 'b'), server('s4', 'c')],
  );
}

const run = (s: Snapshot, problems: ReadProblems = none, now = NOW, flight = noFlight) =>
  assessHealth({ aggregate: 'gold', snapshot: s, problems, ownInFlight: flight, now });

describe('data-health gate', () => {
  it('passes a fresh, complete, consistent snapshot', () => {
    const v = run(snap());
    expect(v).toEqual({ aggregate: 'gold', verdict: 'ok', reasons: [], at: NOW.toISOString() });
  });

  it('blocks a stale snapshot and says how old it is', () => {
    const v = run(snap(), none, new Date('2026-11-29T14:30:00Z'));
    expect(v.verdict).toBe('blocked');
    expect(v.reasons).toEqual(['stale: snapshot taken 1800 s ago (limit 300 s)']);
  });

  it('blocks partial reads: a host left out, a failed list', () => {
    const v = run(snap(), { ...none, hostsLeftOut: ['d'], partialReads: ['server groups not readable'] });
    expect(v.reasons).toEqual([
      'partial: host d was left out of the snapshot',
      'partial: server groups not readable',
    ]);
  });

  it('a left-out host counts only against its own aggregates when they are known', () => {
    const p = { ...none, hostsLeftOut: ['x', 'y'], leftOutAggregates: { x: ['blue'], y: ['gold', 'blue'] } };
    expect(run(snap(), p).reasons).toEqual(['partial: host y was left out of the snapshot']);
  });

  it('blocks when too many hosts of the aggregate lack fresh metrics, ignoring other aggregates', () => {
    expect(run(snap(), { ...none, hostsWithoutLoad: ['c'] }).verdict).toBe('ok');
    const v = run(snap(), { ...none, hostsWithoutLoad: ['a'] });
    expect(v.verdict).toBe('blocked');
    expect(v.reasons[0]).toMatch(/1 of 2 hosts \(50%, limit 10%\) have no fresh load, e\.g\. a/);
  });

  it('blocks contradictory Placement usage unless the host has our own migration in flight', () => {
    const s = snap();
    s.hosts[0]!.usage.VCPU = 40;
    const v = run(s);
    expect(v.reasons).toEqual([
      "contradictory: host a Placement VCPU usage 40, its servers' flavors sum to 4",
    ]);
    expect(run(s, none, NOW, { servers: new Set(), hosts: new Set(['a']) }).verdict).toBe('ok');
  });

  it('a usage above the flavors by what servers still building claim is not a contradiction', () => {
    // The scheduler wrote a building server's claim on host a; Nova does not name its host yet.
    const s = snap();
    const flavors = s.servers.filter((x) => x.host === 'a').reduce((n, x) => n + x.flavor.vcpus, 0);
    s.hosts[0]!.usage.VCPU = flavors + 2;
    const building = { servers: 1, vcpus: 2, ramMB: 0 };
    expect(run(s, { ...none, building }).verdict).toBe('ok');
    // More than they claim, or a usage below the flavors, is still one.
    expect(run(s, { ...none, building: { ...building, vcpus: 1 } }).reasons).toEqual([
      `contradictory: host a Placement VCPU usage ${flavors + 2}, its servers' flavors sum to ${flavors}`,
    ]);
    s.hosts[0]!.usage.VCPU = flavors - 2;
    expect(run(s, { ...none, building }).verdict).toBe('blocked');
  });

  it('blocks unbelievable cpu load', () => {
    const s = snap();
    s.hosts[1]!.load = { cpu: 100, memoryMB: 10 };
    expect(run(s).reasons).toEqual(['contradictory: host b measured cpu load 100 on 16 physical cores']);
  });

  it('blocks while someone else migrates in the aggregate, not for our own migrations', () => {
    const s = snap();
    s.servers[2]!.taskState = 'migrating';
    expect(run(s).reasons[0]).toMatch(/^busy: 1 server\(s\) migrating not by Aicerine \(e\.g\. s3\)/);
    expect(run(s, none, NOW, { servers: new Set(['s3']), hosts: new Set() }).verdict).toBe('ok');
  });

  it('blocks an aggregate with no recorded host', () => {
    const v = assessHealth({
      aggregate: 'nope',
      snapshot: snap(),
      problems: none,
      ownInFlight: noFlight,
      now: NOW,
    });
    expect(v.reasons).toEqual(['partial: no host of this aggregate was recorded']);
  });
});
