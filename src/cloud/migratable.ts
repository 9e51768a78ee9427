// Flavor extra specs that tie a guest to its host's hardware (formats.md, guarantee 5):
// Aicerine never moves such servers, and `check` lists the flavors so nobody is surprised.

export function nonMigratableReasons(extraSpecs: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(extraSpecs)) {
    if (k === 'pci_passthrough:alias') out.push(`PCI passthrough (${k}=${v})`);
    else if (k === 'hw:cpu_policy' && v === 'dedicated') out.push('pinned CPUs (hw:cpu_policy=dedicated)');
    else if (k === 'hw:numa_nodes') out.push(`NUMA topology (hw:numa_nodes=${v})`);
    else if (k === 'hw:mem_page_size') out.push(`huge pages (hw:mem_page_size=${v})`);
    else if (k === 'resources:VGPU') out.push(`vGPU (${k}=${v})`);
    else if (k.startsWith('resources:PCI_')) out.push(`PCI device (${k}=${v})`);
    else if (k.startsWith('trait:') && /SRIOV/i.test(k) && v === 'required')
      out.push(`SR-IOV trait (${k}=required)`);
  }
  return out.sort();
}
