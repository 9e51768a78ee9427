// Request context and response helpers shared by the simulated services.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenInfo } from '../keystone-state.js';

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Path as the service sees it (after the service's URL prefix), without the query. */
  path: string;
  query: URLSearchParams;
  body: unknown;
  /** http://127.0.0.1:PORT */
  origin: string;
  requestId: string;
  token: TokenInfo | null;
  /** Response headers every answer of this service carries (microversion, request id). */
  headers: Record<string, string>;
}

export type Handler = (ctx: Ctx, params: string[]) => void | Promise<void>;

export interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

export function route(method: string, path: string, handler: Handler): Route {
  // "{x}" matches one path segment.
  const re = new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[a-z_]+\}/g, '([^/]+)')}/?$`);
  return { method, pattern: re, handler };
}

export interface Match {
  route: Route;
  params: string[];
}

/** The route for a method and path; `methodMismatch` when the path exists under another method. */
export function findRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): Match | 'methodMismatch' | null {
  let pathSeen = false;
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    pathSeen = true;
    if (r.method === method) return { route: r, params: m.slice(1).map((p) => decodeURIComponent(p)) };
  }
  return pathSeen ? 'methodMismatch' : null;
}

export function sendJson(ctx: Ctx, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  const headers: Record<string, string | number> = { ...ctx.headers, ...extra };
  if (body !== undefined) headers['Content-Type'] = extra['Content-Type'] ?? 'application/json';
  headers['Content-Length'] = Buffer.byteLength(text);
  ctx.res.writeHead(status, headers);
  ctx.res.end(text);
}

export function sendEmpty(ctx: Ctx, status: number, extra: Record<string, string> = {}): void {
  const headers: Record<string, string | number> = { ...ctx.headers, ...extra, 'Content-Length': 0 };
  if (status !== 204) headers['Content-Type'] = 'text/html; charset=UTF-8';
  ctx.res.writeHead(status, headers);
  ctx.res.end();
}

export async function readBody(req: IncomingMessage, limit = 1 << 20): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) throw new RangeError(`request body over ${limit} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The fault names of the wsgi layer Nova and Cinder share, by status (others: computeFault). */
const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** A Nova- or Cinder-style fault body: `{"itemNotFound": {"code": 404, "message": ...}}`. */
export function wsgiFault(code: number, message: string): Record<string, { code: number; message: string }> {
  return { [FAULT_NAMES[code] ?? 'computeFault']: { code, message } };
}
