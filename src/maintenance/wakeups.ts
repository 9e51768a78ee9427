// A campaign's driver sleeps `maintenance.pollInterval` between passes. What changes the campaign
// in the same process (an operator's pause, resume, abort or done; the end of a child task the
// campaign asked for) wakes it at once instead. Changes made by other processes are seen at the
// next poll, as before: this only shortens the wait, it never replaces the poll.

import type { Clock } from '../executor/ports.js';

/** The driver's side: sleeps until the poll, a wake-up or its run's abort, whichever comes first. */
export interface CampaignSleeper {
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** The driver's run ended: wake-ups for the campaign are no longer kept for it. */
  detach(): void;
}

interface Attached {
  /** Woken while not asleep (mid-pass): the pass may have read the campaign before the change. */
  pending: boolean;
  resolve: (() => void) | null;
}

export class CampaignWakeups {
  private readonly attached = new Map<string, Set<Attached>>();

  constructor(private readonly clock: Pick<Clock, 'sleep'>) {}

  /** The driver of `campaign` in this process. */
  attach(campaign: string): CampaignSleeper {
    const me: Attached = { pending: false, resolve: null };
    let set = this.attached.get(campaign);
    if (set === undefined) {
      set = new Set();
      this.attached.set(campaign, set);
    }
    set.add(me);
    return {
      sleep: (ms, signal) => {
        if (me.pending || signal.aborted) {
          me.pending = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => {
          const done = () => {
            me.resolve = null;
            signal.removeEventListener('abort', done);
            resolve();
          };
          me.resolve = done;
          signal.addEventListener('abort', done, { once: true });
          // The clock's sleep cannot be cancelled; woken early, its end finds nothing to do.
          this.clock.sleep(ms).then(() => {
            if (me.resolve === done) done();
          });
        });
      },
      detach: () => {
        set.delete(me);
        me.resolve?.();
        if (set.size === 0 && this.attached.get(campaign) === set) this.attached.delete(campaign);
      },
    };
  }

  /** Something changed `campaign`: its driver here (if any) makes its next pass now. */
  wake(campaign: string): void {
    for (const a of this.attached.get(campaign) ?? []) {
      if (a.resolve !== null) a.resolve();
      else a.pending = true;
    }
  }
}
