// The dashboard in real headless Chromium against the simulator and the running service: the
// hot host stands out, an operator approves the assisted plan, its migrations complete on the
// live timeline and the heatmap evens out, all without a reload; and with Keystone, a project
// member is told why they see nothing, a cloud-wide reader sees no approve button where an operator
// does.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startDemo } from '../../src/service/demo.js';
import { addCloudReader, browserSession, NO_BROWSER, PASSWORD, type Rig, startRig } from './rig.js';

if (NO_BROWSER !== null) console.warn(`dashboard tests skipped: ${NO_BROWSER}`);

/** Long enough for a loaded 2-core machine; every wait ends as soon as its condition holds. */
const WAIT = 60_000;

describe.skipIf(NO_BROWSER !== null)('the dashboard in headless Chromium', () => {
  const session = browserSession(WAIT);
  let rig: Rig | undefined;
  let page: Page;

  async function open(auth: boolean): Promise<Rig> {
    rig = await startRig({ auth });
    session.closeAfter(rig);
    page = await session.page();
    await page.goto(`${rig.url}/`);
    return rig;
  }

  const gold = () => page.locator('section[data-aggregate="gold"]');
  const hostRow = (name: string) => gold().locator(`g.heat-row[data-host="${name}"]`);

  it('finds the hot host, approves the assisted plan, watches it run and the heatmap even out', async () => {
    const r = await open(false);
    await expect.poll(() => page.locator('header.top').textContent()).toContain('no-auth mode');
    // A marker in the page's memory: still there at the end means nothing reloaded the page.
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
    });

    // The hot host stands out: its row says hot, its name is text, the others are calm.
    await hostRow('g1').and(page.locator('[data-hot="true"]')).waitFor();
    await expect.poll(() => hostRow('g1').getAttribute('aria-label')).toMatch(/^g1: cpu \d+%.*, hot$/);
    expect(await gold().getByText('g1', { exact: true }).count()).toBe(1);
    const hot = await gold()
      .locator('g.heat-row[data-hot="true"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-host')));
    expect(hot).toEqual(['g1']);
    await expect.poll(() => gold().textContent()).toContain('assisted');
    await expect.poll(() => gold().textContent()).toContain('window open');

    // The assisted aggregate's plan waits for a decision.
    const planLink = gold().locator('.latest-plan a');
    await planLink.waitFor();
    await planLink.click();
    await page.waitForURL(/\/plans\/\d+$/);
    const status = page.getByTestId('plan-status');
    await expect.poll(() => status.textContent()).toBe('proposed');
    const moves = await page.locator('tr[data-step]').count();
    expect(moves).toBeGreaterThan(0);
    expect(await page.locator('tr[data-step]').first().textContent()).toContain('g1 →');
    await page.getByLabel('Comment', { exact: true }).fill('g1 is hot, go');
    await page.getByRole('button', { name: 'Approve plan' }).click();
    await expect.poll(() => status.textContent(), { timeout: WAIT }).toMatch(/^(approved|executed)$/);
    await expect
      .poll(() => page.locator('tr[data-step]').first().textContent())
      .toContain('approved by local');

    // Its migrations on the live timeline, to the end.
    await page.getByRole('link', { name: 'Executions', exact: true }).click();
    const execution = page.locator('section.execution[aria-label^="execution"]').first();
    await execution.waitFor();
    await page.locator('section.execution[data-state="finished"]').first().waitFor();
    const finished = page.locator('section.execution[data-state="finished"]').first();
    expect(await finished.textContent()).toContain('gold');
    const states = await finished
      .locator('g[data-step]')
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')));
    expect(states.length).toBe(moves);
    expect(states.every((s) => s === 'completed')).toBe(true);
    expect(await finished.locator('.progress').textContent()).toContain(
      `${moves} of ${moves} moves done: ${moves} completed`,
    );
    const executed = await r.store.executions.list({ aggregate: 'gold' });
    expect(executed.items[0]?.state).toBe('finished');

    // Back on the overview, g1 is no longer hot.
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await hostRow('g1').and(page.locator('[data-hot="false"]')).waitFor();
    expect(await gold().locator('g.heat-row[data-hot="true"]').count()).toBe(0);
    expect(r.sim.cloud.migrations.length).toBe(moves);
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
  }, 240_000);

  it('aborts a running execution from its timeline: the held migration is cancelled in Nova', async () => {
    const r = await open(false);
    // Live migrations hold in the simulator (an hour of virtual time) until aborted.
    r.sim.cloud.timing.holdSeconds = 3600;
    const planLink = gold().locator('.latest-plan a');
    await planLink.waitFor();
    await planLink.click();
    await page.getByRole('button', { name: 'Approve plan' }).click();
    await page.getByRole('link', { name: 'Executions', exact: true }).click();
    const running = page.locator('section.execution[data-state="running"]').first();
    await running.locator('g[data-state="migrating"]').first().waitFor();
    await running.getByLabel('abort comment').fill('stop, maintenance overrun');
    await running.getByRole('button', { name: 'Abort' }).click();
    const aborted = page.locator('section.execution[data-state="aborted"]').first();
    await aborted.waitFor();
    const states = await aborted
      .locator('g[data-step]')
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')));
    expect(states).not.toContain('completed');
    expect(states).not.toContain('migrating');
    expect(states).toContain('failed');
    expect(await aborted.getByRole('button', { name: 'Abort' }).count()).toBe(0);
    expect(await aborted.locator('.details').textContent()).toMatch(/abort/i);
    const audit = await r.store.audit.list({ action: 'execution.abort' });
    expect(audit.items[0]?.actor).toBe('operator:local');
    expect(r.sim.cloud.migrations.every((m) => m.status !== 'completed')).toBe(true);
  }, 240_000);

  it("serves the demo's dashboard: three aggregates, one per mode, the assisted one's hot host marked", async () => {
    const demo = await startDemo({ port: 0, speed: 60, warn: () => {} });
    try {
      await demo.cycle(0);
      page = await session.page();
      await page.goto(`${demo.url}/`);
      for (const [name, mode] of [
        ['agg-1', 'active'],
        ['agg-2', 'assisted'],
        ['agg-3', 'observe'],
      ]) {
        const card = page.locator(`section[data-aggregate="${name}"]`);
        await card.locator('g.heat-row').first().waitFor();
        expect(await card.locator('.badge.mode').textContent()).toBe(mode);
      }
      const agg2 = page.locator('section[data-aggregate="agg-2"]');
      await agg2.locator(`g.heat-row[data-host="${demo.hotHost}"][data-hot="true"]`).waitFor();
      await expect.poll(() => agg2.locator('.latest-plan').textContent()).toMatch(/\d+ moves, proposed/);
      // The demo's cloud has a working-week shape: its load profiles give each host a forecast
      // peak beside its current load, and the aggregate says how wrong the forecast has been.
      await expect
        .poll(() => agg2.getByTestId('forecast').textContent())
        .toMatch(/Forecast from load profiles: (\d+) of \1 servers profiled/);
      expect(await agg2.getByTestId('forecast-error').textContent()).toMatch(
        /error not measured yet|error \d+% over \d+ host-hours/,
      );
      const peaks = agg2.getByRole('table', { name: 'forecast peaks of agg-2' });
      const hotRow = peaks.locator(`tr[data-host="${demo.hotHost}"]`);
      await hotRow.waitFor();
      expect(await peaks.locator('tbody tr').count()).toBeGreaterThan(1);
      expect(await hotRow.getByTestId('peak-at').textContent()).toMatch(
        /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d:00/,
      );
      expect(await hotRow.getByTestId('peak-cpu').textContent()).toMatch(/^\d+%$/);
      // Beside it, the host's current load: the hot host is at or above the hot line now.
      const now = await hotRow.getByTestId('now-cpu').textContent();
      expect(now).toMatch(/^\d+%$/);
      expect(Number.parseInt(now!, 10)).toBeGreaterThanOrEqual(85);
      // Its task worker runs: the Tasks page can request them.
      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await expect.poll(() => page.getByTestId('worker-status').textContent()).toContain('worker running');
      await page.getByRole('form', { name: 'request a task' }).waitFor();
    } finally {
      await demo.stop();
    }
  }, 240_000);

  it('with Keystone: logs in, a reader sees no approve button, an operator does', async () => {
    await open(true);
    const login = page.getByRole('form', { name: 'log in' });
    await login.waitFor();
    const logIn = async (username: string, password: string, project: string) => {
      await page.getByLabel('User name', { exact: true }).fill(username);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByLabel('Project', { exact: true }).fill(project);
      await page.getByRole('button', { name: 'Log in' }).click();
    };

    await logIn('demo', 'wrong', 'demo');
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('Keystone refused these credentials');
    expect(await page.evaluate(() => sessionStorage.getItem('aicerine.token'))).toBeNull();

    // A project's member and reader (demo on project demo) sees none of the cloud, and is told why.
    await logIn('demo', PASSWORD, 'demo');
    const noAccess = page.getByRole('alert', { name: 'no access' });
    await noAccess.waitFor();
    await expect.poll(() => noAccess.textContent()).toContain('logged in as demo in project demo');
    expect(await noAccess.textContent()).toContain('with the roles member, reader');
    expect(await noAccess.textContent()).toContain('admin, aicerine-reader, aicerine-operator');
    expect(await page.locator('header.top').count()).toBe(0);
    await noAccess.getByRole('button', { name: 'Log out' }).click();
    await login.waitFor();

    // A cloud-wide reader (aicerine-reader on project admin) reads everything and decides nothing.
    addCloudReader(rig!.sim);
    await logIn('noc', PASSWORD, 'admin');
    await expect.poll(() => page.locator('header.top .who').textContent()).toBe('noc @ admin');
    expect(await page.evaluate(() => sessionStorage.getItem('aicerine.token'))).toMatch(/.{16,}/);
    const planLink = gold().locator('.latest-plan a');
    await planLink.waitFor();
    await hostRow('g1').waitFor();
    await planLink.click();
    await page.locator('tr[data-step]').first().waitFor();
    expect(await page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Reject/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Pause all' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Log out' }).click();
    await login.waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('aicerine.token'))).toBeNull();

    // An operator (admin) gets the buttons on the same page.
    await logIn('admin', PASSWORD, 'admin');
    await page.getByRole('button', { name: 'Approve plan' }).waitFor();
    expect(await page.getByRole('button', { name: 'Reject plan' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Pause all' }).waitFor();
    expect(await page.locator('header.top .who').textContent()).toBe('admin @ admin');

    // One move decided on its own, with a comment; then the global pause and its resume.
    const first = page.locator('tr[data-step]').first();
    await first.getByRole('textbox').fill('this one only');
    await first.getByRole('button', { name: 'Reject', exact: true }).click();
    await expect.poll(() => first.textContent()).toContain('rejected by admin');
    await page.getByRole('button', { name: 'Pause all' }).click();
    await expect.poll(() => page.locator('header.top').textContent()).toContain('paused by admin');
    await page.getByRole('button', { name: 'Resume all' }).click();
    await page.getByRole('button', { name: 'Pause all' }).waitFor();
    const actions = (await rig!.store.audit.list({ actor: 'operator:admin' })).items.map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['plan.reject', 'pause', 'resume']));
  }, 240_000);
});
