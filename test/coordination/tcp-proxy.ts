// A TCP proxy on loopback in front of etcd that a test can cut (every connection dropped, new
// ones refused) and restore: a replica cut off from etcd while etcd itself runs on for the others.
// Or freeze (connections stay open, nothing flows either way; calls time out) and thaw: an etcd
// that stops answering one replica for a while, then answers at once, with no reconnection.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  endpoint: string;
  cut(): void;
  restore(): void;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function cuttableProxy(target: string): Promise<CuttableProxy> {
  const url = new URL(target);
  const sockets = new Set<Socket>();
  let open = true;
  let frozen = false;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(url.port), url.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
    if (frozen) {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    freeze() {
      frozen = true;
      for (const s of sockets) s.pause();
    },
    thaw() {
      frozen = false;
      for (const s of sockets) s.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        open = false;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
