// The Tasks page in real headless Chromium against the simulator and the running service (its task
// worker included): an operator requests an evacuation and watches it reach DONE, sees the API's
// refusals (400, 404, 409) with the field at fault, lists a purge's dry run, cancels a waiting
// task, removes DONE tasks and sees a blocked worker say why, all in one page load; a reader sees
// the tasks and no button.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { LocalLockService } from '../../src/coordination/local-locks.js';
import { SwitchableLocks } from '../tasks/rig.js';
import { addCloudReader, browserSession, NO_BROWSER, PASSWORD, type Rig, startRig } from './rig.js';

if (NO_BROWSER !== null) console.warn(`dashboard tasks tests skipped: ${NO_BROWSER}`);

const WAIT = 60_000;
/** The project of every server in the rig's world. */
const PROJECT = 'e0000000000000000000000000000001';

describe.skipIf(NO_BROWSER !== null)('the Tasks page in headless Chromium', () => {
  const session = browserSession(WAIT);
  let rig: Rig | undefined;
  let page: Page;

  async function open(auth: boolean, locks?: SwitchableLocks): Promise<Rig> {
    rig = await startRig({ auth, ...(locks ? { locks } : {}) });
    session.closeAfter(rig);
    page = await session.page();
    await page.goto(`${rig.url}/`);
    return rig;
  }

  const form = () => page.getByRole('form', { name: 'request a task' });
  const refusal = () => page.locator('#task-refusal');
  const row = (id: string) => page.locator(`section[aria-label="tasks"] tr[data-task="${id}"]`);
  /** Submits the form and returns the id of the (first) task it created. */
  async function request(): Promise<string> {
    const created = page.locator('section[aria-label="created tasks"] [data-task]').first();
    const before = (await created.count()) > 0 ? await created.getAttribute('data-task') : null;
    await form()
      .getByRole('button', { name: /^(Request|Purge the project)$/ })
      .click();
    await expect.poll(() => created.getAttribute('data-task')).not.toBe(before);
    return (await created.getAttribute('data-task')) ?? '';
  }

  it('requests an evacuation and watches it reach DONE; refusals name the field; dry run, cancel, clean', async () => {
    const locks = new SwitchableLocks(new LocalLockService());
    const r = await open(false, locks);
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    await page.waitForURL(/\/tasks$/);
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
    });
    await expect.poll(() => page.getByTestId('worker-status').textContent()).toContain('worker running');
    await expect.poll(() => page.locator('section[aria-label="tasks"]').textContent()).toContain('No task');

    // Evacuate s2 (one server; s1 is the other host of its aggregate): DONE in the list.
    await form().getByLabel('Host', { exact: true }).fill('s2');
    const evacuation = await request();
    await row(evacuation).and(page.locator('[data-state="DONE"]')).waitFor();
    expect(await row(evacuation).locator('td.result').textContent()).toBe('1 live, 0 cold, 0 cannot move');
    expect(await row(evacuation).textContent()).toContain('host=s2 target=-');
    expect(await row(evacuation).textContent()).toContain('operator:local');
    expect(r.sim.cloud.servers.filter((s) => s.host === 's2')).toEqual([]);
    // The created task's own panel shows what moved.
    await expect
      .poll(() =>
        page.locator('section[aria-label="created tasks"] table[aria-label="live-migrated"]').textContent(),
      )
      .toContain('→ s1');

    // 400: a malformed host name, the field named and the input marked.
    await form().getByLabel('Host', { exact: true }).fill('bad host!');
    await form().getByRole('button', { name: 'Request' }).click();
    await expect
      .poll(() => refusal().textContent())
      .toContain('Refused (400 invalid-field), nothing was created');
    expect(await refusal().getByTestId('refusal-field').textContent()).toBe(
      'field body.args.host = "bad host!"',
    );
    expect(await form().getByLabel('Host', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // 404: unknown to Nova.
    await form().getByLabel('Host', { exact: true }).fill('nohost');
    await form().getByRole('button', { name: 'Request' }).click();
    await expect.poll(() => refusal().textContent()).toContain('Refused (404 not-found)');
    expect(await refusal().textContent()).toContain('host: no nova-compute service on host nohost');
    // 409: s2 is disabled now (the evacuation left it so): no target for s1, of its aggregate.
    await form().getByLabel('Host', { exact: true }).fill('s1');
    await form().getByLabel('Target (optional)').fill('s2');
    await form().getByRole('button', { name: 'Request' }).click();
    await expect.poll(() => refusal().textContent()).toContain('Refused (409 conflict)');
    expect(await refusal().getByTestId('refusal-field').textContent()).toBe('field body.args.target = "s2"');
    expect(await refusal().textContent()).toContain(
      `target: s2 is disabled (aicerine task ${evacuation}: evacuate-compute requested by operator:local)`,
    );
    expect(await form().getByLabel('Target (optional)').getAttribute('aria-invalid')).toBe('true');
    expect(await form().getByLabel('Host', { exact: true }).getAttribute('aria-invalid')).toBe('false');
    // 409 from the service's own configuration (validate-compute needs tasks.validation): no field.
    await form().getByLabel('Kind').selectOption('validate-compute');
    await form().getByLabel('Hosts (space or comma separated)').fill('g2 g3');
    await form().getByRole('button', { name: 'Request' }).click();
    await expect.poll(() => refusal().textContent()).toContain('validate-compute is not configured');
    expect(await refusal().textContent()).toContain('Refused (409 conflict)');
    expect(await refusal().getByTestId('refusal-field').count()).toBe(0);
    expect((await r.store.tasks.list()).items).toHaveLength(1);

    // A purge's dry run lists what a run would delete, and deletes nothing.
    await form().getByLabel('Kind').selectOption('purge-project');
    await form().getByLabel('Project (id or name)').fill(PROJECT);
    expect(
      await form()
        .getByRole('checkbox', { name: /dry run/ })
        .isChecked(),
    ).toBe(true);
    const dryRun = await request();
    const listed = page.locator(
      'section[aria-label="created tasks"] table[aria-label="would delete"] tr[data-item]',
    );
    await listed.first().waitFor();
    const items = await listed.evaluateAll((rows) => rows.map((x) => x.getAttribute('data-item') ?? ''));
    const servers = r.sim.cloud.servers.map((s) => `server:${s.uuid}`);
    expect(servers).toHaveLength(11);
    expect(items.filter((i) => i.startsWith('server:')).sort()).toEqual([...servers].sort());
    await row(dryRun).and(page.locator('[data-state="DONE"]')).waitFor();
    expect(await row(dryRun).locator('td.result').textContent()).toBe(
      `dry run: would delete ${items.length} items`,
    );
    expect(r.sim.cloud.servers).toHaveLength(11);

    // A task waiting for a host a move holds, cancelled from its row.
    const held = await locks.tryAcquire('host/g3', 'executor:exec-test');
    await form().getByLabel('Kind').selectOption('evacuate-compute');
    await form().getByLabel('Host', { exact: true }).fill('g3');
    await form().getByLabel('Target (optional)').fill('');
    const waiting = await request();
    await row(waiting).and(page.locator('[data-state="WAITING"]')).waitFor();
    expect(await row(waiting).textContent()).toContain('host g3 is held by executor:exec-test');
    await row(waiting).getByRole('button', { name: 'Cancel' }).click();
    await row(waiting).and(page.locator('[data-state="ERROR"]')).waitFor();
    expect(await row(waiting).locator('td.result').textContent()).toBe('cancelled by operator:local');
    await held?.release();

    // Remove DONE tasks: the two DONE go, the cancelled one stays.
    await page.getByRole('button', { name: 'Remove DONE tasks' }).click();
    await expect
      .poll(() => page.locator('section[aria-label="tasks"] header').textContent())
      .toContain('removed 2 DONE tasks');
    await row(evacuation).waitFor({ state: 'detached' });
    await row(dryRun).waitFor({ state: 'detached' });
    expect(await row(waiting).count()).toBe(1);

    // The lock backend goes away: the page says why the worker touches nothing, then recovers.
    locks.down = 'etcd: connection refused';
    await expect
      .poll(() => page.getByTestId('worker-blocked').textContent())
      .toMatch(
        /The task worker touches no task since .*: the lock backend is unreachable; .*connection refused/,
      );
    locks.down = null;
    await page.getByTestId('worker-status').waitFor();

    // The task's own page, then back: nothing reloaded.
    await row(waiting).getByRole('link', { name: waiting, exact: true }).click();
    await page.waitForURL(new RegExp(`/tasks/${waiting}$`));
    const detail = page.locator(`section[aria-label="task ${waiting}"]`);
    await expect.poll(() => detail.textContent()).toContain('cancelled by operator:local');
    expect(await detail.getByTestId('task-state').textContent()).toBe('ERROR');
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
  }, 240_000);

  it('with Keystone: a reader sees the tasks and no button; an operator gets the form and Cancel', async () => {
    const r = await open(true);
    await r.service.locks.tryAcquire('host/g3', 'executor:exec-test');
    const [task] = await r.service.tasks.service.create('evacuate-compute', { host: 'g3' }, 'operator:admin');
    const logIn = async (username: string, project: string) => {
      await page.getByLabel('User name', { exact: true }).fill(username);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Project', { exact: true }).fill(project);
      await page.getByRole('button', { name: 'Log in' }).click();
    };
    await page.getByRole('form', { name: 'log in' }).waitFor();
    // A cloud-wide reader (a project's member reads nothing of the cloud).
    addCloudReader(r.sim);
    await logIn('noc', 'admin');
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    await row(task!.id).and(page.locator('[data-state="WAITING"]')).waitFor();
    expect(await page.getByRole('form', { name: 'request a task' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Remove DONE tasks' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn('admin', 'admin');
    await form().waitFor();
    await row(task!.id).getByRole('button', { name: 'Cancel' }).click();
    await row(task!.id).and(page.locator('[data-state="ERROR"]')).waitFor();
    expect(await row(task!.id).locator('td.result').textContent()).toBe('cancelled by operator:admin');
    const audit = await r.store.audit.list({ action: 'task.cancel' });
    expect(audit.items[0]?.actor).toBe('operator:admin');
  }, 240_000);
});
