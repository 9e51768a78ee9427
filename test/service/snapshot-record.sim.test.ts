// POST /v1/snapshots through the running service (the dashboard tests' rig, whose simulator clock
// runs 50 times faster than the wall): the recording is stamped with the service's clock, as the
// cycles' recordings are, not with the wall clock.
import { afterEach, describe, expect, it } from 'vitest';
import { type Rig, startRig } from '../web/rig.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('snapshots recorded on request', () => {
  it("are stamped with the service's clock", async () => {
    r = await startRig({ auth: false });
    // Let the simulated clock run well ahead of the wall clock.
    await new Promise((res) => setTimeout(res, 1500));
    const res = await fetch(`${r.url}/v1/snapshots`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { takenAt?: string; snapshot?: { takenAt: string } };
    const takenAt = Date.parse(body.takenAt ?? body.snapshot!.takenAt);
    const sim = r.sim.cloud.clock.nowMs();
    expect(Math.abs(sim - takenAt)).toBeLessThan(60_000);
    expect(sim - Date.now()).toBeGreaterThan(60_000);
  }, 60_000);
});
