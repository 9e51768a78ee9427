// The rolling-maintenance campaigns' records, as the driver, the service and operators write them
// through the campaign records port (src/maintenance/ports.ts) and the store keeps them
// (src/store/maintenance.ts): plain data and the states it may hold, below both.

export const CAMPAIGN_STATES = ['RUNNING', 'PAUSED', 'DONE', 'ABORTED'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

export function isFinalCampaignState(state: CampaignState): boolean {
  return state === 'DONE' || state === 'ABORTED';
}

/**
 * A host's steps. In flight: draining, ready, returned, validating. Final: the others.
 *   pending            not started yet
 *   draining           disabled, its evacuate-compute task empties it
 *   ready              empty and handed over: "ready for maintenance"
 *   returned           the operator (or nova-compute going down and up) says it is back
 *   validating         its validate-compute task runs (the host is still disabled)
 *   done               re-admitted (enabled)
 *   refused            the rest of the aggregate cannot take its servers: never touched
 *   not-drained        servers that cannot move are still on it: it stays disabled, not handed over
 *   drain-failed       its evacuation ended in ERROR: it stays disabled
 *   failed-validation  it failed validate-compute: it stays disabled
 *   aborted            the campaign was aborted while the host was in flight: left as it was
 */
export const HOST_STATES = [
  'pending',
  'draining',
  'ready',
  'returned',
  'validating',
  'done',
  'refused',
  'not-drained',
  'drain-failed',
  'failed-validation',
  'aborted',
] as const;
export type HostState = (typeof HOST_STATES)[number];

const IN_FLIGHT: readonly HostState[] = ['draining', 'ready', 'returned', 'validating'];
export function isInFlight(state: HostState): boolean {
  return IN_FLIGHT.includes(state);
}
export function isFinalHostState(state: HostState): boolean {
  return state !== 'pending' && !isInFlight(state);
}

export const RETURN_WHEN = ['done', 'service-restart'] as const;
/** How a handed-over host counts as back: `maintenance done HOST`, or nova-compute down then up. */
export type ReturnWhen = (typeof RETURN_WHEN)[number];

export interface CampaignSettings {
  /** Hosts out at once, at most (fewer when the rest cannot take their servers). */
  parallel: number;
  /** Run validate-compute before re-admitting a host. */
  validate: boolean;
  returnWhen: ReturnWhen;
  /** POSTed JSON when a host is ready for maintenance; null: none. */
  webhook: string | null;
  /** Run (argv, no shell) when a host is ready for maintenance; null: none. */
  command: string[] | null;
}

export interface Unmovable {
  server: string;
  name: string;
  why: string;
}

export interface HostProgress {
  host: string;
  state: HostState;
  /** Why it waits, was refused or failed, in words; null when nothing to say. */
  note: string | null;
  /** The evacuate-compute and validate-compute tasks the campaign asked for it. */
  evacuateTask: string | null;
  validateTask: string | null;
  /** Timings (ISO): taken out, empty, handed over, back, ended (done or failed). */
  startedAt: string | null;
  drainedAt: string | null;
  handedOverAt: string | null;
  returnedAt: string | null;
  endedAt: string | null;
  /** service-restart: when nova-compute was last seen down after the hand-over. */
  sawDownAt: string | null;
  /** Who said `maintenance done` (operator), or "nova-compute restarted". */
  returnedBy: string | null;
  moved: { live: number; cold: number };
  cannotMove: Unmovable[];
  /** What the webhook and the command answered at the hand-over. */
  handover: { webhook: string | null; command: string | null };
}

export interface Campaign {
  id: string;
  aggregate: string;
  state: CampaignState;
  requestedBy: string;
  requestedAt: string;
  settings: CampaignSettings;
  hosts: HostProgress[];
  /** Why no further host starts now (spare capacity, paused), or the last transient error. */
  note: string | null;
  /** The maintain-aggregate task driving it. */
  taskId: string | null;
  /** An abort was asked: the driver cancels what runs and ends the campaign ABORTED. */
  abortRequested: boolean;
  /** Grows with every write: writes are compare-and-set, so the driver and operators never lose one. */
  version: number;
  updatedAt: string;
  endedAt: string | null;
}

export interface NewCampaign {
  aggregate: string;
  requestedBy: string;
  requestedAt: string;
  settings: CampaignSettings;
  hosts: HostProgress[];
}

/** The fields a write changes; absent fields stay. */
export interface CampaignPatch {
  state?: CampaignState;
  hosts?: HostProgress[];
  note?: string | null;
  taskId?: string | null;
  abortRequested?: boolean;
  endedAt?: string | null;
}

export interface CampaignFilter {
  state?: CampaignState;
  aggregate?: string;
}
