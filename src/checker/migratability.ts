// Guarantee 5, as a predicate of its own: why a server is out of live-migration scope.
// Written from formats.md alone, independently of the planner's filter, so the two can disagree
// and the checker catch it.
import type { Server } from '../model/snapshot.js';

/** Every reason the server must never be moved; empty when it may be. */
export function whyNotMigratable(server: Server): string[] {
  const reasons: string[] = [];
  if (server.status !== 'ACTIVE') reasons.push(`status is ${server.status}`);
  if (server.taskState !== null) reasons.push(`task state is ${server.taskState}`);
  if (server.metadata?.['aicerine:exclude'] === 'true') reasons.push('metadata aicerine:exclude is "true"');
  const held = server.metadata?.['aicerine:hold'];
  if (held !== undefined && held !== '') reasons.push(`held by Aicerine (metadata aicerine:hold: ${held})`);
  if (!server.sharedStorage) reasons.push('uses local storage');
  if (server.sriov === true) reasons.push('has SR-IOV ports');

  const specs = server.flavor.extraSpecs ?? {};
  const flavor = `flavor ${server.flavor.name}`;
  for (const [key, value] of Object.entries(specs)) {
    const blocking =
      key === 'pci_passthrough:alias' ||
      (key === 'hw:cpu_policy' && value === 'dedicated') ||
      key === 'hw:numa_nodes' ||
      key === 'hw:mem_page_size' ||
      key === 'resources:VGPU' ||
      key.startsWith('resources:PCI_') ||
      (key.startsWith('trait:') && key.toUpperCase().includes('SRIOV') && value === 'required');
    if (blocking) reasons.push(`${flavor} has ${key}=${value}`);
  }
  return reasons;
}
