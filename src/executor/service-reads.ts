// The nova-compute services as pre-flight reads them: one listing of every service, shared by
// the pre-flights of the next few seconds, instead of two reads per move. Nova itself only
// notices a service going down after service_down_time (60 s by default) and the scheduler
// checks the destination again, so a listing a few seconds old decides nothing a fresh one would not.
import type { Clock, ComputeServiceView, ExecutorCloud } from './ports.js';

/** How long one listing answers pre-flights (virtual ms on a simulator's clock). */
export const SERVICE_LISTING_TTL_MS = 5000;

export class ComputeServiceReads {
  private listing: { at: number; byHost: Map<string, ComputeServiceView> } | null = null;
  private pending: Promise<Map<string, ComputeServiceView>> | null = null;

  constructor(
    private readonly cloud: Pick<ExecutorCloud, 'listComputeServices'>,
    private readonly clock: Clock,
    private readonly ttlMs = SERVICE_LISTING_TTL_MS,
  ) {}

  /** The host's nova-compute service from a listing at most ttlMs old; null when it has none. */
  async get(host: string): Promise<ComputeServiceView | null> {
    const byHost = await this.current();
    return byHost.get(host) ?? null;
  }

  /** Lists now unless a listing is young (a failure is left for the pre-flight to meet). */
  async warm(): Promise<void> {
    await this.current().catch(() => undefined);
  }

  private async current(): Promise<Map<string, ComputeServiceView>> {
    const now = this.clock.now();
    if (this.listing && now - this.listing.at < this.ttlMs) return this.listing.byHost;
    if (!this.pending) {
      const at = now;
      this.pending = this.cloud
        .listComputeServices()
        .then((list) => {
          const byHost = new Map(list.map((s) => [s.host, s]));
          this.listing = { at, byHost };
          return byHost;
        })
        .finally(() => {
          this.pending = null;
        });
    }
    return this.pending;
  }
}
