// Rolling maintenance of an aggregate (docs/maintenance.md): a campaign is one record with the
// hosts to take out one after another (or N at a time), each host's progress and timings, the
// settings it runs with, and what the operator asked (pause, abort, "this host is back").
// The driver (driver.ts, the task kind maintain-aggregate) moves the hosts through their steps;
// the API and the CLI only read it and set the operator's requests.

import type { Campaign, HostProgress } from '../records/campaigns.js';

// The records are declared below maintenance and the store both (src/records); the maintenance
// modules keep importing them from here.
export {
  CAMPAIGN_STATES,
  type Campaign,
  type CampaignSettings,
  type CampaignState,
  HOST_STATES,
  type HostProgress,
  type HostState,
  isFinalCampaignState,
  isFinalHostState,
  isInFlight,
  RETURN_WHEN,
  type ReturnWhen,
  type Unmovable,
} from '../records/campaigns.js';

export function newHostProgress(host: string): HostProgress {
  return {
    host,
    state: 'pending',
    note: null,
    evacuateTask: null,
    validateTask: null,
    startedAt: null,
    drainedAt: null,
    handedOverAt: null,
    returnedAt: null,
    endedAt: null,
    sawDownAt: null,
    returnedBy: null,
    moved: { live: 0, cold: 0 },
    cannotMove: [],
    handover: { webhook: null, command: null },
  };
}

/** The disabled reason a campaign gives its hosts: recognisable in Nova and in `openstack compute service list`. */
export function maintenanceReason(campaign: Pick<Campaign, 'id' | 'aggregate' | 'requestedBy'>): string {
  return `aicerine maintenance ${campaign.id} of ${campaign.aggregate} (requested by ${campaign.requestedBy})`;
}

/** The requestedBy of the tasks a campaign asks for. */
export function campaignActor(id: string): string {
  return `maintenance:${id}`;
}

/** The campaign whose driver asked for a task (its `requestedBy`), or null for anyone else's. */
export function campaignOfActor(requestedBy: string): string | null {
  const m = /^maintenance:(\d{1,15})$/.exec(requestedBy);
  return m?.[1] ?? null;
}
