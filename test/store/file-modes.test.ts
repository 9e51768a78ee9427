// The store, its WAL and shared-memory files, recorded snapshots and their folders hold every
// tenant's server names: they are created for the service user only (0600 files, 0700 folders),
// whatever the umask lets through.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSnapshot } from '../../src/formats/snapshot-file.js';
import { openStore } from '../../src/store/index.js';
import { NOW, startApi } from '../api/harness.js';
import { host, snapshot } from '../sim/fixtures.js';

let dir: string;
let umask: number;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aic-modes-'));
  // The usual umask, which would leave files world-readable.
  umask = process.umask(0o022);
});
afterEach(async () => {
  process.umask(umask);
  await rm(dir, { recursive: true, force: true });
});

const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);

describe('file modes', () => {
  it('creates the SQLite store, its WAL and shm files and its folder for the user only', async () => {
    const path = join(dir, 'state', 'aicerine.db');
    const store = await openStore({ kind: 'sqlite', path });
    try {
      await store.audit.record({
        actor: 'test',
        action: 'pause',
        target: 'service',
        detail: {},
        at: NOW.toISOString(),
      });
      const files = (await readdir(join(dir, 'state'))).sort();
      expect(files).toEqual(['aicerine.db', 'aicerine.db-shm', 'aicerine.db-wal']);
      expect(await mode(join(dir, 'state'))).toBe('700');
      for (const f of files) expect(await mode(join(dir, 'state', f)), f).toBe('600');
    } finally {
      await store.close();
    }
  });

  it('records snapshots through the API into a folder and files for the user only', async () => {
    const h = await startApi({ kind: 'none' });
    const snapshotDir = join(dir, 'state', 'snapshots');
    const { buildApi } = await import('../../src/api/server.js');
    const app = await buildApi({
      store: h.store,
      config: h.config,
      control: h.control,
      auth: { kind: 'none' },
      snapshots: {
        latest: () => null,
        record: async () => snapshot([host('c1')], [], { takenAt: NOW.toISOString() }),
      },
      snapshotDir,
    });
    try {
      const res = await app.inject({ method: 'POST', url: '/v1/snapshots', payload: {} });
      expect(res.statusCode).toBe(201);
      expect(await mode(join(dir, 'state'))).toBe('700');
      expect(await mode(snapshotDir)).toBe('700');
      const [file] = await readdir(snapshotDir);
      expect(await mode(join(snapshotDir, file!))).toBe('600');
    } finally {
      await app.close();
      await h.close();
    }
  });

  it('writes snapshot files for the user only', async () => {
    const path = join(dir, 'cloud.json.gz');
    await writeSnapshot(path, snapshot([host('c1')], []));
    expect(await mode(path)).toBe('600');
  });
});
