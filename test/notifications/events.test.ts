import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseNotification } from '../../src/notifications/events.js';

// Notifications captured from the lab's Nova (Zed) during a live migration and a boot; the
// request context was stripped before they were saved.
const captured = JSON.parse(
  readFileSync(new URL('../fixtures/notifications/lab-zed.json', import.meta.url), 'utf8'),
) as { routingKey: string; body: unknown }[];
const byType = new Map(
  captured.map((c) => {
    const inner = JSON.parse((c.body as { 'oslo.message': string })['oslo.message']) as {
      event_type: string;
    };
    return [inner.event_type, JSON.stringify(c.body)];
  }),
);

describe('Nova versioned notifications', () => {
  it('reads a live migration end from the oslo envelope', () => {
    const n = parseNotification(byType.get('instance.live_migration_post.end')!);
    expect(n).toEqual({
      kind: 'migration-ended',
      eventType: 'instance.live_migration_post.end',
      publisher: 'nova-compute:compute4',
      timestamp: '2026-11-30T21:00:31.672Z',
      serverId: '40326d69-90a3-4206-ae50-a7a51da0e7c1',
      host: 'compute4',
      state: 'active',
      taskState: 'migrating',
      service: null,
    });
  });

  it.each([
    ['instance.live_migration_rollback.end', 'migration-ended'],
    ['instance.live_migration_pre.start', 'migration-progress'],
    ['instance.live_migration_force_complete.end', 'migration-progress'],
    ['instance.live_migration_post_dest.end', 'migration-progress'],
    ['instance.update', 'instance-changed'],
    ['instance.create.end', 'instance-changed'],
    ['scheduler.select_destinations.end', 'other'],
  ])('%s is %s', (type, kind) => {
    expect(parseNotification(byType.get(type)!)?.kind).toBe(kind);
  });

  it('keeps nothing of the request context', () => {
    for (const body of byType.values()) {
      const n = parseNotification(Buffer.from(body));
      expect(JSON.stringify(n)).not.toMatch(/_context|action_initiator|tenant_id|user_id/);
    }
  });

  it('reads a service update without the envelope', () => {
    const n = parseNotification(
      JSON.stringify({
        event_type: 'service.update',
        publisher_id: 'nova-compute:compute2',
        timestamp: '2026-11-30 21:05:00.1',
        payload: {
          'nova_object.name': 'ServiceStatusPayload',
          'nova_object.data': {
            host: 'compute2',
            binary: 'nova-compute',
            disabled: true,
            disabled_reason: 'EVAC',
            forced_down: false,
            last_seen_up: '2026-11-30T21:04:58Z',
          },
        },
      }),
    );
    expect(n).toMatchObject({
      kind: 'service-changed',
      serverId: null,
      host: 'compute2',
      service: { host: 'compute2', disabled: true, forcedDown: false, up: true },
      timestamp: '2026-11-30T21:05:00.1Z',
    });
  });

  it.each([
    ['not JSON', 'garbage{'],
    ['an envelope with a broken message', JSON.stringify({ 'oslo.version': '2.0', 'oslo.message': '{' })],
    ['no event type', JSON.stringify({ payload: {} })],
    ['a JSON array', '[1,2]'],
  ])('skips %s', (_name, body) => {
    expect(parseNotification(body)).toBeNull();
  });
});
