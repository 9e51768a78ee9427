// Nova's versioned notifications, read from the oslo.messaging envelope into the few facts the
// loop and the executor use: which server, which host, whether a live migration just ended or a
// service changed. Everything else in a notification is ignored, and nothing from its request
// context (users, projects, tokens) is kept. Pure.
import { z } from 'zod';

export const NOTIFICATION_KINDS = [
  /** A live migration reached an end: post (success), rollback (failure) or abort. */
  'migration-ended',
  /** A live migration moved on (pre, force-complete, post started...): worth a poll. */
  'migration-progress',
  /** A server was created, deleted or changed state somewhere: the cloud's picture changed. */
  'instance-changed',
  /** A nova-compute service was enabled, disabled, went up or down. */
  'service-changed',
  'other',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface NovaNotification {
  kind: NotificationKind;
  eventType: string;
  /** "nova-compute:compute3". */
  publisher: string;
  /** ISO time the notification was emitted (Nova's clock). */
  timestamp: string;
  serverId: string | null;
  /** The server's host as the notification says (the source until a migration's post step). */
  host: string | null;
  state: string | null;
  taskState: string | null;
  /** For service notifications: the service's host, status and state. */
  service: { host: string; disabled: boolean; forcedDown: boolean; up: boolean | null } | null;
}

const envelope = z.object({ 'oslo.version': z.string(), 'oslo.message': z.string() });
const message = z.object({
  event_type: z.string(),
  publisher_id: z.string().default(''),
  timestamp: z.string().default(''),
  payload: z
    .object({
      'nova_object.name': z.string().optional(),
      'nova_object.data': z.record(z.string(), z.unknown()).optional(),
    })
    .passthrough()
    .default({}),
});

const MIGRATION_ENDS = new Set([
  'instance.live_migration_post.end',
  'instance.live_migration_rollback.end',
  'instance.live_migration_abort.end',
  'instance.live_migration_rollback_dest.end',
]);

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function kindOf(eventType: string): NotificationKind {
  if (MIGRATION_ENDS.has(eventType)) return 'migration-ended';
  if (eventType.startsWith('instance.live_migration')) return 'migration-progress';
  if (eventType.startsWith('service.')) return 'service-changed';
  if (
    eventType === 'instance.update' ||
    eventType.startsWith('instance.create') ||
    eventType.startsWith('instance.delete') ||
    eventType.startsWith('instance.evacuate') ||
    eventType.startsWith('instance.resize') ||
    eventType.startsWith('instance.power_')
  )
    return 'instance-changed';
  return 'other';
}

/** Oslo timestamps are "2026-11-30 21:00:31.672394" in UTC; made ISO so they compare as strings. */
function isoTime(t: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?Z?$/.exec(t);
  if (!m) return t;
  return `${m[1]}T${m[2]}${(m[3] ?? '').slice(0, 4)}Z`;
}

/**
 * Reads one AMQP message body. Returns null for a body that is not a Nova notification (another
 * service on the exchange, a malformed message): a broker is shared ground, so a bad message is
 * skipped, never fatal.
 */
export function parseNotification(body: Buffer | string): NovaNotification | null {
  let doc: unknown;
  try {
    doc = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return null;
  }
  const env = envelope.safeParse(doc);
  if (env.success) {
    try {
      doc = JSON.parse(env.data['oslo.message']);
    } catch {
      return null;
    }
  }
  const msg = message.safeParse(doc);
  if (!msg.success) return null;
  const { event_type: eventType, publisher_id: publisher, timestamp, payload } = msg.data;
  const data = payload['nova_object.data'] ?? {};
  const kind = kindOf(eventType);
  const isService = kind === 'service-changed';
  return {
    kind,
    eventType,
    publisher,
    timestamp: isoTime(timestamp),
    serverId: isService ? null : str(data.uuid),
    host: str(data.host),
    state: isService ? null : str(data.state),
    taskState: isService ? null : str(data.task_state),
    service:
      isService && str(data.host) !== null
        ? {
            host: str(data.host)!,
            disabled: data.disabled === true,
            forcedDown: data.forced_down === true,
            up: typeof data.last_seen_up === 'string' ? true : null,
          }
        : null,
  };
}
