import { describe, expect, it } from 'vitest';
import { assessEmergencies, type EmergencyRules } from '../../src/loop/emergencies.js';
import { cluster, host, server } from '../fixtures/cluster.js';

const rules: EmergencyRules = {
  evacuateReasonPrefix: 'EVAC',
  cpuLimit: 0.9,
  memoryLimit: 0.95,
  sustainSeconds: 600,
};
const t0 = new Date('2026-11-29T14:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

function snap(hotCpu: number, reason = 'maintenance') {
  const s = cluster(
    [
      host('a', { cpuLoad: hotCpu, memLoad: 1000 }),
      host('b', { status: 'disabled', cpuLoad: 1, memLoad: 1 }),
    ],
    [server('s1', 'a')],
  );
  s.hosts[1]!.service.disabledReason = reason;
  return s;
}
const names = new Set(['a', 'b']);

describe('declared emergencies', () => {
  it('a host disabled with the configured prefix is an emergency at once; another reason is not', () => {
    expect(assessEmergencies(snap(1, 'EVAC: disk failing'), names, rules, new Map(), t0).hosts).toEqual([
      { host: 'b', why: 'disabled for evacuation: "EVAC: disk failing"' },
    ]);
    expect(assessEmergencies(snap(1), names, rules, new Map(), t0).hosts).toEqual([]);
  });

  it('a hot host becomes an emergency only once it stayed hot for the sustained time', () => {
    const first = assessEmergencies(snap(15), names, rules, new Map(), t0);
    expect(first.hosts).toEqual([]);
    expect(first.hotSince.get('a')).toBe(t0.toISOString());
    const later = assessEmergencies(snap(15), names, rules, first.hotSince, at(600));
    expect(later.hosts).toEqual([{ host: 'a', why: 'cpu 94% >= 90% for 600 s (sustained limit 600 s)' }]);
  });

  it('cooling down resets the clock', () => {
    const first = assessEmergencies(snap(15), names, rules, new Map(), t0);
    const cool = assessEmergencies(snap(2), names, rules, first.hotSince, at(300));
    expect(cool.hotSince.size).toBe(0);
    const again = assessEmergencies(snap(15), names, rules, cool.hotSince, at(700));
    expect(again.hosts).toEqual([]);
  });

  it('hosts outside the aggregate are ignored', () => {
    expect(assessEmergencies(snap(15, 'EVAC'), new Set(['x']), rules, new Map(), t0)).toEqual({
      hosts: [],
      hotSince: new Map(),
    });
  });
});
