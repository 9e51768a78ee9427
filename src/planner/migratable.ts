// Which servers may be live-migrated at all (formats.md guarantee 5). Returns the reason a
// server must stay, or null. Order matters only for the message: the first reason wins.
import type { Server } from '../model/snapshot.js';

const NON_MIGRATABLE_SPECS: ReadonlyArray<[test: (key: string, value: string) => boolean, why: string]> = [
  [(k) => k === 'pci_passthrough:alias', 'PCI passthrough'],
  [(k, v) => k === 'hw:cpu_policy' && v === 'dedicated', 'dedicated CPUs (hw:cpu_policy=dedicated)'],
  [(k) => k === 'hw:numa_nodes', 'NUMA topology (hw:numa_nodes)'],
  [(k) => k === 'hw:mem_page_size', 'huge pages (hw:mem_page_size)'],
  [(k) => k === 'resources:VGPU', 'a vGPU'],
  [(k) => k.startsWith('resources:PCI_'), 'a PCI device resource'],
  [
    (k, v) => k.startsWith('trait:') && k.toUpperCase().includes('SRIOV') && v === 'required',
    'an SR-IOV trait',
  ],
];

export function whyNotMigratable(server: Server, sourceUp: boolean): string | null {
  if (server.status !== 'ACTIVE') return `status is ${server.status}, not ACTIVE`;
  if (server.taskState !== null) return `task state ${server.taskState} in progress`;
  if (server.metadata?.['aicerine:exclude'] === 'true') return 'opted out (metadata aicerine:exclude=true)';
  const held = server.metadata?.['aicerine:hold'];
  if (held !== undefined && held !== '') return `held by Aicerine: ${held}`;
  if (!server.sharedStorage) return 'local storage (out of live-migration scope)';
  if (server.sriov === true) return 'SR-IOV port';
  for (const [key, value] of Object.entries(server.flavor.extraSpecs ?? {})) {
    for (const [test, why] of NON_MIGRATABLE_SPECS) {
      if (test(key, value)) return `flavor ${server.flavor.name} has ${why}`;
    }
  }
  if (!sourceUp) return 'its host is down (needs evacuate, not live migration)';
  return null;
}
