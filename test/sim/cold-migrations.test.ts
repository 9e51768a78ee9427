import { describe, expect, it } from 'vitest';
import { confirmResize, startColdMigration } from '../../src/sim/cold-migrations.js';
import { NO_VALID_HOST_PLACEMENT, startLiveMigration } from '../../src/sim/migrations.js';
import { SimError } from '../../src/sim/model.js';
import { frozenCloud, host, server, snapshot } from './fixtures.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const world = () =>
  snapshot(
    [host('c1'), host('c2'), host('c3', { service: { state: 'up', status: 'disabled', forcedDown: false } })],
    [server(1, 'c1'), server(2, 'c1', 8192, { status: 'SHUTOFF' })],
  );

describe('cold migration (migrate + confirmResize)', () => {
  it('goes through RESIZE to VERIFY_RESIZE on the destination, both hosts claimed until the confirm', () => {
    const cloud = frozenCloud(world());
    const s = cloud.requireServer(id(1));
    const m = startColdMigration(cloud, { serverUuid: id(1), host: 'c2' });
    expect([m.type, m.status, s.status, s.taskState]).toEqual([
      'migration',
      'pre-migrating',
      'RESIZE',
      'resize_prep',
    ]);
    // The migration record holds the source claim, the instance the destination's.
    expect([...cloud.placement.allocationsOf(m.uuid).keys()]).toEqual([cloud.requireHost('c1').nodeUuid]);
    expect([...cloud.placement.allocationsOf(id(1)).keys()]).toEqual([cloud.requireHost('c2').nodeUuid]);
    cloud.advance(1);
    expect([m.status, s.taskState, s.powerState]).toEqual(['migrating', 'resize_migrating', 4]);
    // A resize in progress refuses a live migration.
    expect(() => startLiveMigration(cloud, { serverUuid: id(1), host: 'c2' })).toThrow(SimError);
    cloud.advance(3600);
    expect([m.status, s.status, s.vmState, s.taskState, s.host, s.powerState]).toEqual([
      'finished',
      'VERIFY_RESIZE',
      'resized',
      null,
      'c2',
      1,
    ]);
    expect(cloud.placement.allocationsOf(m.uuid).size).toBe(1);
    confirmResize(cloud, id(1));
    expect(m.status).toBe('confirming');
    cloud.advance(2);
    expect([m.status, s.status, s.vmState]).toEqual(['confirmed', 'ACTIVE', 'active']);
    expect(cloud.placement.allocationsOf(m.uuid).size).toBe(0);
    expect(() => confirmResize(cloud, id(1))).toThrow(/Cannot 'confirmResize'.*vm_state active/);
  });

  it('brings a stopped server back stopped', () => {
    const cloud = frozenCloud(world());
    startColdMigration(cloud, { serverUuid: id(2), host: null });
    cloud.advance(3600);
    const s = cloud.requireServer(id(2));
    expect([s.status, s.host, s.powerState]).toEqual(['VERIFY_RESIZE', 'c2', 4]);
    confirmResize(cloud, id(2));
    cloud.advance(2);
    expect([s.status, s.vmState, s.host]).toEqual(['SHUTOFF', 'stopped', 'c2']);
  });

  it('refuses synchronously, changing nothing: a disabled destination, an unknown host, a busy server', () => {
    const cloud = frozenCloud(world());
    expect(() => startColdMigration(cloud, { serverUuid: id(1), host: 'c3' })).toThrow(
      NO_VALID_HOST_PLACEMENT,
    );
    expect(() => startColdMigration(cloud, { serverUuid: id(1), host: 'nope' })).toThrow(
      'Compute host nope could not be found.',
    );
    expect(cloud.migrations).toHaveLength(0);
    expect(cloud.requireServer(id(1)).status).toBe('ACTIVE');
    startColdMigration(cloud, { serverUuid: id(1), host: 'c2' });
    expect(() => startColdMigration(cloud, { serverUuid: id(1), host: 'c2' })).toThrow(
      /task_state resize_prep/,
    );
  });
});
