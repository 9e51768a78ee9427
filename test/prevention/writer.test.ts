// The ratio writer against the simulator over HTTP: writes read back, generation races (409),
// allocations that grew, Placement failures, and a ratio rewritten by nova-compute
// (the simulator's --pin-cpu-ratio) detected and the host pinned.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/model/snapshot.js';
import { runPreventionPass } from '../../src/prevention/cycle.js';
import type { RatioDecision } from '../../src/prevention/decide.js';
import { decideRatios } from '../../src/prevention/decide.js';
import { hostRatioStates } from '../../src/prevention/observe.js';
import { defaultRatioSettings } from '../../src/prevention/settings.js';
import { InMemoryRatioChangeSink } from '../../src/prevention/sink.js';
import { type RatioWritePort, RatioWriter } from '../../src/prevention/writer.js';
import { type SimSession, startSimSession } from '../fixtures/sim-session.js';
import { host, server, snapshot } from '../sim/fixtures.js';

let w: SimSession;
const rp: Record<string, string> = {};

beforeAll(async () => {
  const hosts = ['c1', 'c2', 'c3', 'c4', 'c5'].map((n) => host(n));
  // 10 servers of 2 vCPU on c1: 20 VCPU allocated of 16 x 4.
  const servers = Array.from({ length: 10 }, (_, i) => server(i + 1, 'c1', 2048));
  w = await startSimSession(snapshot(hosts, servers));
  for (const p of await w.session.placement.listResourceProviders()) rp[p.name] = p.uuid;
});

afterAll(async () => {
  await w?.close();
});

let sink: InMemoryRatioChangeSink;
let writer: RatioWriter;
beforeEach(() => {
  sink = new InMemoryRatioChangeSink();
  writer = new RatioWriter({ placement: w.session.placement, actuator: w.actuator, sink, now: w.now });
});

const ratioOf = async (h: string) =>
  (await w.session.placement.getInventories(rp[h] as string)).inventories.VCPU?.allocationRatio;

function lower(h: string, from: number, to: number): RatioDecision {
  return {
    host: h,
    rpUuid: rp[h] as string,
    action: to < from ? 'lower' : 'raise',
    code: 'lower-hot',
    from,
    to,
    reason: `test: ${from} -> ${to}`,
  };
}

