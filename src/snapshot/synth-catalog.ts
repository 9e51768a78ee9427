// The hardware and flavor catalogue synthetic clusters are drawn from: a few host models and
// m1/c1/r1-like flavor families, weighted the way small-VM-heavy private clouds look.
import type { Flavor } from '../model/snapshot.js';

export interface HostModel {
  /** Share of hosts of this model. */
  weight: number;
  /** Physical cores relative to the other models. */
  coreWeight: number;
  /**
   * Memory capacity per unit of VCPU capacity, relative to the cluster's demand mix: 1 fits the
   * mix, above 1 is memory-rich. Kept within a factor of two, or placement strands one resource.
   */
  memShape: number;
  /** Disk capacity per unit of VCPU capacity, relative likewise. */
  diskShape: number;
  vcpuRatio: number;
  memRatio: number;
  /** Cores kept for the hypervisor (only on hosts with at least 16 cores). */
  reservedCores: number;
  /** reserved_host_memory_mb, capped at an eighth of the host's memory. */
  reservedMemMB: number;
}

export const HOST_MODELS: readonly HostModel[] = [
  // General purpose, CPU overcommitted 4:1.
  {
    weight: 0.4,
    coreWeight: 1,
    memShape: 1,
    diskShape: 1,
    vcpuRatio: 4,
    memRatio: 1,
    reservedCores: 0,
    reservedMemMB: 8192,
  },
  // Compute-dense, no CPU overcommit, some cores kept for OVS/DPDK.
  {
    weight: 0.2,
    coreWeight: 2,
    memShape: 0.8,
    diskShape: 0.7,
    vcpuRatio: 1,
    memRatio: 1,
    reservedCores: 2,
    reservedMemMB: 16384,
  },
  // Memory-rich, CPU overcommitted 2:1.
  {
    weight: 0.2,
    coreWeight: 1,
    memShape: 1.6,
    diskShape: 1.5,
    vcpuRatio: 2,
    memRatio: 1,
    reservedCores: 0,
    reservedMemMB: 16384,
  },
  // An older, smaller generation with memory overcommit.
  {
    weight: 0.2,
    coreWeight: 0.5,
    memShape: 1,
    diskShape: 1,
    vcpuRatio: 4,
    memRatio: 1.5,
    reservedCores: 0,
    reservedMemMB: 4096,
  },
];

export interface FlavorSpec {
  flavor: Flavor;
  weight: number;
}

const FAMILIES = [
  { name: 'm1', ramPerVcpuMB: 4096, weight: 0.55 },
  { name: 'c1', ramPerVcpuMB: 2048, weight: 0.25 },
  { name: 'r1', ramPerVcpuMB: 8192, weight: 0.2 },
] as const;

const SIZES = [
  { name: 'small', vcpus: 1, diskGB: 20, weight: 0.28 },
  { name: 'medium', vcpus: 2, diskGB: 40, weight: 0.3 },
  { name: 'large', vcpus: 4, diskGB: 80, weight: 0.22 },
  { name: 'xlarge', vcpus: 8, diskGB: 160, weight: 0.12 },
  { name: '2xlarge', vcpus: 16, diskGB: 160, weight: 0.06 },
  { name: '4xlarge', vcpus: 32, diskGB: 160, weight: 0.02 },
] as const;

/** Every flavor of the catalogue, smallest first within a family. */
export const FLAVOR_CATALOG: readonly FlavorSpec[] = FAMILIES.flatMap((fam) =>
  SIZES.map((size) => ({
    flavor: {
      name: `${fam.name}.${size.name}`,
      vcpus: size.vcpus,
      ramMB: size.vcpus * fam.ramPerVcpuMB,
      diskGB: size.diskGB,
      extraSpecs: {},
    },
    weight: fam.weight * size.weight,
  })),
);

/** Flavor extra specs that pin a server to its host (formats.md, guarantee 5). */
export const PINNING_EXTRA_SPECS: readonly { suffix: string; extraSpecs: Record<string, string> }[] = [
  { suffix: 'pinned', extraSpecs: { 'hw:cpu_policy': 'dedicated' } },
  { suffix: 'pci', extraSpecs: { 'pci_passthrough:alias': 'qat:1' } },
  { suffix: 'numa2', extraSpecs: { 'hw:numa_nodes': '2' } },
  { suffix: 'hugepages', extraSpecs: { 'hw:mem_page_size': 'large' } },
  { suffix: 'vgpu', extraSpecs: { 'resources:VGPU': '1' } },
];

export const TASK_STATES = ['image_snapshot', 'rebooting', 'resize_prep'] as const;
