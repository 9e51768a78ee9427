// Consumes Nova's versioned notifications from RabbitMQ to wake the loop and the executor sooner.
// Optional and never load-bearing: the periodic reconcile does the same job, slower, so a broker
// that is down or slow costs latency, not correctness. Aicerine binds a queue of its own to
// Nova's exchange rather than consuming Nova's shared notification queues, which other tools may
// read; the queue expires when nobody consumes it, so a stopped Aicerine leaves nothing growing.
import { type Channel, type ChannelModel, type ConsumeMessage, connect } from 'amqplib';
import { type NovaNotification, parseNotification } from './events.js';

export interface NotificationListenerOptions {
  /** amqp://user:password@host:port/vhost — the transport_url of Nova, rabbit:// accepted too. */
  url: string;
  /** Nova's control_exchange. */
  exchange?: string;
  /** Nova's [notifications] versioned_notifications_topics (first one). */
  topic?: string;
  /** Name of Aicerine's own queue; one per replica, so each replica hears every event. */
  queue?: string;
  /** The queue disappears after this long without a consumer. */
  queueExpiresMs?: number;
  /** At most this many messages wait in the queue; older ones are dropped first. */
  maxQueued?: number;
  /** Reconnect backoff bounds. */
  retryMinMs?: number;
  retryMaxMs?: number;
  onNotification: (n: NovaNotification) => void;
  /** Connection state changes and problems, secret-free. */
  onStatus?: (status: ListenerStatus) => void;
}

export type ListenerStatus =
  | { state: 'connected'; endpoint: string; queue: string }
  | { state: 'disconnected'; endpoint: string; error: string; retryInMs: number }
  | { state: 'stopped'; endpoint: string };

/** The broker address without its credentials, for logs and status. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url.replace(/^rabbit:/, 'amqp:'));
    u.username = u.username ? '***' : '';
    u.password = '';
    return u.toString().replace('***@', '***:***@');
  } catch {
    return '<unparseable broker url>';
  }
}

export class NotificationListener {
  private model: ChannelModel | null = null;
  private channel: Channel | null = null;
  private stopped = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  readonly endpoint: string;
  /** Counts for /metrics and tests. */
  readonly counts = { received: 0, parsed: 0, skipped: 0, reconnects: 0 };

  constructor(private readonly o: NotificationListenerOptions) {
    this.endpoint = redactUrl(o.url);
  }

  /** Connects (retrying in the background on failure); resolves after the first attempt. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connectOnce();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const model = this.model;
    this.model = null;
    this.channel = null;
    if (model) await model.close().catch(() => undefined);
    this.o.onStatus?.({ state: 'stopped', endpoint: this.endpoint });
  }

  get connected(): boolean {
    return this.channel !== null;
  }

  private async connectOnce(): Promise<void> {
    if (this.stopped) return;
    const exchange = this.o.exchange ?? 'nova';
    const topic = this.o.topic ?? 'versioned_notifications';
    const queue = this.o.queue ?? 'aicerine.notifications';
    try {
      const model = await connect(this.o.url.replace(/^rabbit:/, 'amqp:'), { timeout: 10_000 });
      model.on('error', () => undefined);
      model.on('close', (err?: Error) => this.lost(err?.message ?? 'connection closed'));
      const ch = await model.createChannel();
      ch.on('error', () => undefined);
      // oslo.messaging declares Nova's exchange (topic, not durable by default); ours only
      // checks it, so a different durability setting there cannot make us fail.
      await ch.checkExchange(exchange);
      await ch.assertQueue(queue, {
        durable: false,
        autoDelete: false,
        arguments: {
          'x-expires': this.o.queueExpiresMs ?? 3_600_000,
          'x-max-length': this.o.maxQueued ?? 10_000,
        },
      });
      await ch.bindQueue(queue, exchange, `${topic}.*`);
      await ch.prefetch(100);
      await ch.consume(queue, (m) => this.handle(ch, m));
      this.model = model;
      this.channel = ch;
      this.attempt = 0;
      this.o.onStatus?.({ state: 'connected', endpoint: this.endpoint, queue });
    } catch (e) {
      this.lost(e instanceof Error ? e.message : String(e));
    }
  }

  private handle(ch: Channel, m: ConsumeMessage | null): void {
    if (m === null) {
      this.lost('the broker cancelled the consumer');
      return;
    }
    this.counts.received++;
    const n = parseNotification(m.content);
    ch.ack(m);
    if (n === null) {
      this.counts.skipped++;
      return;
    }
    this.counts.parsed++;
    this.o.onNotification(n);
  }

  private lost(error: string): void {
    this.channel = null;
    const model = this.model;
    this.model = null;
    if (model) model.close().catch(() => undefined);
    if (this.stopped || this.timer) return;
    const min = this.o.retryMinMs ?? 1000;
    const max = this.o.retryMaxMs ?? 60_000;
    const wait = Math.min(max, min * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt++;
    this.counts.reconnects++;
    // Error texts from amqplib can quote the URL; keep only what cannot carry the password.
    const safe = error.split(this.o.url).join(this.endpoint);
    this.o.onStatus?.({
      state: 'disconnected',
      endpoint: this.endpoint,
      error: safe,
      retryInMs: Math.round(wait),
    });
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connectOnce();
    }, wait);
    this.timer.unref();
  }
}
