// Nova's versioned notifications from the lab's RabbitMQ: a live migration's end reaches the
// listener through Aicerine's own queue, and the listener's status never shows the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import type { CloudSession } from '../../src/cloud/session.js';
import type { NovaNotification } from '../../src/notifications/events.js';
import { type ListenerStatus, NotificationListener } from '../../src/notifications/listener.js';
import { adminSession, bootServers, cleanupLab, labEnv, uniqueName, waitFor } from './lab.js';

const P = uniqueName('notif');
let s: CloudSession;
let server: NovaServer;
let listener: NotificationListener;
const heard: NovaNotification[] = [];
const statuses: ListenerStatus[] = [];

beforeAll(async () => {
  s = await adminSession();
  listener = new NotificationListener({
    url: labEnv('OSLAB_RABBIT_URL'),
    queue: `aicerine.test.${P}`,
    queueExpiresMs: 120_000,
    onNotification: (n) => heard.push(n),
    onStatus: (st) => statuses.push(st),
  });
  await listener.start();
  [server] = (await bootServers(s, [{ name: `${P}-a`, host: 'compute1', flavor: 'm1.tiny' }])) as [
    NovaServer,
  ];
});

afterAll(async () => {
  await listener?.stop();
  if (s) await cleanupLab(s, P);
});

describe('versioned notifications from the lab', () => {
  it('connects to its own queue on the nova exchange, without showing the password', () => {
    expect(listener.connected).toBe(true);
    expect(statuses[0]).toMatchObject({ state: 'connected', queue: `aicerine.test.${P}` });
    expect(JSON.stringify(statuses)).not.toContain(':guest@');
  });

  it('hears the end of a live migration of the server it watches', async () => {
    await waitFor(`server ${server.id} settled`, async () => {
      const x = await s.nova.getServer(server.id);
      return x.status === 'ACTIVE' && x.taskState === null ? x : undefined;
    });
    await s.nova.liveMigrate(server.id, 'compute2');
    const end = await waitFor(
      'migration end notification',
      async () => heard.find((n) => n.serverId === server.id && n.kind === 'migration-ended'),
      90_000,
    );
    expect(end.eventType).toBe('instance.live_migration_post.end');
    const kinds = heard.filter((n) => n.serverId === server.id).map((n) => n.kind);
    expect(kinds).toContain('migration-progress');
    expect(listener.counts.parsed).toBeGreaterThan(0);
  });
});
