// The dashboard (React, built by Vite into dist/web) served by the service. Every built file is
// read once at start and served from memory under its exact path, and the dashboard's own pages
// (WEB_PAGES) answer its index.html, so no request path ever reaches the file system: nothing to
// traverse, and nothing under /v1 or /metrics is shadowed (those paths are never registered here).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ZodApp } from '../context.js';
import { WEB_PAGES } from '../web-pages.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** Vite names bundled assets `<name>-<hash>.<ext>` under assets/: their content never changes. */
const HASHED_ASSET = /^\/assets\/.+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

interface WebFile {
  body: Buffer;
  type: string;
  cache: string;
}

/** dist/web of the package this module belongs to (found from src/ and from dist/ alike). */
export function defaultWebRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'web');
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** Whether root holds a built dashboard (its index.html). */
export function hasWebBuild(root: string | null): root is string {
  return root !== null && existsSync(join(root, 'index.html'));
}

function readTree(root: string): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) {
        walk(full);
        continue;
      }
      const url = `/${relative(root, full).split(sep).join('/')}`;
      files.set(url, {
        body: readFileSync(full),
        type: CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
        cache: HASHED_ASSET.test(url) ? IMMUTABLE : REVALIDATE,
      });
    }
  };
  walk(root);
  return files;
}

/** Serves the built dashboard at /: its files by exact path, its pages as index.html. */
export function registerWeb(app: ZodApp, root: string): void {
  const files = readTree(root);
  const index = files.get('/index.html');
  if (index === undefined) throw new Error(`${root}/index.html: missing: run npm run build`);
  const route = (url: string, file: WebFile) =>
    app.get(url, { schema: { hide: true } }, async (_req, reply) =>
      reply
        .header('content-type', file.type)
        .header('cache-control', file.cache)
        .header('x-content-type-options', 'nosniff')
        .send(file.body),
    );
  for (const [url, file] of files) {
    // A route pattern character in a name would make it a pattern; the API's paths stay the API's.
    if (/[:*?#\s]/.test(url) || url.startsWith('/v1/') || url === '/metrics') continue;
    route(url, file);
  }
  for (const page of WEB_PAGES) route(page, index);
}
