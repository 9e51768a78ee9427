import { describe, expect, it } from 'vitest';
import type { NovaMigration, NovaServer } from '../../src/cloud/openstack/nova.js';
import type { ResourceProvider } from '../../src/cloud/openstack/placement.js';
import {
  applyMigrationChanges,
  applyServerChanges,
  novaInstant,
  providersToRead,
  pruneMigrations,
} from '../../src/cloud/record-state.js';

const srv = (id: string, extra: Partial<NovaServer> = {}): NovaServer => ({
  id,
  name: id,
  projectId: 'p',
  host: 'c1',
  hypervisorHostname: 'c1',
  instanceName: `instance-${id}`,
  availabilityZone: 'nova',
  status: 'ACTIVE',
  taskState: null,
  vmState: 'active',
  flavor: { id: 'f', name: 'f', vcpus: 1, ramMB: 512, diskGB: 1, extraSpecs: {} },
  metadata: {},
  imageId: null,
  volumeIds: [],
  fault: null,
  ...extra,
});

const mig = (id: number, status: string, updatedAt: string | null): NovaMigration => ({
  id,
  uuid: `m${id}`,
  serverId: 's1',
  migrationType: 'live-migration',
  status,
  sourceCompute: 'c1',
  destCompute: 'c2',
  createdAt: '2026-11-30T10:00:00.000000',
  updatedAt,
});

describe('applyServerChanges', () => {
  it('adds, updates, deletes and tells unchanged re-listings apart', () => {
    const servers = new Map([
      ['a', srv('a')],
      ['b', srv('b')],
      ['c', srv('c')],
    ]);
    const out = applyServerChanges(servers, [
      srv('a'),
      srv('b', { host: 'c2' }),
      srv('c', { status: 'DELETED' }),
      srv('d'),
      srv('gone-before-we-knew', { status: 'DELETED' }),
    ]);
    expect(out).toEqual({ added: ['d'], updated: ['b'], deleted: ['c'], unchanged: 1 });
    expect([...servers.keys()].sort()).toEqual(['a', 'b', 'd']);
    expect(servers.get('b')?.host).toBe('c2');
  });
});

describe('applyMigrationChanges', () => {
  it('merges fresh and changed records and reports a fresh one that vanished unseen', () => {
    const known = new Map([
      [1, mig(1, 'accepted', null)],
      [2, mig(2, 'accepted', null)],
      [3, mig(3, 'running', '2026-11-30T10:00:05.000000')],
    ]);
    const out = applyMigrationChanges(
      known,
      [mig(4, 'accepted', null)],
      [mig(1, 'queued', '2026-11-30T10:00:01')],
    );
    expect(out.changed.sort()).toEqual([1, 4]);
    // 2 had no updated_at, is no longer accepted, and changes-since did not show it.
    expect(out.lost).toEqual([2]);
    expect(known.get(1)?.status).toBe('queued');
  });
});

describe('pruneMigrations', () => {
  it('drops final records older than the window, keeps the rest', () => {
    const m = new Map([
      [1, mig(1, 'completed', '2026-10-01T00:00:00.000000')],
      [2, mig(2, 'completed', '2026-11-29T00:00:00.000000')],
      [3, mig(3, 'running', '2026-10-01T00:00:00.000000')],
      [4, mig(4, 'accepted', null)],
    ]);
    expect(pruneMigrations(m, Date.parse('2026-11-01T00:00:00Z'))).toBe(1);
    expect([...m.keys()]).toEqual([2, 3, 4]);
  });
});

describe('providersToRead', () => {
  const rp = (uuid: string, generation: number): ResourceProvider => ({
    uuid,
    name: uuid,
    generation,
    parentProviderUuid: null,
    rootProviderUuid: uuid,
  });
  it('picks wanted providers whose generation moved or that were never read', () => {
    const read = new Map([
      ['a', 3],
      ['b', 5],
    ]);
    expect(
      providersToRead([rp('a', 3), rp('b', 6), rp('c', 1), rp('x', 9)], read, new Set(['a', 'b', 'c'])),
    ).toEqual(['b', 'c']);
  });
});

describe('novaInstant', () => {
  it('writes whole seconds in UTC', () => {
    expect(novaInstant(Date.parse('2026-11-30T10:00:05.987Z'))).toBe('2026-11-30T10:00:05Z');
  });
});
