// The port through which ratio prevention makes its changes and its "pinned" hosts durable. The
// store implements it; InMemoryRatioChangeSink is the reference implementation (tests, and a
// service run without a store).
//
// Each write leaves two records: `intended` before the PUT and `written` or `abandoned` after.
// A crash between the two leaves an `intended` one, and both its `from` and its `to` then count
// as ours, so a restart never mistakes its own write for someone else's; the same holds for an
// `abandoned` one (a PUT whose answer was lost may still have happened). When an operator
// releases a pinned host, an `adopted` record takes the ratio Placement holds then as the new
// baseline.

import type { PinnedHost, RatioChangeRecord } from '../records/ratio-changes.js';

// The records are declared below prevention and the store both (src/records); prevention's
// modules keep importing them from here.
export {
  type PinnedHost,
  RATIO_CHANGE_STATES,
  type RatioChangeRecord,
  type RatioChangeState,
} from '../records/ratio-changes.js';

export interface RatioChangeSink {
  /** Appends a record. */
  record(change: RatioChangeRecord): Promise<void>;
  /** The newest record per host. */
  lastChanges(): Promise<Map<string, RatioChangeRecord>>;
  /** Hosts Aicerine no longer writes, with the evidence. */
  pinned(): Promise<Map<string, PinnedHost>>;
  pin(p: PinnedHost): Promise<void>;
  /** Removes the pin (RatioWriter.release records the new baseline first). */
  unpin(host: string): Promise<void>;
}

/**
 * The ratios Placement may hold for a host without anyone but us having written it. An
 * abandoned write counts both ways: a PUT whose answer was lost may have happened.
 */
export function ratiosOurs(last: RatioChangeRecord): number[] {
  switch (last.state) {
    case 'written':
    case 'adopted':
      return [last.to];
    case 'abandoned':
    case 'intended':
      return [last.from, last.to];
  }
}

/** The one ratio to quote as "what Aicerine expected" for a host. */
export function expectedRatio(last: RatioChangeRecord): number {
  return last.state === 'abandoned' ? last.from : last.to;
}

export class InMemoryRatioChangeSink implements RatioChangeSink {
  readonly records: RatioChangeRecord[] = [];
  private readonly pins = new Map<string, PinnedHost>();

  async record(change: RatioChangeRecord): Promise<void> {
    this.records.push({ ...change });
  }

  async lastChanges(): Promise<Map<string, RatioChangeRecord>> {
    const out = new Map<string, RatioChangeRecord>();
    for (const r of this.records) out.set(r.host, r);
    return out;
  }

  async pinned(): Promise<Map<string, PinnedHost>> {
    return new Map(this.pins);
  }

  async pin(p: PinnedHost): Promise<void> {
    this.pins.set(p.host, { ...p });
  }

  async unpin(host: string): Promise<void> {
    this.pins.delete(host);
  }
}
