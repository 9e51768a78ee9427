// Names are data: every route of the OpenAPI document, called with the names of Object.prototype's
// members in each path parameter and in the body fields that name an aggregate, host, task or plan,
// on the whole service (loop, task worker, maintenance) over the simulator. None may get a 5xx or
// reach something that exists; an unknown name is a 404 (or a 400 where the field's format cannot
// hold it), and nothing is paused, audited, tasked or started.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Rig, startRig } from '../web/rig.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

let r: Rig;
beforeAll(async () => {
  r = await startRig({ auth: false });
}, 60_000);
afterAll(async () => {
  await r?.close();
});

interface Answer {
  status: number;
  error?: { code: string; field?: string; message: string };
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${r.url}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...(method === 'GET' ? {} : { 'content-type': 'application/json' }),
    },
    ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
  });
  const text = await res.text();
  let parsed: { error?: Answer['error'] } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = {};
  }
  return { status: res.status, ...(parsed.error !== undefined ? { error: parsed.error } : {}) };
}

/** What an operator action would have left behind. */
async function written(): Promise<string> {
  const audit = (await r.store.audit.list({}, { limit: 1000 })).items.filter((e) =>
    e.actor.startsWith('operator:'),
  );
  return JSON.stringify([
    audit,
    await r.store.pauses.list(),
    (await r.service.tasks.service.list({}, { limit: 1000 })).items,
    (await r.service.tasks.maintenance.list({}, { limit: 1000 })).items,
  ]);
}

describe('prototype names on every route', () => {
  it('are unknown names: 404 (or 400 on a field whose format excludes them), never a 5xx or an effect', async () => {
    const doc = (await (await fetch(`${r.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const before = await written();
    const seen: string[] = [];
    for (const [template, ops] of Object.entries(doc.paths)) {
      const params = template.match(/\{[^}]+\}/g) ?? [];
      for (const method of Object.keys(ops).map((m) => m.toUpperCase())) {
        // An action without a name in its path (pause everything, record a snapshot) is not about names.
        if (method !== 'GET' && params.length === 0) continue;
        for (const name of NAMES) {
          const path = params.reduce((p, param) => p.replace(param, encodeURIComponent(name)), template);
          const a = await call(method, path);
          const label = `${method} ${path}: ${a.status} ${a.error?.message ?? ''}`;
          seen.push(label);
          expect(a.status, label).toBeLessThan(500);
          if (params.length > 0) {
            // The name stands for something that does not exist, or cannot be written that way.
            if (a.status === 400) expect(a.error?.field, label).toMatch(/^params\./);
            else expect(a.status, label).toBe(404);
          }
        }
      }
    }
    // The fields of bodies that name things.
    const bodies: [string, (name: string) => unknown, string][] = [
      ['/v1/what-if', (n) => ({ aggregate: n }), 'body.aggregate'],
      ['/v1/what-if', (n) => ({ aggregate: 'gold', drainHosts: [n] }), 'body.drainHosts[0]'],
      ['/v1/what-if', (n) => ({ aggregate: 'gold', addHosts: { like: n, count: 1 } }), 'body.addHosts.like'],
      ['/v1/maintenance', (n) => ({ aggregate: n }), 'body.aggregate'],
      ['/v1/maintenance', (n) => ({ aggregate: 'gold', hosts: [n] }), 'body.hosts[0]'],
      ['/v1/tasks', (n) => ({ kind: n }), 'body.kind'],
      ['/v1/tasks', (n) => ({ kind: 'evacuate-compute', args: { host: n } }), 'body.args.host'],
      ['/v1/tasks', (n) => ({ kind: 'validate-compute', args: { host: n } }), 'body.args.host'],
    ];
    for (const [path, body, field] of bodies)
      for (const name of NAMES) {
        const a = await call('POST', path, body(name));
        const label = `POST ${path} ${JSON.stringify(body(name))}: ${a.status} ${a.error?.message ?? ''}`;
        expect(a.status, label).toBeGreaterThanOrEqual(400);
        expect(a.status, label).toBeLessThan(500);
        expect(a.error?.field, label).toBe(field);
      }
    // Filters by name find nothing rather than something.
    for (const name of NAMES)
      for (const path of [
        `/v1/plans?aggregate=${name}`,
        `/v1/data-health?aggregate=${name}`,
        `/v1/tasks?host=c1&kind=${name}`,
        `/v1/maintenance?aggregate=${name}`,
        `/v1/aggregates?cursor=${name}`,
      ]) {
        const a = await call('GET', path);
        expect(a.status, `${path}: ${a.error?.message}`).toBeLessThan(500);
      }
    expect(seen.length).toBeGreaterThan(150);
    expect(await written()).toBe(before);
  }, 120_000);
});
