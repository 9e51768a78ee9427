// Read, change, compare-and-set: how the driver and the operators' requests write a campaign.
// A write that lost the race (the version moved) reads again and re-applies the change to what
// is there now, so a pause and a host's step never overwrite each other.

import type { CampaignPatch, CampaignRepository } from './ports.js';
import type { Campaign, HostProgress } from './types.js';

const ATTEMPTS = 20;

export class CampaignGoneError extends Error {
  constructor(id: string) {
    super(`no maintenance campaign ${id}`);
    this.name = 'CampaignGoneError';
  }
}

/**
 * Applies `change` to the campaign as it is now; `change` returns the patch, or null to write
 * nothing. Returns the campaign after the write (or as read, when nothing was written).
 */
export async function mutateCampaign(
  repo: CampaignRepository,
  id: string,
  now: () => string,
  change: (c: Campaign) => CampaignPatch | null,
): Promise<Campaign> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const c = await repo.get(id);
    if (c === null) throw new CampaignGoneError(id);
    const patch = change(c);
    if (patch === null) return c;
    const written = await repo.update(id, c.version, patch, now());
    if (written !== null) return written;
  }
  throw new Error(`maintenance campaign ${id} kept changing under ${ATTEMPTS} writes; try again`);
}

/** Changes one host's progress (null from `change`: nothing). */
export function mutateHost(
  repo: CampaignRepository,
  id: string,
  host: string,
  now: () => string,
  change: (h: HostProgress, c: Campaign) => Partial<HostProgress> | null,
): Promise<Campaign> {
  return mutateCampaign(repo, id, now, (c) => {
    const h = c.hosts.find((x) => x.host === host);
    if (h === undefined) return null;
    const patch = change(h, c);
    if (patch === null) return null;
    return { hosts: c.hosts.map((x) => (x.host === host ? { ...x, ...patch } : x)) };
  });
}
