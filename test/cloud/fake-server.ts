// A tiny HTTP server for unit tests: routes answer with recorded (or made-up) OpenStack
// responses, and every request is kept so tests can assert what the client sent.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeReply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

/** 'hangup' destroys the socket without an answer. */
export type Handler = (req: FakeRequest) => FakeReply | 'hangup' | Promise<FakeReply | 'hangup'>;

export interface FakeServer {
  url: string;
  requests: FakeRequest[];
  /** Adds or replaces a route ("GET /v2.1/os-services"). */
  route(key: string, handler: Handler | FakeReply): void;
  close(): Promise<void>;
}

export async function startFake(routes: Record<string, Handler | FakeReply> = {}): Promise<FakeServer> {
  const table = new Map<string, Handler>();
  const route = (key: string, h: Handler | FakeReply) =>
    table.set(key, typeof h === 'function' ? h : () => h);
  for (const [k, h] of Object.entries(routes)) route(k, h);
  const requests: FakeRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const fr: FakeRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body,
      };
      requests.push(fr);
      const handler = table.get(`${fr.method} ${fr.path}`);
      const reply = handler
        ? await handler(fr)
        : { status: 404, body: { itemNotFound: { code: 404, message: `no route ${fr.method} ${fr.path}` } } };
      if (reply === 'hangup') {
        req.socket.destroy();
        return;
      }
      const send = () => {
        res.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json', ...reply.headers });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    route,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A response recorded from the lab (test/cloud/fixtures/NAME.json). */
export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as T;
}
