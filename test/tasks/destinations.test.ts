// The evacuation's destination choice: the most room left on the server's tightest resource
// wins (then the most free memory), a last-resort host only when no other fits, server groups
// respected.
import { describe, expect, it } from 'vitest';
import type { HostRoomView } from '../../src/executor/ports.js';
import { DestinationChooser } from '../../src/tasks/kinds/destinations.js';

function room(freeMB: number): HostRoomView {
  return {
    inventories: {
      VCPU: { total: 64, reserved: 0, allocationRatio: 1 },
      MEMORY_MB: { total: freeMB, reserved: 0, allocationRatio: 1 },
    },
    usages: {},
  };
}
const need = { VCPU: 2, MEMORY_MB: 8192 };

describe('DestinationChooser', () => {
  it('takes the host with the most free memory, a last-resort host only when no other fits', () => {
    const chooser = new DestinationChooser(
      [
        { host: 'big-pending', room: room(65536) },
        { host: 'done-a', room: room(20000) },
        { host: 'done-b', room: room(24000) },
      ],
      [],
      new Map(),
      new Set(['big-pending']),
    );
    // done-b (24000 free) first, then done-a (20000 > 24000 - 8192), then done-b again.
    expect(chooser.choose('s1', need, null)).toEqual({ host: 'done-b' });
    expect(chooser.choose('s2', need, null)).toEqual({ host: 'done-a' });
    expect(chooser.choose('s3', need, null)).toEqual({ host: 'done-b' });
    // done-a has 11808 left, done-b 7616: done-a takes one more, then only the last resort fits.
    expect(chooser.choose('s4', need, null)).toEqual({ host: 'done-a' });
    expect(chooser.choose('s5', need, null)).toEqual({ host: 'big-pending' });
  });

  it('without last resorts, the most free memory wins', () => {
    const chooser = new DestinationChooser(
      [
        { host: 'big', room: room(65536) },
        { host: 'small', room: room(20000) },
      ],
      [],
      new Map(),
    );
    expect(chooser.choose('s1', need, null)).toEqual({ host: 'big' });
  });

  it("weighs the server's tightest resource: a host short of VCPUs loses to one with less memory but room", () => {
    const room2 = (vcpuTotal: number, vcpuUsed: number, memTotal: number, memUsed: number): HostRoomView => ({
      inventories: {
        VCPU: { total: vcpuTotal, reserved: 0, allocationRatio: 1 },
        MEMORY_MB: { total: memTotal, reserved: 0, allocationRatio: 1 },
      },
      usages: { VCPU: vcpuUsed, MEMORY_MB: memUsed },
    });
    const chooser = new DestinationChooser(
      [
        // Most free memory (64 GiB), but 4 of 16 VCPUs left.
        { host: 'memory-rich', room: room2(16, 12, 131072, 65536) },
        // 32 GiB free, 32 VCPUs free.
        { host: 'cpu-rich', room: room2(32, 0, 65536, 32768) },
      ],
      [],
      new Map(),
    );
    expect(chooser.choose('s1', { VCPU: 2, MEMORY_MB: 4096 }, null)).toEqual({ host: 'cpu-rich' });
  });

  it('keeps anti-affinity members apart even when only last resorts are left', () => {
    const chooser = new DestinationChooser(
      [
        { host: 'p1', room: room(65536) },
        { host: 'p2', room: room(65536) },
      ],
      [{ id: 'g', name: 'db', policy: 'anti-affinity', members: ['a', 'b'], rules: {}, projectId: null }],
      new Map([['b', 'p1']]),
      new Set(['p1', 'p2']),
    );
    expect(chooser.choose('a', need, null)).toEqual({ host: 'p2' });
  });
});
