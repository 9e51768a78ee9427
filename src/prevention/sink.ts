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

export const RATIO_CHANGE_STATES = ['intended', 'written', 'abandoned', 'adopted'] as const;
export type RatioChangeState = (typeof RATIO_CHANGE_STATES)[number];

export interface RatioChangeRecord {
  /** Same for the intent and its outcome. */
  changeId: string;
  host: string;
  rpUuid: string;
  aggregate: string;
  from: number;
  to: number;
  /** Why the change was decided, in words (RatioDecision.reason). */
  reason: string;
  state: RatioChangeState;
  /** ISO-8601 UTC, from the injected clock. */
  at: string;
  /** For `abandoned`: why the write did not happen. For `written`: the provider generation after it. */
  detail?: string | undefined;
}

export interface PinnedHost {
  host: string;
  rpUuid: string;
  /** What Aicerine last wrote (or meant to). */
  expected: number;
  /** What Placement held instead. */
  found: number;
  at: string;
  reason: string;
}

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
