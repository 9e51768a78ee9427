import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type ListenerStatus, NotificationListener, redactUrl } from '../../src/notifications/listener.js';

describe('notification listener without a broker', () => {
  it('redacts credentials from the broker address', () => {
    expect(redactUrl('amqp://nova:s3cret@10.0.0.5:5672/')).toBe('amqp://***:***@10.0.0.5:5672/');
    expect(redactUrl('rabbit://guest:guest@127.0.0.1:5672/')).toBe('amqp://***:***@127.0.0.1:5672/');
    expect(redactUrl('amqp://127.0.0.1/')).toBe('amqp://127.0.0.1/');
    expect(redactUrl('::not a url')).toBe('<unparseable broker url>');
  });

  it('a broker that refuses connections is retried with backoff, never shows the password, and stop ends it', async () => {
    // A port that accepts and closes at once: the AMQP handshake fails every time.
    const srv = createServer((sock) => sock.destroy());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const statuses: ListenerStatus[] = [];
    const l = new NotificationListener({
      url: `amqp://aicerine:hunter2@127.0.0.1:${port}/`,
      retryMinMs: 20,
      retryMaxMs: 40,
      onNotification: () => undefined,
      onStatus: (s) => statuses.push(s),
    });
    await l.start();
    const deadline = Date.now() + 5000;
    while (statuses.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await l.stop();
    srv.close();
    const down = statuses.filter((s) => s.state === 'disconnected');
    expect(down.length).toBeGreaterThanOrEqual(2);
    for (const s of down) if (s.state === 'disconnected') expect(s.retryInMs).toBeLessThanOrEqual(40);
    expect(JSON.stringify(statuses)).not.toContain('hunter2');
    expect(statuses.at(-1)).toEqual({ state: 'stopped', endpoint: `amqp://***:***@127.0.0.1:${port}/` });
    expect(l.connected).toBe(false);
    const after = statuses.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(statuses.length).toBe(after);
  });
});
