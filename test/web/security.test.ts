// The dashboard and the API as a browser meets them: the dashboard works under its
// Content-Security-Policy (no inline script in the build, no violation while it runs), every answer
// carries the policy headers, and a page on another origin cannot change anything through the
// visitor's browser: its blind POSTs are refused and its JSON ones never get past the preflight.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultWebRoot } from '../../src/api/routes/web.js';
import { browserSession, NO_BROWSER, startRig, until } from './rig.js';

if (NO_BROWSER !== null) console.warn(`dashboard security tests skipped: ${NO_BROWSER}`);

const WAIT = 60_000;

/** A page on another origin (another port of this machine) with the given script. */
async function otherSite(script: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><body><p>elsewhere</p><script>${script}</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(NO_BROWSER !== null)(
  'the dashboard and the API in a browser, as an attacker sees them',
  () => {
    const session = browserSession(WAIT);

    it('builds no inline script or style into the page', async () => {
      const root = defaultWebRoot();
      expect(root).not.toBeNull();
      const html = await readFile(join(root!, 'index.html'), 'utf8');
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag).toMatch(/\bsrc="/);
      expect(html).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
      expect(html).not.toMatch(/<style\b|\sstyle="|\son[a-z]+="/i);
    });

    it('runs under its Content-Security-Policy, and every answer carries the policy headers', async () => {
      const rig = await startRig({ auth: false });
      session.closeAfter(rig);
      const page = await session.page();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const res = await page.goto(`${rig.url}/`);
      const headers = res!.headers();
      expect(headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(headers['referrer-policy']).toBe('no-referrer');
      expect(headers['x-content-type-options']).toBe('nosniff');
      expect(headers['x-frame-options']).toBe('DENY');
      expect(headers['access-control-allow-origin']).toBeUndefined();
      // The dashboard renders, draws its charts and moves between pages.
      await page.locator('section[data-aggregate="gold"] g.heat-row[data-host="g1"]').waitFor();
      for (const name of ['Plans', 'Executions', 'What-if', 'Tasks', 'Maintenance', 'Overview']) {
        await page.getByRole('link', { name, exact: true }).click();
        await page.locator('main').first().waitFor();
      }
      await page.locator('section[data-aggregate="gold"] g.heat-row').first().waitFor();
      // An API answer carries them too.
      const api = await fetch(`${rig.url}/v1/aggregates`);
      expect(api.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(api.headers.get('x-content-type-options')).toBe('nosniff');
      expect(violations).toEqual([]);
    }, 240_000);

    it('refuses what a page on another site sends through the browser: nothing paused, approved or audited', async () => {
      const rig = await startRig({ auth: false });
      session.closeAfter(rig);
      const plan = await until(
        'a plan for gold',
        async () => (await rig.store.plans.list({ aggregate: 'gold' })).items[0],
      );
      const target = rig.url;
      const site = await otherSite(`
      const api = ${JSON.stringify(target)};
      const tries = [
        fetch(api + '/v1/pause', { method: 'POST', mode: 'no-cors' }),
        fetch(api + '/v1/plans/${plan.id}/approve', { method: 'POST', mode: 'no-cors' }),
        fetch(api + '/v1/pause', { method: 'POST', mode: 'no-cors', body: '{"reason":"x"}' }),
        fetch(api + '/v1/pause', {
          method: 'POST', mode: 'no-cors',
          headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1',
        }),
        // A JSON body needs a preflight the API never answers with CORS headers.
        fetch(api + '/v1/pause', {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
        }),
        fetch(api + '/v1/pause', { method: 'POST', headers: { 'x-aicerine-client': 'x' } }),
        // A read the page cannot see either.
        fetch(api + '/v1/plans'),
      ];
      Promise.allSettled(tries).then((r) => {
        window.outcomes = r.map((x) => x.status === 'fulfilled' ? 'opaque:' + x.value.type : 'refused');
      });
    `);
      session.closeAfter(site);
      const page = await session.page();
      await page.goto(site.url);
      const outcomes = await page.waitForFunction(
        () => (window as unknown as { outcomes?: string[] }).outcomes,
      );
      const seen = (await outcomes.jsonValue()) as string[];
      // The page learns nothing (Cross-Origin-Resource-Policy hides even the opaque answers).
      expect(seen).toEqual(Array.from({ length: 7 }, () => 'refused'));
      // The blind ones did reach the API, and were refused there: 403 without a body, 415 with one
      // that is not JSON. The others never left the browser (no CORS answer to their preflight).
      const metrics = await (await fetch(`${rig.url}/metrics`)).text();
      const count = (route: string, status: number) =>
        metrics
          .split('\n')
          .filter((l) =>
            l.startsWith(
              `aicerine_api_request_duration_seconds_count{method="POST",route="${route}",status="${status}"}`,
            ),
          )
          .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
      expect(count('/v1/pause', 403)).toBe(1);
      expect(count('/v1/plans/:id/approve', 403)).toBe(1);
      expect(count('/v1/pause', 415)).toBe(2);
      expect(count('/v1/pause', 200)).toBe(0);
      expect(await rig.store.pauses.list()).toEqual([]);
      expect(['proposed', 'superseded', 'expired']).toContain((await rig.store.plans.get(plan.id))?.status);
      expect((await rig.store.audit.list({ actor: 'operator:local' })).items).toEqual([]);
    }, 240_000);
  },
);
