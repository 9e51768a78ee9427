import type { ClusterState } from '../state.js';

/** Why a destination was ruled out: a value, so "why not there?" can be answered. */
export interface Rejection {
  constraint: string;
  detail: string;
}

/** One question about one move: may `server` go to host `to` now? A rule that does not apply passes. */
export interface DestinationConstraint {
  readonly name: string;
  check(state: ClusterState, server: number, to: number): Rejection | null;
}
