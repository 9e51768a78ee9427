// Ratio prevention against the lab's Placement: a decision written and read back, allocations
// read for the usage guard, and a ratio changed behind our back by a second client detected and
// the host pinned. Every ratio touched is put back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import type { ResourceProvider } from '../../src/cloud/openstack/placement.js';
import type { CloudSession } from '../../src/cloud/session.js';
import type { RatioDecision } from '../../src/prevention/decide.js';
import { InMemoryRatioChangeSink } from '../../src/prevention/sink.js';
import { RatioWriter } from '../../src/prevention/writer.js';
import { adminSession, bootServers, cleanupLab, uniqueName } from './lab.js';

const HOST = 'compute3';
const P = uniqueName('ratio');
let s: CloudSession;
let other: CloudSession;
let rp: ResourceProvider;
let original: number;

beforeAll(async () => {
  s = await adminSession();
  other = await adminSession();
  const found = (await s.placement.listResourceProviders({ name: HOST }))[0];
  if (!found) throw new Error(`lab: no resource provider ${HOST}`);
  rp = found;
  original = (await s.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio ?? 4;
  // 8 VCPU allocated on the host, so that the usage guard has something to guard.
  await bootServers(s, [{ name: `${P}-big`, host: HOST, flavor: 'm1.xlarge' }]);
});

afterAll(async () => {
  if (s && rp) await s.placement.setAllocationRatio(rp.uuid, 'VCPU', original);
  if (s) await cleanupLab(s, P);
});

const ratio = async () => (await s.placement.getInventories(rp.uuid)).inventories.VCPU?.allocationRatio;
const decision = (from: number, to: number): RatioDecision => ({
  host: HOST,
  rpUuid: rp.uuid,
  action: to < from ? 'lower' : 'raise',
  code: 'lower-hot',
  from,
  to,
  reason: `lab test ${from} -> ${to}`,
});

describe('VCPU ratio prevention against the lab', () => {
  it('writes a ratio that reads back, refuses one the allocations would not fit, and pins a host whose ratio someone else rewrote', async () => {
    const sink = new InMemoryRatioChangeSink();
    const actuator = await Actuator.open({ config: s.config, credential: { label: 'actuator (lab test)' } });
    const writer = new RatioWriter({ placement: s.placement, actuator, sink, now: () => new Date() });

    const written = await writer.apply(decision(original, 3.5), 'lab');
    expect(written.outcome).toBe('written');
    expect(await ratio()).toBe(3.5);
    expect(sink.records.map((r) => r.state)).toEqual(['intended', 'written']);

    const used = (await s.placement.getUsages(rp.uuid)).VCPU ?? 0;
    expect(used).toBeGreaterThanOrEqual(8);
    const inv = (await s.placement.getInventories(rp.uuid)).inventories.VCPU;
    const tooLow = Math.floor((used / ((inv?.total ?? 16) - (inv?.reserved ?? 0))) * 100 - 1) / 100;
    const refused = await writer.apply(decision(3.5, tooLow), 'lab');
    expect(refused.outcome).toBe('usage');
    expect(await ratio()).toBe(3.5);

    // Nothing rewrote it yet: what we observe is ours.
    expect(await writer.detectOverwrites([{ host: HOST, rpUuid: rp.uuid, ratio: 3.5 }])).toEqual([]);
    // A second client changes it behind our back (as nova-compute does when nova.conf sets cpu_allocation_ratio).
    await other.placement.setAllocationRatio(rp.uuid, 'VCPU', 3.0);
    const found = await writer.detectOverwrites([{ host: HOST, rpUuid: rp.uuid, ratio: 3.0 }]);
    expect(found).toEqual([expect.objectContaining({ host: HOST, expected: 3.5, found: 3 })]);
    expect((await writer.apply(decision(3.0, 2.5), 'lab')).outcome).toBe('pinned');
    expect(await ratio()).toBe(3);

    // Released by an operator: the value found becomes ours and the host is written again.
    expect(await writer.release(HOST, rp.uuid, 'lab test')).toBe(3);
    expect((await writer.apply(decision(3.0, original), 'lab')).outcome).toBe('written');
    expect(await ratio()).toBe(original);
  });
});
