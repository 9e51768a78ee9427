// Live migration through the client against the lab's fake hypervisors: to a named host,
// held and aborted, held and force-completed, injected failure.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { adminSession, bootServers, cleanupLab, setControl, uniqueName, waitFor } from './lab.js';

const P = uniqueName('mig');
let s: CloudSession;
let a: NovaServer;
let b: NovaServer;
let c: NovaServer;
let d: NovaServer;

beforeAll(async () => {
  s = await adminSession();
  [a, b, c, d] = (
    await bootServers(s, [
      { name: `${P}-a`, host: 'compute1', flavor: 'm1.tiny' },
      { name: `${P}-b`, host: 'compute1', flavor: 'm1.tiny' },
      { name: `${P}-c`, host: 'compute2', flavor: 'm1.tiny' },
      { name: `${P}-d`, host: 'compute2', flavor: 'm1.tiny' },
    ])
  ).sort((x, y) => x.name.localeCompare(y.name)) as [NovaServer, NovaServer, NovaServer, NovaServer];
});

afterEach(async () => {
  await setControl('live_migration_seconds', undefined);
  await setControl('live_migration_fail', undefined);
});

afterAll(async () => {
  if (s) await cleanupLab(s, P);
});

/** Waits until the server is ACTIVE with no task: the next migration can start. */
async function settled(id: string): Promise<NovaServer> {
  return waitFor(`server ${id} settled`, async () => {
    const x = await s.nova.getServer(id);
    return x.status === 'ACTIVE' && x.taskState === null ? x : undefined;
  });
}

describe('live migration against the lab', () => {
  it('moves a server to a named host and the migration shows in os-migrations', async () => {
    const since = new Date();
    await s.nova.liveMigrate(a.id, 'compute3');
    const seen: string[] = [];
    const m = await s.nova.followLiveMigration(a.id, {
      since,
      pollMs: 500,
      timeoutMs: 90_000,
      onStatus: (x) => seen.push(x.status),
    });
    expect(m.status).toBe('completed');
    expect(m).toMatchObject({
      sourceCompute: 'compute1',
      destCompute: 'compute3',
      migrationType: 'live-migration',
    });
    expect(seen.at(-1)).toBe('completed');
    expect((await settled(a.id)).host).toBe('compute3');
    const listed = await s.nova.listMigrations({ migrationType: 'live-migration', serverId: a.id });
    expect(listed.map((x) => x.id)).toContain(m.id);
  });

  it('aborts a held migration and the server stays on its source', async () => {
    await setControl('live_migration_seconds', '60');
    const since = new Date();
    await s.nova.liveMigrate(b.id, 'compute3');
    const running = await waitFor('a running migration', async () => {
      const ms = await s.nova.listServerMigrations(b.id);
      return ms.find((x) => x.status === 'running');
    });
    expect(running).toMatchObject({ sourceCompute: 'compute1', destCompute: 'compute3' });
    await s.nova.abortMigration(b.id, running.id);
    const m = await s.nova.followLiveMigration(b.id, { since, pollMs: 500, timeoutMs: 90_000 });
    expect(m.status).toBe('cancelled');
    expect((await settled(b.id)).host).toBe('compute1');
  });

  it('force-completes a held migration', async () => {
    await setControl('live_migration_seconds', '60');
    const since = new Date();
    await s.nova.liveMigrate(c.id, 'compute4');
    const running = await waitFor('a running migration', async () => {
      const ms = await s.nova.listServerMigrations(c.id);
      return ms.find((x) => x.status === 'running');
    });
    await s.nova.forceCompleteMigration(c.id, running.id);
    const m = await s.nova.followLiveMigration(c.id, { since, pollMs: 500, timeoutMs: 90_000 });
    expect(m.status).toBe('completed');
    expect((await settled(c.id)).host).toBe('compute4');
  });

  it('reports an injected failure as failed, the server staying on its source', async () => {
    await setControl('live_migration_fail', `${d.id}\n`);
    const since = new Date();
    await s.nova.liveMigrate(d.id, 'compute3');
    const m = await s.nova.followLiveMigration(d.id, { since, pollMs: 500, timeoutMs: 90_000 });
    expect(m.status).toBe('failed');
    expect((await settled(d.id)).host).toBe('compute2');
  });

  it('refuses a destination the scheduler rejects with a clear 400, never forcing it', async () => {
    const err = await s.nova.liveMigrate(a.id, 'compute-nowhere').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toMatch(
      /compute: POST \/v2\.1\/servers\/.*\/action failed \((400|404)\)/,
    );
  });
});
