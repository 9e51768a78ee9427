// Starting a simulator for a test and talking to it with plain fetch.
import type { Snapshot } from '../../../src/model/snapshot.js';
import { type SimServerHandle, startSimServer } from '../../../src/sim/http/server.js';
import type { SimOptions } from '../../../src/sim/model.js';
import { frozenCloud } from '../fixtures.js';

export async function startFrozen(snap: Snapshot, options: SimOptions = {}): Promise<SimServerHandle> {
  return startSimServer({ cloud: frozenCloud(snap, options), password: 'pw' });
}

export async function adminToken(sim: SimServerHandle): Promise<string> {
  const res = await fetch(`${sim.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'admin', domain: { name: 'Default' }, password: 'pw' } },
        },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`token: ${res.status}`);
  return res.headers.get('x-subject-token') as string;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

export async function call(
  url: string,
  token: string | null,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (token) headers['X-Auth-Token'] = token;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}
