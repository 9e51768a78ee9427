// What the API asks of the running service besides its control port: the snapshot the loop last
// planned on (hosts, charts, what-if) and a fresh recording (operator's "record now"); and, for
// the dashboard's login form, a Keystone that issues tokens for a user name and password.
import type { Snapshot } from '../model/snapshot.js';
import type { Caller } from './keystone.js';

export interface SnapshotSource {
  /** The snapshot the loop planned on last; null before its first cycle. */
  latest(): Snapshot | null;
  /** Reads the whole cloud now (the service's reader credential). */
  record(): Promise<Snapshot>;
  /**
   * The loop's latest decision for the aggregate: when, how many moves started, and the line
   * that says why (or why nothing did: cooldown, data-health gate, window, budget...); null
   * before its first cycle or when this process does not run that aggregate.
   */
  lastDecision?(aggregate: string): { at: string; started: number; summary: string } | null;
}

export interface LoginRequest {
  username: string;
  password: string;
  project: string;
  userDomain: string;
  projectDomain: string;
}

export interface TokenIssuer {
  /** A project-scoped token, or null when Keystone refuses the credentials (401). */
  issue(request: LoginRequest): Promise<{ token: string; caller: Caller } | null>;
}
