// The owner badge in real headless Chromium: the service runs as a replica (aggregate ownership
// on its lock service, as `serve` with coordination does), and each aggregate's card on the
// overview names the replica that owns it, as /v1/aggregates does.
import { describe, expect, it } from 'vitest';
import { browserSession, NO_BROWSER, startRig } from './rig.js';

if (NO_BROWSER !== null) console.warn(`dashboard replica tests skipped: ${NO_BROWSER}`);

const WAIT = 60_000;

describe.skipIf(NO_BROWSER !== null)('the owner badge in headless Chromium', () => {
  const session = browserSession(WAIT);

  it("shows on each aggregate's card which replica owns it, and none without replicas", async () => {
    const rig = await startRig({ auth: false, replicaId: 'replica-web-1' });
    session.closeAfter(rig);
    const page = await session.page();
    await page.goto(`${rig.url}/`);
    const badge = page.locator('section[data-aggregate="gold"] [data-testid="owner"]');
    await badge.waitFor();
    expect(await badge.textContent()).toBe('replica replica-web-1');
    const api = (await (await fetch(`${rig.url}/v1/aggregates/gold`)).json()) as {
      owner: { replica: string; fence: number };
    };
    expect(await badge.getAttribute('title')).toBe(`fence ${api.owner.fence}`);

    const single = await startRig({ auth: false });
    session.closeAfter(single);
    const other = await session.page();
    await other.goto(`${single.url}/`);
    await other.locator('section[data-aggregate="gold"]').waitFor();
    expect(await other.locator('[data-testid="owner"]').count()).toBe(0);
  });
});
