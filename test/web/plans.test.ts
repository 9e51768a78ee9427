// The plan page in headless Chromium against the running service on the simulator: a pack plan
// says which hosts it frees and which it leaves holding only servers that cannot move, as the
// CLI's plan text does; a plan that frees none (the assisted aggregate's own) says nothing of it.
// The What-if page says the same of the plan it shows.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/model/plan.js';
import { browserSession, NO_BROWSER, type Rig, startRig } from './rig.js';

if (NO_BROWSER !== null) console.warn(`plan page tests skipped: ${NO_BROWSER}`);

const WAIT = 60_000;

/**
 * A pack plan of gold as the planner writes one: g1's servers but its first (one that cannot
 * move) and g2's only server go to g3, so g2 is freed and g1 is left partly drained.
 */
function packPlan(rig: Rig): Plan {
  const on = (host: string) => rig.sim.cloud.servers.filter((s) => s.host === host);
  const movers = [...on('g1').slice(1), ...on('g2')];
  const stats = { imbalance: 0.2, dimensions: { cpu: { stddev: 0.3, max: 0.88 } } };
  return {
    format: 'aicerine-plan/1',
    snapshotTakenAt: new Date(rig.sim.cloud.clock.nowMs()).toISOString(),
    mode: 'pack',
    aggregates: [
      {
        name: 'gold',
        moves: movers.map((s, i) => ({
          step: i + 1,
          wave: 1,
          server: s.uuid,
          from: s.host,
          to: 'g3',
          phase: 'pack' as const,
          reason: `pack: empty ${s.host}`,
          estimatedSeconds: 30,
        })),
        before: stats,
        after: { ...stats, imbalance: 0.4 },
        hostsFreed: ['g2'],
        hostsPartlyDrained: ['g1'],
        // The freed host is also the one kept empty as a spare (pack.spareHosts 1).
        spareHosts: ['g2'],
        unresolved: [],
      },
    ],
    stats: { planningMs: 1 },
  };
}

describe.skipIf(NO_BROWSER !== null)('the plan page in headless Chromium', () => {
  const session = browserSession(WAIT);
  let page: Page;

  it('shows the hosts a pack plan frees and those it leaves partly drained, only when there are some', async () => {
    const rig = await startRig({ auth: false });
    session.closeAfter(rig);
    page = await session.page();
    await page.goto(`${rig.url}/`);

    // The assisted aggregate's own (spread) plan frees no host: the page says nothing of it.
    const planLink = page.locator('section[data-aggregate="gold"] .latest-plan a');
    await planLink.waitFor();
    await planLink.click();
    await page.waitForURL(/\/plans\/\d+$/);
    await page.locator('tr[data-step]').first().waitFor();
    expect(await page.locator('.hosts-outcome').count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toContain('Hosts freed');

    // A pack plan, reached from the plan list without a reload.
    const stored = await rig.store.plans.create({
      aggregate: 'gold',
      mode: 'assisted',
      plan: packPlan(rig),
      createdAt: new Date(rig.sim.cloud.clock.nowMs()).toISOString(),
    });
    await page.getByRole('link', { name: 'Plans', exact: true }).click();
    await page.getByRole('link', { name: `#${stored.id}`, exact: true }).click();
    await page.waitForURL(new RegExp(`/plans/${stored.id}$`));
    const outcome = page.locator('.hosts-outcome[data-aggregate="gold"]');
    await outcome.waitFor();
    expect(await outcome.locator('li').allTextContents()).toEqual([
      'Hosts freed: g2',
      'Partly drained (only unmovable servers left): g1',
      'Spare hosts (kept empty): g2',
    ]);
    expect(await page.locator('tr[data-step]').count()).toBe(8);
  }, 240_000);

  it("shows each move's threshold test, and the step an exchange or a make-room move is paired with", async () => {
    const rig = await startRig({ auth: false });
    session.closeAfter(rig);
    const on = (host: string) => rig.sim.cloud.servers.filter((s) => s.host === host);
    const [a, b] = [on('g1')[0]!, on('g2')[0]!];
    const c = on('g1')[1]!;
    const stats = { imbalance: 0.2, dimensions: { cpu: { stddev: 0.3, max: 0.88 } } };
    const base = { estimatedSeconds: 30, phase: 'spread' as const, wave: 1 };
    const plan: Plan = {
      format: 'aicerine-plan/1',
      snapshotTakenAt: new Date(rig.sim.cloud.clock.nowMs()).toISOString(),
      mode: 'spread',
      aggregates: [
        {
          name: 'gold',
          moves: [
            {
              ...base,
              step: 1,
              server: c.uuid,
              from: 'g1',
              to: 'g3',
              phase: 'evacuate',
              reason: 'g1 is disabled',
              mandatory: 'evacuation',
            },
            {
              ...base,
              step: 2,
              server: a.uuid,
              from: 'g1',
              to: 'g2',
              reason: 'exchange with step 3: ...',
              gain: 0.001,
              threshold: { worth: 0.001, bar: 0.0012 },
              exchangeWith: 3,
            },
            {
              ...base,
              step: 3,
              wave: 2,
              server: b.uuid,
              from: 'g2',
              to: 'g1',
              reason: 'exchange with step 2: ...',
              gain: 0.004,
              threshold: { worth: 0.004, bar: 0.0016 },
              exchangeWith: 2,
            },
          ],
          before: stats,
          after: { ...stats, imbalance: 0.15 },
          hostsFreed: [],
          unresolved: [],
        },
      ],
      stats: { planningMs: 1 },
    };
    const stored = await rig.store.plans.create({
      aggregate: 'gold',
      mode: 'assisted',
      plan,
      createdAt: new Date(rig.sim.cloud.clock.nowMs()).toISOString(),
    });
    page = await session.page();
    await page.goto(`${rig.url}/plans/${stored.id}`);
    await page.locator('tr[data-step="3"]').waitFor();
    const worth = (step: number) => page.locator(`tr[data-step="${step}"] td.worth`).textContent();
    expect(await worth(1)).toBe('mandatory (evacuation): no bar');
    expect(await worth(2)).toBe('0.0010 < bar 0.0012; exchange with step 3, judged as a pair');
    expect(await worth(3)).toBe('0.0040 ≥ bar 0.0016; exchange with step 2, judged as a pair');
  }, 240_000);

  it('shows on the What-if page the host a what-if drain frees', async () => {
    const rig = await startRig({ auth: false });
    session.closeAfter(rig);
    page = await session.page();
    await page.goto(`${rig.url}/what-if`);
    const form = page.getByRole('form', { name: 'what-if' });
    await form.getByRole('checkbox', { name: 'g2' }).check();
    await form.getByRole('button', { name: 'Plan it' }).click();
    const result = page.getByRole('region', { name: 'what-if result' });
    await result.waitFor();
    const outcome = result.locator('.hosts-outcome[data-aggregate="gold"] li');
    await outcome.first().waitFor();
    expect(await outcome.allTextContents()).toEqual(['Hosts freed: g2']);
  }, 240_000);
});
