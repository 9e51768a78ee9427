import { createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ListenerStatus, NotificationListener, redactUrl } from '../../src/notifications/listener.js';

describe('notification listener without a broker', () => {
  it('redacts credentials from the broker address', () => {
    expect(redactUrl('amqp://nova:s3cret@10.0.0.5:5672/')).toBe('amqp://***:***@10.0.0.5:5672/');
    expect(redactUrl('rabbit://guest:guest@127.0.0.1:5672/')).toBe('amqp://***:***@127.0.0.1:5672/');
    expect(redactUrl('amqp://127.0.0.1/')).toBe('amqp://127.0.0.1/');
    expect(redactUrl('::not a url')).toBe('<unparseable broker url>');
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('a broker that refuses connections is retried with backoff, never shows the password, and stop ends it', async () => {
    // Kept before the fake timers: the bound on the wait below is a real one.
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    // The listener's retry timers are fake: each retry runs when the test says so, and after
    // stop() the test can see that none is left to run. Sockets, and amqplib's own socket
    // timeout, stay real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // A port that accepts and closes at once: the AMQP handshake fails every time.
    const srv = createServer((sock) => sock.destroy());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const statuses: ListenerStatus[] = [];
    let arrived: (() => void) | null = null;
    /** Resolves when the listener reports its nth status (fails the test after 5 s). */
    const nth = (n: number) =>
      new Promise<void>((resolve, reject) => {
        if (statuses.length >= n) return resolve();
        const timer = realSetTimeout(
          () => reject(new Error(`status ${n} did not come in 5 s; got ${JSON.stringify(statuses)}`)),
          5000,
        );
        arrived = () => {
          if (statuses.length < n) return;
          realClearTimeout(timer);
          arrived = null;
          resolve();
        };
      });
    const l = new NotificationListener({
      url: `amqp://aicerine:hunter2@127.0.0.1:${port}/`,
      retryMinMs: 20,
      retryMaxMs: 40,
      onNotification: () => undefined,
      onStatus: (s) => {
        statuses.push(s);
        arrived?.();
      },
    });
    await l.start();
    for (let n = 1; n <= 3; n++) {
      await nth(n);
      // Each failure schedules one retry; run it now rather than after its backoff.
      if (n < 3) {
        expect(vi.getTimerCount(), `the retry after failure ${n}`).toBe(1);
        vi.runOnlyPendingTimers();
      }
    }
    await l.stop();
    srv.close();
    const down = statuses.filter((s) => s.state === 'disconnected');
    expect(down.length).toBeGreaterThanOrEqual(2);
    for (const s of down) if (s.state === 'disconnected') expect(s.retryInMs).toBeLessThanOrEqual(40);
    expect(JSON.stringify(statuses)).not.toContain('hunter2');
    expect(statuses.at(-1)).toEqual({ state: 'stopped', endpoint: `amqp://***:***@127.0.0.1:${port}/` });
    expect(l.connected).toBe(false);
    // Nothing more happens: stop() cleared the pending retry (no attempt was in flight, the
    // third status having been a failure), so no timer is left to start one; running any
    // timer that would exist changes nothing.
    const after = statuses.length;
    expect(vi.getTimerCount()).toBe(0);
    vi.runAllTimers();
    expect(statuses.length).toBe(after);
  });
});
