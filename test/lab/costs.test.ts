// Learned costs read from the lab's real os-migrations: two live migrations of servers of two
// flavors, read back through the reader's calls and turned into samples (Nova's zone-less
// timestamps with microseconds, the join to the flavor's RAM, the aggregate).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { readMigrationHistory } from '../../src/costs/read-history.js';
import { adminSession, bootServers, cleanupLab, uniqueName, waitFor } from './lab.js';

const P = uniqueName('cost');
let s: CloudSession;
let servers: NovaServer[];

beforeAll(async () => {
  s = await adminSession();
  servers = await bootServers(s, [
    { name: `${P}-s`, host: 'compute1', flavor: 'm1.small' },
    { name: `${P}-m`, host: 'compute1', flavor: 'm1.medium' },
  ]);
});

afterAll(async () => {
  if (s) await cleanupLab(s, P);
});

describe('cost samples from the lab', () => {
  it('turns completed live migrations into samples with the flavor RAM and a duration', async () => {
    const started = Date.now();
    for (const x of servers) {
      await s.nova.liveMigrate(x.id, 'compute2');
      await s.nova.followLiveMigration(x.id, { since: new Date(started), pollMs: 500, timeoutMs: 120_000 });
      await waitFor(`server ${x.id} settled`, async () => {
        const y = await s.nova.getServer(x.id);
        return y.status === 'ACTIVE' && y.taskState === null ? y : undefined;
      });
    }
    const history = await readMigrationHistory(s.nova, { days: 1 });
    const ours = history.samples.filter((x) => servers.some((v) => v.id === x.serverId));
    expect(ours.map((x) => [x.ramMB, x.outcome, x.source]).sort()).toEqual([
      [2048, 'completed', 'nova-history'],
      [4096, 'completed', 'nova-history'],
    ]);
    const elapsed = (Date.now() - started) / 1000;
    for (const x of ours) {
      expect(x.seconds).toBeGreaterThanOrEqual(0);
      expect(x.seconds).toBeLessThanOrEqual(elapsed + 1);
      expect(Date.parse(x.endedAt)).toBeGreaterThanOrEqual(started - 2000);
    }
  });
});
