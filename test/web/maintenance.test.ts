// The Maintenance page in headless Chromium against the running service on the simulator: a
// refused start says why, a campaign over the silver aggregate is started from the form, paused,
// a host handed over is said back, resumed and finished, without a reload.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { addCloudReader, browserSession, NO_BROWSER, PASSWORD, type Rig, startRig } from './rig.js';

if (NO_BROWSER !== null) console.warn(`maintenance page tests skipped: ${NO_BROWSER}`);

const WAIT = 60_000;

describe.skipIf(NO_BROWSER !== null)('the Maintenance page in headless Chromium', () => {
  const session = browserSession(WAIT);
  let rig: Rig | undefined;
  let page: Page;

  it('starts a campaign from the form, pauses it, takes a host back, resumes it to the end', async () => {
    rig = await startRig({ auth: false, taskPollMs: 100 });
    session.closeAfter(rig);
    await rig.service.tasks.worker.start();
    page = await session.page();
    await page.goto(`${rig.url}/`);
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 7;
    });
    await page.getByRole('link', { name: 'Maintenance', exact: true }).click();
    await page.waitForURL(/\/maintenance$/);
    await expect
      .poll(() => page.locator('main').textContent(), { timeout: WAIT })
      .toContain('No maintenance campaign yet.');

    // Refused: nothing is created, the reason is shown.
    await page.getByLabel('aggregate').fill('nope');
    await page.getByRole('button', { name: 'Start' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: WAIT })
      .toContain('Nova has no aggregate "nope"');
    expect((await rig.store.maintenance.list()).items).toEqual([]);

    await page.getByLabel('aggregate').fill('silver');
    await page.getByLabel('hosts').fill('s1, s2');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/maintenance\/\d+$/);
    const state = page.getByTestId('campaign-state');
    await expect.poll(() => state.textContent(), { timeout: WAIT }).toBe('RUNNING');
    const row = (h: string) => page.locator(`tr[data-host="${h}"]`);
    await expect.poll(() => row('s1').textContent(), { timeout: WAIT }).toContain('ready for maintenance');
    expect(await row('s1').textContent()).toContain('1 live, 0 cold');
    expect(rig.sim.cloud.requireHost('s1').status).toBe('disabled');

    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect.poll(() => state.textContent(), { timeout: WAIT }).toBe('PAUSED');
    await row('s1').getByRole('button', { name: 'Back from maintenance' }).click();
    await expect
      .poll(() => row('s1').textContent(), { timeout: WAIT })
      .toContain('back; re-admission waits for the campaign to resume');
    expect(await row('s2').textContent()).toContain('pending');
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await expect.poll(() => row('s1').textContent(), { timeout: WAIT }).toContain('re-admitted (enabled)');
    await expect.poll(() => row('s2').textContent(), { timeout: WAIT }).toContain('ready for maintenance');
    await row('s2').getByRole('button', { name: 'Back from maintenance' }).click();
    await expect.poll(() => state.textContent(), { timeout: WAIT }).toBe('DONE');
    expect(rig.sim.cloud.requireHost('s1').status).toBe('enabled');
    expect(rig.sim.cloud.requireHost('s2').status).toBe('enabled');
    expect(await page.getByRole('button', { name: 'Abort', exact: true }).count()).toBe(0);

    await page.getByRole('link', { name: 'All campaigns' }).click();
    await expect
      .poll(() => page.locator('tr[data-campaign]').first().textContent(), { timeout: WAIT })
      .toContain('2 done');
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
  }, 240_000);

  it('with Keystone: a reader sees the campaign and no button; an operator gets them', async () => {
    rig = await startRig({ auth: true, taskPollMs: 100 });
    session.closeAfter(rig);
    const c = await rig.service.tasks.maintenance.start(
      { aggregate: 'silver', hosts: ['s1'] },
      'operator:admin',
    );
    await rig.service.tasks.maintenance.pause(c.id, 'operator:admin');
    page = await session.page();
    await page.goto(`${rig.url}/maintenance/${c.id}`);
    const login = page.getByRole('form', { name: 'log in' });
    const logIn = async (username: string, project: string) => {
      await login.waitFor();
      await page.getByLabel('User name', { exact: true }).fill(username);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Project', { exact: true }).fill(project);
      await page.getByRole('button', { name: 'Log in' }).click();
    };
    // A cloud-wide reader (a project's member reads nothing of the cloud).
    addCloudReader(rig.sim);
    await logIn('noc', 'admin');
    await expect
      .poll(() => page.getByTestId('campaign-state').textContent(), { timeout: WAIT })
      .toBe('PAUSED');
    expect(await page.locator('tr[data-host="s1"]').textContent()).toContain('pending');
    expect(await page.getByRole('button', { name: 'Resume', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Abort', exact: true }).count()).toBe(0);
    await page.getByRole('link', { name: 'All campaigns' }).click();
    await page.locator('tr[data-campaign]').first().waitFor();
    expect(await page.getByRole('button', { name: 'Start', exact: true }).count()).toBe(0);

    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn('admin', 'admin');
    await page.getByRole('button', { name: 'Start', exact: true }).waitFor();
    await page.locator(`tr[data-campaign="${c.id}"] a`).click();
    await page.getByRole('button', { name: 'Resume', exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Abort', exact: true }).count()).toBe(1);
  }, 240_000);
});
