// The dashboard's static route: built files by exact path with their content types and caching,
// the dashboard's pages as index.html, and nothing else: no traversal, no shadowing of /v1 or
// /metrics, the API's 404 for everything unknown.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodApp } from '../../src/api/context.js';
import { StoreServiceControl } from '../../src/api/control.js';
import { ApiMetrics } from '../../src/api/metrics.js';
import { defaultWebRoot } from '../../src/api/routes/web.js';
import { buildApi } from '../../src/api/server.js';
import { WEB_PAGES } from '../../src/api/web-pages.js';
import { openStore, type Store } from '../../src/store/index.js';
import { NOW, testConfig } from './harness.js';

let dir: string;
let root: string;
let store: Store;
let app: ZodApp;

const INDEX = '<!doctype html><title>dash</title><div id="root"></div>';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aic-web-'));
  root = join(dir, 'web');
  await mkdir(join(root, 'assets'), { recursive: true });
  await mkdir(join(root, 'v1'), { recursive: true });
  await writeFile(join(root, 'index.html'), INDEX);
  await writeFile(join(root, 'assets', 'index-DF6gXtIU.js'), 'console.log(1)');
  await writeFile(join(root, 'assets', 'index-BRyv1J6U.css'), 'body{}');
  await writeFile(join(root, 'robots.txt'), 'User-agent: *');
  await writeFile(join(root, '.env'), 'SECRET=1');
  await writeFile(join(root, 'v1', 'health'), 'shadow');
  await writeFile(join(dir, 'secret.txt'), 'outside the root');
  store = await openStore({ kind: 'sqlite', path: ':memory:' });
  app = await buildApi({
    store,
    config: await testConfig(),
    control: new StoreServiceControl(store, () => NOW),
    auth: { kind: 'none' },
    metrics: new ApiMetrics(),
    now: () => NOW,
    webRoot: root,
  });
});

afterAll(async () => {
  await app.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (url: string) => app.inject({ method: 'GET', url });

describe('the dashboard route', () => {
  it('serves index.html at / and at every dashboard page, revalidated each time', async () => {
    for (const url of [
      '/',
      '/plans',
      '/plans/42',
      '/aggregates/gold%20east',
      '/executions/abc-1',
      '/what-if',
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.body).toBe(INDEX);
    }
    // Every page the dashboard routes to is one the service answers.
    for (const page of WEB_PAGES) {
      const r = await get(page.replace(/:\w+/g, 'x'));
      expect(r.statusCode, page).toBe(200);
    }
  });

  it('serves hashed assets with their content type, cached for good', async () => {
    const js = await get('/assets/index-DF6gXtIU.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    expect(js.body).toBe('console.log(1)');
    const css = await get('/assets/index-BRyv1J6U.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const txt = await get('/robots.txt');
    expect(txt.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(txt.headers['cache-control']).toBe('no-cache');
  });

  it('answers the API 404 for anything else: traversal, dotfiles, unknown files and pages', async () => {
    for (const url of [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/.env',
      '/assets/missing-AAAAAAAA.js',
      '/no-such-page',
      '/plans/1/2',
      '/index.htm',
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(404);
      expect(r.headers['content-type'], url).toMatch(/^application\/json/);
      expect(r.json().error.code, url).toBe('not-found');
      expect(r.body).not.toContain('outside the root');
      expect(r.body).not.toContain('SECRET');
    }
  });

  it('never shadows the API or the metrics', async () => {
    const health = await get('/v1/health');
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });
    const unknown = await get('/v1/no-such-endpoint');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not-found');
    const metrics = await get('/metrics');
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('aicerine_api_request_duration_seconds');
    const doc = (await get('/v1/openapi.json')).json();
    expect(Object.keys(doc.paths).filter((p: string) => !p.startsWith('/v1/'))).toEqual([]);
  });

  it('is absent without a build, and finds the package build by default', async () => {
    const bare = await buildApi({
      store,
      config: await testConfig(),
      control: new StoreServiceControl(store, () => NOW),
      auth: { kind: 'none' },
      webRoot: null,
    });
    expect((await bare.inject({ method: 'GET', url: '/' })).statusCode).toBe(404);
    await bare.close();
    expect(defaultWebRoot()).toBe(join(process.cwd(), 'dist', 'web'));
  });
});
