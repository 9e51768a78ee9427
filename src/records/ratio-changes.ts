// Ratio prevention's change records and pinned hosts, as prevention writes them through its sink
// (src/prevention/sink.ts, the port) and the store keeps them (src/store/ratio-sink.ts): plain
// data and the states it may hold, below both.

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