describe('writing VCPU allocation ratios', () => {
  it('writes a decision, reads it back, and records the intent and the outcome with the reason', async () => {
    const r = await writer.apply(lower('c2', 4, 3.5), 'gold');
    expect(r).toMatchObject({ outcome: 'written', found: 3.5 });
    expect(await ratioOf('c2')).toBe(3.5);
    expect(sink.records.map((x) => [x.state, x.host, x.from, x.to, x.reason, x.aggregate])).toEqual([
      ['intended', 'c2', 4, 3.5, 'test: 4 -> 3.5', 'gold'],
      ['written', 'c2', 4, 3.5, 'test: 4 -> 3.5', 'gold'],
    ]);
    expect(sink.records[0]?.changeId).toBe(sink.records[1]?.changeId);
    // Back, so that later tests start from 4.
    expect((await writer.apply(lower('c2', 3.5, 4), 'gold')).outcome).toBe('written');
  });

  /** The actuator with `before` run ahead of its first PUT: someone else writing in between. */
  const interfering = (before: () => Promise<unknown>): RatioWritePort & { interfered: number } => {
    const port = {
      kind: 'actuator' as const,
      interfered: 0,
      putInventory: async (...args: Parameters<RatioWritePort['putInventory']>) => {
        if (port.interfered === 0) {
          port.interfered++;
          await before();
        }
        return w.actuator.putInventory(...args);
      },
    };
    return port;
  };

  it('re-reads and writes again after a 409 when only the generation moved', async () => {
    const placement = w.session.placement;
    // Another writer (nova-compute's periodic update) bumps the generation in between.
    const actuator = interfering(() =>
      placement.updateInventory(rp.c3 as string, 'MEMORY_MB', (inv) => ({
        ...inv,
        reserved: inv.reserved + 1,
      })),
    );
    const racing = new RatioWriter({ placement, actuator, sink, now: w.now });
    const r = await racing.apply(lower('c3', 4, 3), 'gold');
    expect(r.outcome).toBe('written');
    expect(actuator.interfered).toBe(1);
    expect(await ratioOf('c3')).toBe(3);
  });

  it('after a 409 in which someone else changed the ratio itself, pins the host instead of writing over them', async () => {
    // c3 was last written (3) by us in the test above; keep that history.
    await sink.record({
      changeId: 'x',
      host: 'c3',
      rpUuid: rp.c3 as string,
      aggregate: 'gold',
      from: 4,
      to: 3,
      reason: 'earlier',
      state: 'written',
      at: w.now().toISOString(),
    });
    const placement = w.session.placement;
    const actuator = interfering(() => placement.setAllocationRatio(rp.c3 as string, 'VCPU', 5));
    const racing = new RatioWriter({ placement, actuator, sink, now: w.now });
    const r = await racing.apply(lower('c3', 3, 2.5), 'gold');
    expect(r.outcome).toBe('overwritten');
    expect(r.found).toBe(5);
    expect(await ratioOf('c3')).toBe(5);
    expect((await sink.pinned()).get('c3')).toMatchObject({ expected: 3, found: 5 });
    expect(sink.records.at(-1)).toMatchObject({ state: 'abandoned', to: 2.5 });
    await placement.setAllocationRatio(rp.c3 as string, 'VCPU', 4);
  });

  it('refuses a ratio the allocations no longer fit, and one decided on a ratio that has moved', async () => {
    // 20 VCPU allocated on c1 (16 cores): 1.25 is the least that holds them.
    const r = await writer.apply(lower('c1', 4, 1.2), 'gold');
    expect(r).toMatchObject({ outcome: 'usage', detail: 'c1: 20 VCPU allocated would not fit at ratio 1.2' });
    expect(await ratioOf('c1')).toBe(4);
    const stale = await writer.apply(lower('c1', 3, 2.5), 'gold');
    expect(stale).toMatchObject({ outcome: 'stale', found: 4 });
    expect(await ratioOf('c1')).toBe(4);
    expect(sink.records.filter((x) => x.state === 'abandoned')).toHaveLength(2);
  });

  it('reports a Placement that fails, recording the write as abandoned', async () => {
    await w.control('POST', '/faults', {
      pattern: '^PUT /placement/resource_providers/.*/inventories/VCPU',
      kind: 'error',
      rate: 1,
      count: 4,
    });
    try {
      const r = await writer.apply(lower('c4', 4, 3.5), 'gold');
      expect(r.outcome).toBe('failed');
      expect(r.detail).toMatch(/^Placement: /);
    } finally {
      await w.control('DELETE', '/faults');
    }
    expect(await ratioOf('c4')).toBe(4);
    expect(sink.records.map((x) => x.state)).toEqual(['intended', 'abandoned']);
  });

  it('detects a ratio nova-compute rewrites (cpu_allocation_ratio in nova.conf), pins the host and stops writing it', async () => {
    await w.control('POST', '/hosts/c5', { cpuAllocationRatio: { ratio: 4, periodSeconds: 60 } });
    try {
      expect((await writer.apply(lower('c5', 4, 3.5), 'gold')).outcome).toBe('written');
      // An observation taken before our write is not evidence: the fresh read shows our value.
      expect(await writer.detectOverwrites([{ host: 'c5', rpUuid: rp.c5 as string, ratio: 4 }])).toEqual([]);
      await w.advance(61);
      expect(await ratioOf('c5')).toBe(4);
      const snap = (await w.control('GET', '/snapshot')) as Snapshot;
      const observed = hostRatioStates(snap.hosts, (h) => rp[h]).map((s) => ({
        host: s.host,
        rpUuid: s.rpUuid,
        ratio: s.ratio,
      }));
      const found = await writer.detectOverwrites(observed);
      expect(found).toEqual([
        expect.objectContaining({
          host: 'c5',
          expected: 3.5,
          found: 4,
          reason: expect.stringMatching(/cpu_allocation_ratio/),
        }),
      ]);
      const pinned = await sink.pinned();
      expect([...pinned.keys()]).toEqual(['c5']);

      // The decision holds it, and the writer would not write it anyway.
      const [d] = decideRatios({
        hosts: [
          {
            host: 'c5',
            rpUuid: rp.c5 as string,
            ratio: 4,
            total: 16,
            reserved: 0,
            used: 0,
            load: { utilization: 0.99 },
          },
        ],
        settings: defaultRatioSettings(4, 2),
        lastChanges: new Map(),
        pinned: new Set(pinned.keys()),
        now: w.now(),
      });
      expect(d?.code).toBe('hold-pinned');
      expect((await writer.apply(lower('c5', 4, 3.5), 'gold')).outcome).toBe('pinned');
      expect(await ratioOf('c5')).toBe(4);

      // An operator releases it (after fixing nova.conf): it is written again.
      await w.control('POST', '/hosts/c5', { cpuAllocationRatio: null });
      expect(await writer.release('c5', rp.c5 as string, 'operator:alice', 'gold')).toBe(4);
      expect(sink.records.at(-1)).toMatchObject({
        state: 'adopted',
        from: 4,
        to: 4,
        reason: 'released by operator:alice: ratio 4 adopted as found',
      });
      expect((await writer.apply(lower('c5', 4, 3.5), 'gold')).outcome).toBe('written');
      await w.advance(120);
      expect(await writer.detectOverwrites([{ host: 'c5', rpUuid: rp.c5 as string, ratio: 3.5 }])).toEqual(
        [],
      );
    } finally {
      await w.control('POST', '/hosts/c5', { cpuAllocationRatio: null });
    }
  });

  it('after a crash between the intent and its outcome, its own write is not taken for an overwrite', async () => {
    await w.session.placement.setAllocationRatio(rp.c4 as string, 'VCPU', 3.25);
    await sink.record({
      changeId: 'y',
      host: 'c4',
      rpUuid: rp.c4 as string,
      aggregate: 'gold',
      from: 4,
      to: 3.25,
      reason: 'hot',
      state: 'intended',
      at: w.now().toISOString(),
    });
    expect(await writer.detectOverwrites([{ host: 'c4', rpUuid: rp.c4 as string, ratio: 3.25 }])).toEqual([]);
    expect((await writer.apply(lower('c4', 3.25, 4), 'gold')).outcome).toBe('written');
  });

  it('a prevention pass finds overwrites, decides and writes; a second pass right after waits; a dry run writes nothing', async () => {
    const snap = (await w.control('GET', '/snapshot')) as Snapshot;
    const states = hostRatioStates(snap.hosts, (h) => rp[h]).filter((h) =>
      ['c1', 'c2', 'c3'].includes(h.host),
    );
    // The simulator measures c1 at 10.36 busy cores of 16 (10 servers at 1 core, plus 0.2 + 1% of the host
    // itself): in the band. c2 is made hot; c3 is idle.
    expect(states.find((h) => h.host === 'c1')?.load?.utilization).toBeCloseTo(10.36 / 16, 3);
    const hosts = states.map((h) => (h.host === 'c2' ? { ...h, load: { utilization: 0.95 } } : h));
    const settings = defaultRatioSettings(4, 2);
    const pass = (dryRun: boolean) =>
      runPreventionPass({ aggregate: 'gold', hosts, settings, writer, sink, now: w.now, dryRun });

    const dry = await pass(true);
    expect(dry.decisions.map((d) => [d.host, d.code])).toEqual([
      ['c1', 'hold-band'],
      ['c2', 'lower-hot'],
      ['c3', 'hold-at-target'],
    ]);
    expect(dry.applied).toEqual([]);
    expect(await ratioOf('c2')).toBe(4);

    const first = await pass(false);
    expect(first.applied.map((a) => [a.host, a.outcome, a.to])).toEqual([['c2', 'written', 3.5]]);
    expect(await ratioOf('c2')).toBe(3.5);
    const second = await runPreventionPass({
      aggregate: 'gold',
      hosts: hosts.map((h) => (h.host === 'c2' ? { ...h, ratio: 3.5 } : h)),
      settings,
      writer,
      sink,
      now: w.now,
    });
    expect(second.decisions.find((d) => d.host === 'c2')?.code).toBe('hold-too-soon');
    expect(second.applied).toEqual([]);
    expect(second.overwrites).toEqual([]);
    await w.session.placement.setAllocationRatio(rp.c2 as string, 'VCPU', 4);
  });

  it('with 20% of Placement requests failing, no ratio is wrong and every write keeps its records', async () => {
    await w.control('POST', '/faults', { pattern: '^(GET|PUT) /placement/', kind: 'error', rate: 0.2 });
    const settings = { ...defaultRatioSettings(4, 2), minIntervalSeconds: 0, restoreAfterSeconds: 0 };
    const names = ['c2', 'c3', 'c4'];
    try {
      for (let round = 0; round < 6; round++) {
        // Hot for three rounds, then cool: each host goes down and back up.
        const hot = round < 3;
        const hosts = await Promise.all(
          names.map(async (h) => {
            const inv = (await w.session.placement.getInventories(rp[h] as string)).inventories.VCPU;
            return {
              host: h,
              rpUuid: rp[h] as string,
              ratio: inv?.allocationRatio ?? 0,
              total: 16,
              reserved: 0,
              used: 0,
              load: { utilization: hot ? 0.95 : 0.1 },
            };
          }),
        ).catch(() => undefined);
        if (!hosts) continue;
        const pass = await runPreventionPass({
          aggregate: 'gold',
          hosts,
          settings,
          writer,
          sink,
          now: w.now,
        }).catch(() => undefined);
        for (const a of pass?.applied ?? []) {
          const records = sink.records.filter((r) => r.host === a.host && r.to === a.to && r.from === a.from);
          expect(records.at(-1)?.state).toBe(
            a.outcome === 'written' || a.outcome === 'unchanged' ? 'written' : 'abandoned',
          );
        }
      }
    } finally {
      await w.control('DELETE', '/faults');
    }
    // Every intent has its outcome; Placement holds, per host, exactly the last ratio written.
    const byChange = new Map<string, string[]>();
    for (const r of sink.records) byChange.set(r.changeId, [...(byChange.get(r.changeId) ?? []), r.state]);
    for (const states of byChange.values())
      expect(states).toEqual(['intended', expect.stringMatching(/^(written|abandoned)$/)]);
    for (const h of names) {
      const lastWritten = sink.records.filter((r) => r.host === h && r.state === 'written').at(-1);
      const now = await ratioOf(h);
      expect(now).toBeGreaterThanOrEqual(2);
      expect(now).toBeLessThanOrEqual(4);
      if (lastWritten) expect(now).toBe(lastWritten.to);
      expect(
        await writer.detectOverwrites([{ host: h, rpUuid: rp[h] as string, ratio: now as number }]),
      ).toEqual([]);
    }
    expect(sink.records.filter((r) => r.state === 'written').length).toBeGreaterThan(6);
    for (const h of names) await w.session.placement.setAllocationRatio(rp[h] as string, 'VCPU', 4);
  });

  it('a PUT that happened but whose answer was lost is recorded abandoned and not taken for an overwrite later', async () => {
    const lossy: RatioWritePort = {
      kind: 'actuator',
      putInventory: async (...args) => {
        await w.actuator.putInventory(...args);
        throw new Error('connection reset after the request was sent');
      },
    };
    const r = await new RatioWriter({
      placement: w.session.placement,
      actuator: lossy,
      sink,
      now: w.now,
    }).apply(lower('c4', 4, 3.75), 'gold');
    expect(r.outcome).toBe('failed');
    expect(await ratioOf('c4')).toBe(3.75);
    expect(sink.records.at(-1)?.state).toBe('abandoned');
    expect(await writer.detectOverwrites([{ host: 'c4', rpUuid: rp.c4 as string, ratio: 3.75 }])).toEqual([]);
    expect((await writer.apply(lower('c4', 3.75, 4), 'gold')).outcome).toBe('written');
  });
});
