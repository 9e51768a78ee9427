// The campaign records, as the maintenance driver, service and operator writes use them: the port
// the store implements (src/store/maintenance.ts). Every write after the insert is a
// compare-and-set on `version`.

import type { Campaign, CampaignFilter, CampaignPatch, NewCampaign } from '../records/campaigns.js';
import type { Page, PageRequest } from '../store/paging.js';

export type { CampaignFilter, CampaignPatch, NewCampaign } from '../records/campaigns.js';

export interface CampaignRepository {
  create(campaign: NewCampaign): Promise<Campaign>;
  get(id: string): Promise<Campaign | null>;
  /** Newest first. */
  list(filter?: CampaignFilter, page?: PageRequest): Promise<Page<Campaign>>;
  /** RUNNING and PAUSED campaigns, oldest first. */
  unfinished(): Promise<Campaign[]>;
  /** Applies `patch` if the row is still at `version`; null (nothing written) when it moved. */
  update(id: string, version: number, patch: CampaignPatch, at: string): Promise<Campaign | null>;
}
