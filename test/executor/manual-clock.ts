import type { Clock } from '../../src/executor/ports.js';

/** A clock the test moves by hand; sleeps end when it passes their time. */
export function manualClock(): Clock & { advance(ms: number): void } {
  let now = 1_000_000;
  const sleepers: { until: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms) =>
      new Promise<void>((wake) => {
        sleepers.push({ until: now + ms, wake });
      }),
    advance(ms) {
      now += ms;
      for (const s of sleepers.splice(0)) {
        if (s.until <= now) s.wake();
        else sleepers.push(s);
      }
    },
  };
}
