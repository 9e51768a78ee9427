// The drain check a campaign runs before it takes a host out (pure): the rest of the aggregate
// must take the host's servers under capacity, hard server groups and zones, with the servers the
// evacuation would move (live, or cold when they may stop) and without those it cannot move.
import { describe, expect, it } from 'vitest';
import { drainVerdict } from '../../src/maintenance/trial.js';
import type { Server } from '../../src/model/snapshot.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { host, server, snapshot } from '../sim/fixtures.js';

const KEY = 'aicerine:may-stop';
const gold = (name: string, az = 'nova') => host(name, { availabilityZone: az });
const pinned = (s: Server, metadata: Record<string, string> = {}): Server => ({
  ...s,
  flavor: { ...s.flavor, name: 'pinned', extraSpecs: { 'hw:cpu_policy': 'dedicated' } },
  metadata,
});

describe('drainVerdict', () => {
  it('places what fits, and says which server does not and why', () => {
    const snap = snapshot(
      [gold('a'), gold('b'), gold('c')],
      [server(1, 'a', 40960), server(2, 'b', 32768), server(3, 'c', 32768)],
    );
    const ok = drainVerdict(snap, DEFAULT_POLICY, 'gold', ['b'], KEY);
    expect(ok).toMatchObject({ ok: true, reasons: [], wontMove: [] });
    expect(ok.placements).toEqual([{ server: server(2, 'b').id, from: 'b', to: 'c' }]);
    const two = drainVerdict(snap, DEFAULT_POLICY, 'gold', ['b', 'c'], KEY);
    expect(two.ok).toBe(false);
    expect(two.reasons.join('\n')).toMatch(/cannot be drained: no host can take vm-[23] .*capacity/);
  });

  it('keeps anti-affinity members apart: a group on every host leaves no place for the drained one', () => {
    const members = [server(1, 'a'), server(2, 'b'), server(3, 'c')];
    const snap = snapshot([gold('a'), gold('b'), gold('c')], members, {
      serverGroups: [{ id: 'g1', name: 'db', policy: 'anti-affinity', members: members.map((m) => m.id) }],
    });
    const v = drainVerdict(snap, DEFAULT_POLICY, 'gold', ['a'], KEY);
    expect(v.ok).toBe(false);
    expect(v.reasons).toHaveLength(1);
    expect(v.reasons[0]).toMatch(/^a cannot be drained: no host can take vm-1 .*group/);
  });

  it('keeps a server in its zone', () => {
    const snap = snapshot([gold('a', 'az1'), gold('b', 'az2'), gold('c', 'az2')], [server(1, 'a')]);
    const v = drainVerdict(snap, DEFAULT_POLICY, 'gold', ['a'], KEY);
    expect(v.ok).toBe(false);
    expect(v.reasons[0]).toMatch(/zone/);
    expect(drainVerdict(snap, DEFAULT_POLICY, 'gold', ['b'], KEY).ok).toBe(true);
  });

  it('counts what the evacuation moves (stopped, may stop, local disks) and leaves out what it cannot', () => {
    const snap = snapshot(
      [
        gold('a'),
        host('b', {
          inventory: { ...gold('b').inventory, MEMORY_MB: { total: 20480, reserved: 0, allocationRatio: 1 } },
        }),
      ],
      [
        { ...server(1, 'a'), status: 'SHUTOFF' },
        pinned(server(2, 'a'), { [KEY]: 'true' }),
        { ...server(3, 'a', 2048), sharedStorage: false },
        pinned(server(4, 'a', 60000)),
        { ...server(5, 'a', 60000), status: 'ERROR' },
      ],
    );
    const v = drainVerdict(snap, DEFAULT_POLICY, 'gold', ['a'], KEY);
    expect(v.ok).toBe(true);
    expect(v.placements.map((p) => p.server).sort()).toEqual([
      server(1, 'a').id,
      server(2, 'a').id,
      server(3, 'a').id,
    ]);
    expect(v.wontMove).toEqual([
      {
        server: server(4, 'a').id,
        name: 'vm-4',
        why: expect.stringMatching(/^cannot live-migrate \(pinned CPUs.*may not be stopped/),
      },
      { server: server(5, 'a').id, name: 'vm-5', why: 'status ERROR: Nova moves it neither live nor cold' },
    ]);
    // The stopped and may-stop servers need room like the others: b has room for two of 8 GiB only.
    const fuller = { ...snap, servers: [...snap.servers, { ...server(6, 'a'), status: 'SHUTOFF' }] };
    expect(drainVerdict(fuller, DEFAULT_POLICY, 'gold', ['a'], KEY).ok).toBe(false);
  });

  it('refuses an unknown aggregate or a host outside it', () => {
    const snap = snapshot([gold('a'), gold('b'), host('x', { aggregates: ['silver'] })], []);
    expect(() => drainVerdict(snap, DEFAULT_POLICY, 'gold', ['x'], KEY)).toThrow(
      /hosts\[0\].*not in aggregate gold/,
    );
    expect(() => drainVerdict(snap, DEFAULT_POLICY, 'nope', ['a'], KEY)).toThrow(/aggregate/);
  });
});
