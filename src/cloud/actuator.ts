// The actuator: the only way the service changes the cloud. It offers the writes the actuator
// credential exists for and nothing to read with, so code holding an Actuator cannot read the
// cloud through it (that does not type-check); its session also refuses at run time anything
// outside the actuator's calls in API_CALLS. Reads that a write depends on (a server's state,
// a provider's generation) are the reader's.
import type { TokenInfo } from './auth/keystone.js';
import type { CallStats } from './http/stats.js';
import type { NovaService } from './openstack/nova.js';
import type { InventoryWrites, PlacementInventory } from './openstack/placement.js';
import { type CloudSession, openSession, type SessionCredential, type SessionOptions } from './session.js';

export type ActuatorOptions = Omit<SessionOptions, 'credential' | 'prometheusUrl'> & {
  credential: Omit<SessionCredential, 'kind'>;
};

export class Actuator implements InventoryWrites {
  readonly kind = 'actuator' as const;

  private constructor(private readonly session: CloudSession) {}

  static async open(opts: ActuatorOptions): Promise<Actuator> {
    return new Actuator(await openSession({ ...opts, credential: { ...opts.credential, kind: 'actuator' } }));
  }

  /** Wraps a session already opened for the actuator role (its calls restricted to the actuator's). */
  static of(session: CloudSession): Actuator {
    if (session.credential?.kind !== 'actuator') {
      throw new Error(
        `an Actuator needs a session opened for the actuator credential, not ${session.credential?.kind ?? 'an unrestricted one'}`,
      );
    }
    return new Actuator(session);
  }

  /** The credential's label (its source, never its secret). */
  get label(): string {
    return this.session.credential?.label ?? 'actuator';
  }

  get stats(): CallStats {
    return this.session.stats;
  }

  /** Who the credential is (roles, application credential): authentication, not a read of the cloud. */
  whoami(): Promise<TokenInfo> {
    return this.session.token();
  }

  /**
   * Negotiates the compute microversion now (Nova's public version document), so that the first
   * write does not wait for that round trip.
   */
  async prepare(): Promise<void> {
    await this.session.nova.negotiate();
  }

  /** os-migrateLive to a named host, `block_migration: auto`, never forced. */
  liveMigrate(serverId: string, host: string): Promise<void> {
    return this.session.nova.liveMigrate(serverId, host);
  }

  /** DELETE /servers/{id}/migrations/{mid}: the server stays on its source. */
  abortMigration(serverId: string, migrationId: number): Promise<void> {
    return this.session.nova.abortMigration(serverId, migrationId);
  }

  forceCompleteMigration(serverId: string, migrationId: number): Promise<void> {
    return this.session.nova.forceCompleteMigration(serverId, migrationId);
  }

  /** Disables a compute service (evacuation, maintenance) or enables it again; by service UUID (2.53+). */
  setServiceStatus(serviceId: string, status: 'enabled' | 'disabled', reason?: string): Promise<NovaService> {
    return this.session.nova.setServiceStatus(serviceId, status, reason);
  }

  coldMigrate(serverId: string, host: string | null = null): Promise<void> {
    return this.session.nova.coldMigrate(serverId, host);
  }

  confirmResize(serverId: string): Promise<void> {
    return this.session.nova.confirmResize(serverId);
  }

  /** One inventory at the generation the reader read; 409 when it moved since. */
  putInventory(
    rpUuid: string,
    resourceClass: string,
    inventory: PlacementInventory,
    generation: number,
  ): Promise<PlacementInventory> {
    return this.session.placement.putInventory(rpUuid, resourceClass, inventory, generation);
  }
}
