// The driver's sleep between passes: cut short by a wake-up for its campaign (also one that came
// while it was not asleep), by its run's abort, and otherwise as long as the clock says.
import { describe, expect, it } from 'vitest';
import { CampaignWakeups } from '../../src/maintenance/wakeups.js';

/** A clock whose sleeps end only when the test says so. */
function heldClock() {
  const sleeping: (() => void)[] = [];
  return {
    sleeping,
    sleep: (_ms: number) => new Promise<void>((r) => sleeping.push(r)),
  };
}

/** Whether a sleep has ended, read after the pending callbacks ran. */
function watch(p: Promise<void>): () => Promise<'woke' | 'asleep'> {
  let woke = false;
  p.then(() => {
    woke = true;
  });
  return async () => {
    await new Promise((r) => setImmediate(r));
    return woke ? 'woke' : 'asleep';
  };
}

describe('campaign wake-ups', () => {
  it('wakes the sleeping driver of the campaign, and only it', async () => {
    const clock = heldClock();
    const w = new CampaignWakeups(clock);
    const a = w.attach('1');
    const b = w.attach('2');
    const sa = watch(a.sleep(60_000, new AbortController().signal));
    const sb = watch(b.sleep(60_000, new AbortController().signal));
    w.wake('1');
    expect(await sa()).toBe('woke');
    expect(await sb()).toBe('asleep');
    // The poll still ends a sleep nobody woke.
    clock.sleeping[1]!();
    expect(await sb()).toBe('woke');
  });

  it('remembers a wake-up that came mid-pass: the next sleep returns at once, the one after sleeps', async () => {
    const w = new CampaignWakeups(heldClock());
    const a = w.attach('1');
    const signal = new AbortController().signal;
    w.wake('1');
    expect(await watch(a.sleep(60_000, signal))()).toBe('woke');
    const second = watch(a.sleep(60_000, signal));
    expect(await second()).toBe('asleep');
    a.detach();
    expect(await second()).toBe('woke');
  });

  it("ends the sleep when the driver's run is aborted (the worker stops)", async () => {
    const w = new CampaignWakeups(heldClock());
    const a = w.attach('1');
    const stop = new AbortController();
    const s = watch(a.sleep(60_000, stop.signal));
    expect(await s()).toBe('asleep');
    stop.abort();
    expect(await s()).toBe('woke');
    expect(await watch(a.sleep(60_000, stop.signal))()).toBe('woke');
  });

  it('keeps nothing for campaigns without a driver here', async () => {
    const w = new CampaignWakeups(heldClock());
    w.wake('7');
    const a = w.attach('7');
    expect(await watch(a.sleep(60_000, new AbortController().signal))()).toBe('asleep');
    a.detach();
  });
});
